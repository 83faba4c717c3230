import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureTestTls } from '../../../test/engines/simulators/common/tls';
import { ContentTransport, readSmall, type ContentTransportOptions } from '.';
import { readHandingBack } from '../../../test/support/lent-reader';

class Silence extends Error {}

/**
 * The transport against plain TCP servers that answer byte by byte as each test needs (so the test
 * sees what the client makes of the connection: a cut body, silence, the request line), and an
 * HTTPS server with the simulators' test CA.
 */
describe('ContentTransport', () => {
  let server: net.Server;
  let requests: string[];
  let answer: (socket: net.Socket, request: string) => void;

  beforeEach(async () => {
    requests = [];
    server = net.createServer((socket) => {
      socket.on('data', (d) => {
        requests.push(d.toString('latin1'));
        answer(socket, d.toString('latin1'));
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const transport = (options: Partial<ContentTransportOptions> = {}): ContentTransport => new ContentTransport({ idleTimeoutMs: 10_000, idleTimeout: () => new Silence(), ...options });
  const port = () => (server.address() as net.AddressInfo).port;
  const origin = () => `http://127.0.0.1:${port()}`;

  it('sends the path byte for byte with the headers, and parses status and headers split across reads', async () => {
    answer = (socket) => {
      socket.write('HTTP/1.1 206 Partial Content\r\nContent-Ra');
      setTimeout(() => socket.end('nge: bytes 0-9/100\r\nX-Twice: a\r\nx-twice: b\r\nContent-Length: 10\r\n\r\n0123456789'), 20);
    };
    const got = await transport().get({ secure: false, hostname: '127.0.0.1', port: port(), host: 'bucket.example:9000', path: '/a%20b/%2E%2E/./c?x=%2F' }, { range: 'bytes=0-9' });
    expect(got.status).toBe(206);
    expect(got.headers).toMatchObject({ 'content-range': 'bytes 0-9/100', 'x-twice': 'a, b' });
    expect(await readSmall(got.body)).toBe('0123456789');
    // No dot-segment normalisation, no re-encoding; the Host given.
    expect(requests[0].split('\r\n').slice(0, 2)).toEqual(['GET /a%20b/%2E%2E/./c?x=%2F HTTP/1.1', 'Host: bucket.example:9000']);
    expect(requests[0]).toMatch(/\r\nrange: bytes=0-9\r\n/i);
  });

  it('fails a body cut before its Content-Length instead of ending it short', async () => {
    answer = (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(600));
    const cut = await transport().get(new URL(`${origin()}/content`), {});
    await expect(readSmall(cut.body)).rejects.toThrow('the connection closed before the answer was complete');
    // In HTTP/1.0 too (CMIS, S3), where a body without Content-Length ends at the close.
    const cut10 = await transport({ http10: true }).get(new URL(`${origin()}/content`), {});
    await expect(readSmall(cut10.body)).rejects.toThrow('the connection closed before the answer was complete');
    answer = (socket) => socket.end('HTTP/1.0 200 OK\r\n\r\n' + 'y'.repeat(600));
    const byClose = await transport({ http10: true }).get(new URL(`${origin()}/content`), {});
    expect((await readSmall(byClose.body)).length).toBe(600);
    expect(requests.at(-1)!.split('\r\n')[0]).toBe('GET /content HTTP/1.0');
  });

  it('fails with the caller’s time-out error when the server stays silent, before the answer and within the body', async () => {
    answer = () => undefined;
    await expect(transport({ idleTimeoutMs: 200 }).get(new URL(origin()), {})).rejects.toBeInstanceOf(Silence);
    answer = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome');
    const silent = await transport({ idleTimeoutMs: 200 }).get(new URL(origin()), {});
    await expect(readSmall(silent.body)).rejects.toBeInstanceOf(Silence);
  });

  it('lets a reader destroy a body it no longer wants without an unhandled error', async () => {
    answer = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nfirst bytes');
    const { body } = await transport().get(new URL(origin()), {});
    // As sendBody reads: 'data' events, the body destroyed when the client goes away.
    body.on('data', () => body.destroy());
    await new Promise((resolve) => body.once('close', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.destroyed).toBe(true);
  });

  it('lends its reads: chunks handed back are read into again, chunks held keep their bytes', async () => {
    const BODY = 32 * 1024 * 1024;
    let sentHash = '';
    answer = (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY}\r\n\r\n`);
      const hash = createHash('sha256');
      let sent = 0;
      let counter = 0;
      const pump = (): void => {
        while (sent < BODY) {
          const chunk = Buffer.alloc(256 * 1024, counter++ % 251);
          sent += chunk.length;
          hash.update(chunk);
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        sentHash = hash.digest('hex');
        socket.end();
      };
      pump();
    };
    const { body } = await transport().get(new URL(origin()), {});
    const read = await readHandingBack(body);
    expect(read.received).toBe(BODY);
    expect(read.sha256).toBe(sentHash);
    // 32 MiB through a handful of 4 MiB slabs, not hundreds of fresh read buffers.
    expect(read.memories).toBeLessThanOrEqual(6);
  });

  it('stops reading from the server while the reader does not read, and resumes when it does', async () => {
    const BODY = 64 * 1024 * 1024;
    let sent = 0;
    answer = (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY}\r\n\r\n`);
      const pump = (): void => {
        while (sent < BODY) {
          const chunk = Buffer.alloc(256 * 1024, 7);
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    };
    const { body } = await transport().get(new URL(origin()), {});
    body.pause();
    let previous = -1;
    while (previous !== sent) {
      previous = sent;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(sent).toBeLessThan(BODY / 2);
    let received = 0;
    body.on('data', (chunk: Buffer) => (received += chunk.length));
    body.resume();
    await new Promise((resolve) => body.once('end', resolve));
    expect(received).toBe(BODY);
  });

  it('trusts the CAs it is given for https, and refuses a server signed by another', async () => {
    const tls = ensureTestTls(path.join(os.tmpdir(), 'content-gateway-test-tls'));
    const secure = https.createServer({ cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) }, (_req, res) => res.end('secret'));
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    const url = new URL(`https://127.0.0.1:${(secure.address() as net.AddressInfo).port}/`);
    try {
      const trusting = transport({ ca: [fs.readFileSync(tls.caFile, 'utf8')] });
      expect(await readSmall((await trusting.get(url, {})).body)).toBe('secret');
      await expect(transport().get(url, {})).rejects.toThrow(/certificate/);
      const lax = transport({ rejectUnauthorized: false });
      expect(await readSmall((await lax.get(url, {})).body)).toBe('secret');
    } finally {
      secure.closeAllConnections();
      await new Promise<void>((resolve) => secure.close(() => resolve()));
    }
  });
});
