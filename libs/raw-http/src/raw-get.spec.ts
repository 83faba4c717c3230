import { createHash } from 'node:crypto';
import * as net from 'node:net';
import { rawGet, RawHttpTimeout, readSmall } from '.';
import { readHandingBack } from '../test/lent-reader';

/**
 * rawGet against plain TCP servers that answer byte by byte as each test needs, so the test sees
 * what the client makes of the connection (headers split across reads, a cut body, silence).
 */
describe('rawGet', () => {
  let server: net.Server;
  let requests: string[];
  let answer: (socket: net.Socket) => void;

  beforeEach(async () => {
    requests = [];
    server = net.createServer((socket) => {
      socket.once('data', (d) => {
        requests.push(d.toString('latin1'));
        answer(socket);
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const url = (path = '/content?id=1') => new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}${path}`);

  it('sends an HTTP/1.0 GET with the path as given and the headers, and parses status and headers split across reads', async () => {
    answer = (socket) => {
      socket.write('HTTP/1.1 206 Partial Content\r\nContent-Ra');
      setTimeout(() => {
        socket.write('nge: bytes 0-9/100\r\nX-Twice: a\r\nx-twice: b\r\n\r\n0123');
        setTimeout(() => socket.end('456789'), 20);
      }, 20);
    };
    const port = (server.address() as net.AddressInfo).port;
    const got = await rawGet({ secure: false, hostname: '127.0.0.1', port, host: 'bucket.example:9000', path: '/a%20b/%2E%2E/c' }, { range: 'bytes=0-9' }, { timeoutMs: 10_000 });
    expect(got.status).toBe(206);
    expect(got.headers).toMatchObject({ 'content-range': 'bytes 0-9/100', 'x-twice': 'a, b' });
    expect(await readSmall(got.body)).toBe('0123456789');
    // Exactly the path given (no dot-segment normalisation), the Host given, the extra header.
    expect(requests[0].split('\r\n').slice(0, 2)).toEqual(['GET /a%20b/%2E%2E/c HTTP/1.0', 'Host: bucket.example:9000']);
    expect(requests[0]).toContain('\r\nrange: bytes=0-9\r\n');
  });

  it('with checkLength, fails a body cut before its Content-Length; without, ends it', async () => {
    answer = (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(600));
    const checked = await rawGet(url(), {}, { timeoutMs: 10_000, checkLength: true });
    await expect(readSmall(checked.body)).rejects.toThrow('closed after');
    const unchecked = await rawGet(url(), {}, { timeoutMs: 10_000 });
    expect((await readSmall(unchecked.body)).length).toBe(600);
    // A complete body passes the check.
    answer = (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' + 'y'.repeat(1000));
    const whole = await rawGet(url(), {}, { timeoutMs: 10_000, checkLength: true });
    expect((await readSmall(whole.body)).length).toBe(1000);
  });

  it('fails with the time-out error when the server stays silent, before the answer and within the body', async () => {
    answer = () => undefined;
    await expect(rawGet(url(), {}, { timeoutMs: 200 })).rejects.toBeInstanceOf(RawHttpTimeout);
    class Mine extends Error {}
    await expect(rawGet(url(), {}, { timeoutMs: 200, timeoutError: () => new Mine() })).rejects.toBeInstanceOf(Mine);
    answer = (socket) => socket.write('HTTP/1.1 200 OK\r\n\r\nsome');
    const silent = await rawGet(url(), {}, { timeoutMs: 200 });
    await expect(readSmall(silent.body)).rejects.toBeInstanceOf(RawHttpTimeout);
  });

  it('lends its reads: chunks handed back are read into again, chunks held keep their bytes', async () => {
    const BODY = 32 * 1024 * 1024;
    let sentHash = '';
    answer = (socket) => {
      socket.write('HTTP/1.0 200 OK\r\n\r\n');
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
    const { body } = await rawGet(url(), {}, { timeoutMs: 10_000 });
    const read = await readHandingBack(body);
    expect(read.received).toBe(BODY);
    expect(read.sha256).toBe(sentHash);
    expect(read.memories).toBeLessThanOrEqual(6);
  });
});
