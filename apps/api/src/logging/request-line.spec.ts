import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { requestLogger } from './logging.module';
import { prettyLine } from './pretty';

/** A real HTTP server behind the real request logger, its log lines captured. */
async function loggedServer(handle: (req: IncomingMessage & { user?: unknown }, res: ServerResponse) => void) {
  const lines: Record<string, unknown>[] = [];
  const root = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const middleware = requestLogger(root);
  const server: Server = createServer((req, res) => middleware(req, res, () => handle(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** The line of the request with this id, once the answer is done (it is written on the answer's end). */
  const lineOf = async (id: string) => {
    for (let i = 0; i < 100 && !lines.some((l) => l.reqId === id); i++) await new Promise((r) => setTimeout(r, 10));
    return lines.find((l) => l.reqId === id);
  };
  return { base, lineOf, close: () => new Promise((r) => server.close(r)) };
}

describe('the request line', () => {
  const body = JSON.stringify({ success: true, results: { hello: 'world' } });
  const answer = (req: IncomingMessage & { user?: unknown }, res: ServerResponse) => {
    if (req.headers['x-test-user']) req.user = { username: req.headers['x-test-user'], roles: ['user'] };
    res.setHeader('Set-Cookie', 'session=never-logged');
    res.setHeader('Content-Type', 'application/json');
    res.end(body);
  };

  it('names the authenticated user, method, path, status, bytes and duration, and nothing of the headers', async () => {
    const gw = await loggedServer(answer);
    try {
      const res = await fetch(`${gw.base}/api/repo/x/file?id=1&key=public-secret`, {
        headers: { 'X-Request-Id': 'line-1', 'X-Test-User': 'alice', Authorization: 'Basic c2VjcmV0OnNlY3JldA==', Cookie: 'c=1' },
      });
      const head = [...res.headers].map(([k, v]) => `${k}: ${v}\r\n`).join('');
      expect(await res.text()).toBe(body);
      const line = await gw.lineOf('line-1');
      expect(line).toEqual({
        level: 30,
        time: expect.any(Number),
        pid: process.pid,
        hostname: expect.any(String),
        reqId: 'line-1',
        user: 'alice',
        method: 'GET',
        path: '/api/repo/x/file',
        status: 200,
        // The status line and the head as sent (fetch shows the same headers), then the body.
        bytes: expect.any(Number),
        ms: expect.any(Number),
        msg: 'request completed',
      });
      expect(line!.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(body) + head.length);
      const text = JSON.stringify(line);
      for (const secret of ['c2VjcmV0', 'c=1', 'never-logged', 'public-secret', 'application/json']) expect(text).not.toContain(secret);
    } finally {
      await gw.close();
    }
  });

  it('has no user when none was authenticated, and counts each answer of a kept-alive connection apart', async () => {
    const gw = await loggedServer(answer);
    try {
      await (await fetch(gw.base + '/a', { headers: { 'X-Request-Id': 'anon-1' } })).text();
      await (await fetch(gw.base + '/a', { headers: { 'X-Request-Id': 'anon-2' } })).text();
      const [first, second] = [await gw.lineOf('anon-1'), await gw.lineOf('anon-2')];
      expect(first).not.toHaveProperty('user');
      expect(first).toMatchObject({ method: 'GET', path: '/a', status: 200 });
      // Same answer twice on one connection: the same count, not the connection's running total.
      expect(second!.bytes).toBe(first!.bytes);
    } finally {
      await gw.close();
    }
  });
});

describe('prettyLine', () => {
  const time = Date.UTC(2026, 0, 2, 10, 42, 7, 120);

  it('writes a request as one line: method, path, status, bytes, duration, user, request id', () => {
    const line = prettyLine({ level: 30, time, pid: 1, hostname: 'h', reqId: 'r1', user: 'alice', method: 'GET', path: '/api/x', status: 200, bytes: 412, ms: 9, msg: 'request completed' });
    expect(line).toBe('10:42:07.120Z INFO  GET /api/x 200 412 B 9 ms alice req=r1');
  });

  it('writes other entries with their context and extra fields, and an error with its stack', () => {
    expect(prettyLine({ level: 40, time, context: 'Jobs', msg: 'slow', jobId: 7 })).toBe('10:42:07.120Z WARN  [Jobs] slow jobId=7');
    const err = new Error('boom');
    const line = prettyLine({ level: 50, time, msg: 'Unhandled error', reqId: 'r2', err: { message: err.message, stack: err.stack } });
    expect(line.split('\n')[0]).toBe('10:42:07.120Z ERROR Unhandled error req=r2');
    expect(line.split('\n')[1]).toBe('Error: boom');
  });
});
