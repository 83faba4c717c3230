import { createHash } from 'node:crypto';
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { spareSlabCount, type ChunkLender } from '@gateway/content-transport';
import { MicrosoftHttpClient, readText, WRITE_SLICE_BYTES, type TokenSource } from './https-client';

/** A real local HTTP server whose answers each test scripts, and a record of what reached it. */
class ScriptedServer {
  server: Server;
  seen: { method: string; url: string; auth?: string; body: string }[] = [];
  answers: ((req: IncomingMessage, res: ServerResponse, body: string) => void)[] = [];
  url = '';

  async start(): Promise<void> {
    this.server = createServer(async (req, res) => {
      const body = await readText(req, 1 << 20);
      this.seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      const next = this.answers.shift() ?? ((_q, s) => s.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      next(req, res, body);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

const throttle = (status: number, retryAfter?: string) => (_q: IncomingMessage, res: ServerResponse) =>
  res
    .writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) })
    .end('{"error":{"code":"activityLimitReached","message":"The request has been throttled"}}');

class CountingTokens implements TokenSource {
  issued = 0;
  invalidations = 0;
  private current?: string;
  async getToken(): Promise<string> {
    this.current ??= `token-${++this.issued}`;
    return this.current;
  }
  invalidate(): void {
    this.invalidations++;
    this.current = undefined;
  }
}

describe('MicrosoftHttpClient', () => {
  const srv = new ScriptedServer();
  let slept: number[];
  let tokens: CountingTokens;
  const client = (extra: Partial<ConstructorParameters<typeof MicrosoftHttpClient>[0]> = {}) =>
    new MicrosoftHttpClient({ service: 'SharePoint', connectorType: 'sharepoint', tokens, sleep: async (ms) => void slept.push(ms), ...extra });

  beforeAll(() => srv.start());
  afterAll(() => new Promise<void>((r) => srv.server.close(() => r())));
  beforeEach(() => {
    srv.seen = [];
    srv.answers = [];
    slept = [];
    tokens = new CountingTokens();
  });

  it('waits the advised Retry-After on 429 and 503, then succeeds with the same body', async () => {
    srv.answers.push(throttle(429, '2'), throttle(503, '1'));
    const { data } = await client().json({ method: 'POST', url: `${srv.url}/_api/x`, body: 'payload' });
    expect(data).toEqual({ ok: true });
    expect(slept).toEqual([2000, 1000]);
    expect(srv.seen.map((s) => s.body)).toEqual(['payload', 'payload', 'payload']);
  });

  it('gives up after maxRetries with a 503-kind error carrying the Retry-After to pass on', async () => {
    srv.answers.push(throttle(429, '3'), throttle(429, '3'), throttle(429, '3'));
    await expect(client({ maxRetries: 2 }).request({ method: 'GET', url: `${srv.url}/a` })).rejects.toMatchObject({
      kind: 'upstream_throttled',
      retryAfterSeconds: 3,
    });
    expect(srv.seen).toHaveLength(3);
    expect(slept).toEqual([3000, 3000]);
  });

  it('sends a one-shot stream once: a throttled answer to it is not retried', async () => {
    srv.answers.push(throttle(429, '1'));
    await expect(client().request({ method: 'PUT', url: `${srv.url}/up`, body: Readable.from([Buffer.from('abc')]) })).rejects.toMatchObject({
      kind: 'upstream_throttled',
    });
    expect(srv.seen).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it('replays a stream factory on retry', async () => {
    srv.answers.push(throttle(503, '1'));
    await client().request({ method: 'PUT', url: `${srv.url}/up`, body: () => Readable.from([Buffer.from('ab'), Buffer.from('cd')]) });
    expect(srv.seen.map((s) => s.body)).toEqual(['abcd', 'abcd']);
  });

  it('refreshes the token once on 401 and retries; a second 401 is an upstream error', async () => {
    srv.answers.push((_q, res) => res.writeHead(401).end());
    await client().request({ method: 'GET', url: `${srv.url}/a` });
    expect(srv.seen.map((s) => s.auth)).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(tokens.invalidations).toBe(1);

    srv.seen = [];
    srv.answers.push((_q, res) => res.writeHead(401).end(), (_q, res) => res.writeHead(401).end());
    await expect(client().request({ method: 'GET', url: `${srv.url}/a` })).rejects.toMatchObject({ kind: 'upstream_error', details: { upstreamStatus: 401 } });
    expect(srv.seen).toHaveLength(2);
  });

  it('sends no Authorization when auth is off (pre-authenticated URLs)', async () => {
    await client().request({ method: 'GET', url: `${srv.url}/download?token=x`, auth: false });
    expect(srv.seen[0].auth).toBeUndefined();
  });

  it('maps service error bodies and hands back statuses the caller accepts', async () => {
    const notFound = (_q: IncomingMessage, res: ServerResponse) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"itemNotFound","message":"The resource could not be found."}}');
    srv.answers.push(notFound, notFound);
    await expect(client().request({ method: 'GET', url: `${srv.url}/x`, errorContext: { id: 'doc-1' } })).rejects.toMatchObject({
      kind: 'not_found',
      details: { id: 'doc-1' },
    });
    const res = await client().request({ method: 'GET', url: `${srv.url}/x`, accept: [404] });
    expect(res.status).toBe(404);
  });

  it('reports an unreachable service as unavailable and a silent one as a time-out', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(client().request({ method: 'GET', url: `http://127.0.0.1:${port}/` })).rejects.toMatchObject({ kind: 'upstream_unavailable' });

    srv.answers.push((_q, res) => res.writeHead(200, { 'content-length': '10' }).write('12345')); // never ends
    const res = await client({ idleTimeoutMs: 200 }).request({ method: 'GET', url: `${srv.url}/slow` });
    await expect(readText(res.body, 100)).rejects.toMatchObject({ kind: 'upstream_timeout' });
  });

  it('hands a Buffer body (of any length, a slice or not) to the socket in slices, each after the one before drained', async () => {
    // A server that reads the body slowly, so the socket's buffer fills and drain matters.
    const received: string[] = [];
    const slow = createServer((req, res) => {
      const hash = createHash('sha256');
      req.on('data', (d: Buffer) => {
        hash.update(d);
        req.pause();
        setImmediate(() => req.resume());
      });
      req.on('end', () => {
        received.push(hash.digest('hex'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    // Every write the client's socket is asked to do, and how much it held unsent at that moment.
    const writes: { bytes: number; pending: number }[] = [];
    const agent = new Agent({ keepAlive: false });
    const create = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket;
    (agent as unknown as { createConnection: (...args: unknown[]) => Socket }).createConnection = (...args: unknown[]) => {
      const socket = create(...args);
      const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
      (socket as unknown as { write: (...a: unknown[]) => boolean }).write = (chunk: unknown, ...rest: unknown[]) => {
        if (typeof chunk !== 'string') writes.push({ bytes: (chunk as Buffer).length, pending: socket.writableLength });
        return write(chunk, ...rest);
      };
      return socket;
    };
    const body = Buffer.alloc(24 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
    // A view that starts off a slice boundary and is not a multiple of the slice size.
    const tail = body.subarray(100);
    const expected = createHash('sha256').update(body).digest('hex');
    const expectedTail = createHash('sha256').update(tail).digest('hex');
    try {
      const c = client({ agents: { http: agent, https: new HttpsAgent() } });
      await c.json({ method: 'PUT', url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/one`, body });
      await c.json({ method: 'PUT', url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/tail`, body: tail });
    } finally {
      await new Promise<void>((r) => slow.close(() => r()));
    }
    expect(received).toEqual([expected, expectedTail]);
    expect(writes.reduce((n, w) => n + w.bytes, 0)).toBe(body.length + tail.length);
    expect(Math.max(...writes.map((w) => w.bytes))).toBeLessThanOrEqual(WRITE_SLICE_BYTES);
    // Honouring drain: a slice is never queued behind another whole slice still unsent.
    expect(Math.max(...writes.map((w) => w.pending))).toBeLessThan(WRITE_SLICE_BYTES);
  });

  describe('content downloads (README: downloads)', () => {
    /** A raw TCP server answering every connection with `answer` (framing written by hand), then closing. */
    async function rawServer(answer: Buffer | ((socket: Socket) => void)): Promise<{ url: string; close: () => Promise<void> }> {
      const server = createNetServer((socket) => {
        socket.once('data', () => {
          if (typeof answer === 'function') return answer(socket);
          socket.end(answer);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/content`, close: () => new Promise<void>((r) => server.close(() => r())) };
    }

    /** Reads as apps/api's sendBody does: 'data' events (flowing mode hands each chunk on as pushed; read() may join them). */
    function readAll(body: Readable, giveBack = false): Promise<{ bytes: Buffer; memory: Set<ArrayBufferLike> }> {
      const parts: Buffer[] = [];
      const memory = new Set<ArrayBufferLike>();
      return new Promise((resolve, reject) => {
        body.on('data', (chunk: Buffer) => {
          parts.push(Buffer.from(chunk));
          memory.add(chunk.buffer);
          if (giveBack) (body as Readable & ChunkLender).returnChunk(chunk);
        });
        body.once('end', () => resolve({ bytes: Buffer.concat(parts), memory }));
        body.once('error', reject);
      });
    }

    const content = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < content.length; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);

    it('reads a download into reused memory once its chunks come back, instead of a fresh buffer per read', async () => {
      const sink = createServer((_req, res) => res.writeHead(200, { 'content-length': content.length }).end(content));
      await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/content`;
      try {
        const first = await client().request({ method: 'GET', url, content: true });
        expect(first.headers['content-length']).toBe(String(content.length));
        const one = await readAll(first.body, true);
        expect(one.bytes.equals(content)).toBe(true);
        // 5 MiB in a few slabs, not thousands of read buffers.
        expect(one.memory.size).toBeLessThanOrEqual(7);
        expect(spareSlabCount()).toBeGreaterThan(0);
        const second = await readAll((await client().request({ method: 'GET', url, content: true })).body, true);
        expect(second.bytes.equals(content)).toBe(true);
        // The second download was read into the first one's memory.
        expect([...second.memory].some((m) => one.memory.has(m))).toBe(true);
      } finally {
        await new Promise<void>((r) => sink.close(() => r()));
      }
    });

    it('decodes a chunked answer (extensions and trailers included) and one framed by the connection closing', async () => {
      const a = content.subarray(0, 300_000);
      const b = content.subarray(300_000, 1_000_000);
      const chunked = Buffer.concat([
        Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n'),
        Buffer.from(`${a.length.toString(16)};name=x\r\n`),
        a,
        Buffer.from(`\r\n${b.length.toString(16).toUpperCase()}\r\n`),
        b,
        Buffer.from('\r\n0\r\nX-Checksum: abc\r\n\r\n'),
      ]);
      const byClose = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n'), b]);
      for (const [answer, expected] of [
        [chunked, content.subarray(0, 1_000_000)],
        [byClose, b],
      ] as const) {
        const server = await rawServer(answer);
        try {
          const res = await client().request({ method: 'GET', url: server.url, content: true });
          expect(res.status).toBe(200);
          expect((await readAll(res.body)).bytes.equals(expected)).toBe(true);
        } finally {
          await server.close();
        }
      }
    });

    it('fails the body when the connection closes before Content-Length bytes came', async () => {
      const server = await rawServer((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
        socket.end(Buffer.alloc(400, 1));
      });
      try {
        const res = await client().request({ method: 'GET', url: server.url, content: true });
        await expect(readAll(res.body)).rejects.toThrow(/closed before the answer was complete/);
      } finally {
        await server.close();
      }
    });

    it('retries a throttled download and maps service errors as for any call', async () => {
      const s = new ScriptedServer();
      await s.start();
      s.answers.push(throttle(429, '0'), (_q, res) => res.writeHead(200, { 'content-length': 5 }).end('bytes'));
      s.answers.push((_q, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"itemNotFound","message":"gone"}}'));
      try {
        const ok = await client().request({ method: 'GET', url: `${s.url}/a`, content: true });
        expect((await readAll(ok.body)).bytes.toString()).toBe('bytes');
        await expect(client().request({ method: 'GET', url: `${s.url}/b`, content: true, errorContext: { id: 'b' } })).rejects.toThrow("Item 'b' not found");
        expect(s.seen.map((x) => x.url)).toEqual(['/a', '/a', '/b']);
      } finally {
        await new Promise<void>((r) => s.server.close(() => r()));
      }
    });
  });
});
