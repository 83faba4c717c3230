import { execFile } from 'node:child_process';
import * as net from 'node:net';
import { promisify } from 'node:util';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { listen } from '../support/files';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

const run = promisify(execFile);

/**
 * Issue 39: an oversized request line or headers is answered with a complete 414 or 431 in the
 * gateway's error format, which curl, Node's fetch and a raw socket all read, whether the request
 * reaches the gateway directly (Node's parser, MAX_REQUEST_HEAD_BYTES = 64 KiB: common/client-errors.ts)
 * or through the shipped docker/nginx.conf (large_client_header_buffers, its error_page answers).
 */
describe('Oversized request heads: 414/431, complete and in the error format', () => {
  let gw: TestGateway;
  let nginx: NginxHandle;
  let direct: string;
  const aclPath = (aclIdLength: number) => `/gateway/api/repo/fs/acls?id=x&aclId=${'a'.repeat(aclIdLength)}`;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1' } });
    direct = await listen(gw);
    nginx = await startNginx({ upstreams: [{ port: Number(new URL(direct).port) }] });
  });
  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
  });

  /** The whole answer of one request written on a raw socket, read until the server closes; a reset fails. */
  function rawExchange(base: string, request: Buffer): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('end', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        const split = text.indexOf('\r\n\r\n');
        const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
        const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
        socket.end();
      });
      socket.write(request);
    });
  }

  function expectErrorBody(body: string, status: number, code: string): void {
    const parsed = JSON.parse(body);
    expect([status, parsed.success, parsed.error.code]).toEqual([status, false, code]);
    expect(parsed.message).toMatch(/KiB/);
  }

  describe('directly', () => {
    it('a 30 KB aclId (under the 64 KiB head limit) reaches the gateway, which names the parameter', async () => {
      const res = await fetch(`${direct}${aclPath(30_000)}`, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { parameter: string } }).error.parameter).toBe('aclId');
    });

    it('a request line over 64 KiB: 431 with a JSON body of its declared length, read by fetch, curl and a raw socket', async () => {
      const url = `${direct}${aclPath(70_000)}`;
      const res = await fetch(url, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(431);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expectErrorBody(await res.text(), 431, 'REQUEST_HEAD_TOO_LARGE');

      const curl = await run('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', '-u', 'admin:x', url], { maxBuffer: 1 << 20 });
      const lines = curl.stdout.split('\n');
      expect(lines.pop()).toBe('431');
      expectErrorBody(lines.join('\n'), 431, 'REQUEST_HEAD_TOO_LARGE');

      const raw = await rawExchange(direct, Buffer.from(`GET ${aclPath(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
      expect(raw.status).toBe(431);
      expect(raw.headers['transfer-encoding']).toBeUndefined();
      expect(Buffer.byteLength(raw.body)).toBe(Number(raw.headers['content-length']));
      expectErrorBody(raw.body, 431, 'REQUEST_HEAD_TOO_LARGE');
    });

    it('headers over 64 KiB followed by a body of 4 MB: the client sends it all and still reads the 431, no reset', async () => {
      const head = `POST /gateway/api/repo/fs/file HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(100_000)}\r\nContent-Length: 4000000\r\n\r\n`;
      const raw = await rawExchange(direct, Buffer.concat([Buffer.from(head), Buffer.alloc(4_000_000, 1)]));
      expect(raw.status).toBe(431);
      expectErrorBody(raw.body, 431, 'REQUEST_HEAD_TOO_LARGE');

      const res = await fetch(`${direct}/gateway/api/repo/fs/file`, { method: 'POST', headers: { 'X-Padding': 'p'.repeat(100_000) }, body: Buffer.alloc(4_000_000, 1) });
      expect(res.status).toBe(431);
      expectErrorBody(await res.text(), 431, 'REQUEST_HEAD_TOO_LARGE');
    });

    it('a malformed head is a 400 in the error format', async () => {
      const raw = await rawExchange(direct, Buffer.from('GET /gateway/api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
      expect(raw.status).toBe(400);
      expect(JSON.parse(raw.body).error.code).toBe('MALFORMED_REQUEST');
    });

    it('an oversized head pipelined behind a request: that answer whole first, then the 431', async () => {
      const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const raw = await rawExchange(direct, Buffer.from(request('/gateway/api/health') + request(aclPath(70_000))));
      expect(raw.status).toBe(200);
      const first = Number(raw.headers['content-length']);
      expect(raw.body.slice(0, first)).toContain('"status":"ok"');
      const second = raw.body.slice(first);
      expect(second).toMatch(/^HTTP\/1\.1 431 /);
      expectErrorBody(second.slice(second.indexOf('\r\n\r\n') + 4), 431, 'REQUEST_HEAD_TOO_LARGE');
    });
  });

  describe('through nginx (docker/nginx.conf)', () => {
    it('a 40 KB query string reaches the gateway, as it does directly', async () => {
      const res = await fetch(`${nginx.url}${aclPath(40_000)}`, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { parameter: string } }).error.parameter).toBe('aclId');
    });

    it('a request line over 64 KiB: 414 in the error format, read by fetch and curl', async () => {
      const url = `${nginx.url}${aclPath(70_000)}`;
      const res = await fetch(url, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(414);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expectErrorBody(await res.text(), 414, 'URI_TOO_LONG');

      const curl = await run('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', url], { maxBuffer: 1 << 20 });
      const lines = curl.stdout.split('\n');
      expect(lines.pop()).toBe('414');
      expectErrorBody(lines.join('\n'), 414, 'URI_TOO_LONG');
    });

    it('a header over 64 KiB: 431 in the error format; a head nginx passes but the gateway finds too large: the gateway 431', async () => {
      const res = await fetch(`${nginx.url}/gateway/api/health`, { headers: { 'X-Padding': 'p'.repeat(70_000) } });
      expect(res.status).toBe(431);
      expectErrorBody(await res.text(), 431, 'REQUEST_HEAD_TOO_LARGE');

      // Two headers of 40 KB each fit nginx's buffers (64 KiB a line) but not the gateway's 64 KiB head.
      const both = await fetch(`${nginx.url}/gateway/api/health`, { headers: { 'X-Padding-1': 'p'.repeat(40_000), 'X-Padding-2': 'q'.repeat(40_000) } });
      expect(both.status).toBe(431);
      expectErrorBody(await both.text(), 431, 'REQUEST_HEAD_TOO_LARGE');
    });
  });
});
