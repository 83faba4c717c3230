import type { IncomingHttpHeaders } from 'node:http';
import * as net from 'node:net';
import { Readable } from 'node:stream';
import * as tls from 'node:tls';
import { SlabPool, type Slab } from './slab-pool';

/**
 * A GET whose answer body is read into reusable memory and **lent** to the reader (README: why).
 *
 * The socket reads into windows of reusable slabs (net's `onread`, which TLS sockets honour too:
 * TLSWrap copies the decrypted bytes into the buffer the listener hands it instead of a fresh one),
 * the status line and headers are parsed here (HTTP/1.1 framing: Content-Length, chunked, or until
 * close), and the body goes out as views of those slabs. A reader that knows the protocol (apps/api's
 * response writer) hands each chunk back with `returnChunk` once written, and a slab is read into
 * again once every chunk cut from it came back. A reader that does not simply keeps the slab out of
 * the pool; it is then garbage like any buffer, a window at a time instead of 16 or 64 KiB.
 *
 * One connection per answer (`Connection: close`); over TLS the host's last session is offered for
 * resumption (`sessions`), so a download can cost an abbreviated handshake.
 */
export interface ChunkLender {
  returnChunk(chunk: Uint8Array): void;
}

/**
 * Read windows: TLS hands over at most one 16 KiB record per read; plain TCP reads up to a window, and
 * 64 KiB reads cost a CMIS download a third of its throughput against 1 MiB ones (README).
 */
const TLS_WINDOW_BYTES = 64 * 1024;
const PLAIN_WINDOW_BYTES = 1024 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;
/** The largest chunk handed on: consecutive reads are joined up to this (see `lend`). */
const MAX_CHUNK_BYTES = 256 * 1024;

/** Spare slabs kept for the next reads, process-wide: a download in flight holds one or two. */
const tlsPool = new SlabPool(1024 * 1024, 16);
const plainPool = new SlabPool(4 * PLAIN_WINDOW_BYTES, 8);
/** Where reads go once an answer is complete (discarded). */
const scratch = Buffer.allocUnsafeSlow(PLAIN_WINDOW_BYTES);

/** How many slabs wait in the pools (for tests). */
export function spareSlabCount(): number {
  return tlsPool.spareCount + plainPool.spareCount;
}

/** Where a GET goes, with the path exactly as it is sent (no normalisation, no re-encoding: a signed S3 path). */
export interface LentTarget {
  secure: boolean;
  /** Host name or address to connect to (an IPv6 address without brackets). */
  hostname: string;
  port: number;
  /** The Host header (host[:port]). */
  host: string;
  /** Path and query string as they go on the request line. */
  path: string;
}

export function targetOf(url: URL): LentTarget {
  const secure = url.protocol === 'https:';
  return { secure, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || (secure ? 443 : 80)), host: url.host, path: `${url.pathname}${url.search}` };
}

export interface LentGetOptions {
  target: LentTarget;
  headers: Record<string, string | number>;
  /**
   * Ask in HTTP/1.0: the server then sends the bytes themselves until it closes, never chunked
   * (servlet containers chunk large content for HTTP/1.1 clients: CMIS). Default HTTP/1.1.
   */
  http10?: boolean;
  rejectUnauthorized?: boolean;
  /**
   * Trust for https (the connector's CAs), made once per client: building it per connection (parsing
   * the ~140 public roots plus the connector's CA) cost ~50 ms per download.
   */
  secureContext?: tls.SecureContext;
  /** TLS sessions by host:port, for resumption; shared by the calls of one client. */
  sessions?: Map<string, Buffer>;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** The errors for a connect time-out and an idle time-out (what the caller's error mapper knows). */
  connectTimeout: () => Error;
  idleTimeout: () => Error;
  signal?: AbortSignal;
}

export interface LentAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: LentBody;
}

/** Sends the GET; resolves with status and headers once they are in, the body unread. */
export function lentGet(options: LentGetOptions): Promise<LentAnswer> {
  return new Promise<LentAnswer>((resolve, reject) => {
    new LentBody(options, resolve, reject);
  });
}

type Framing = { kind: 'length'; left: number } | { kind: 'close' } | { kind: 'chunked'; state: 'size' | 'data' | 'data-end' | 'trailer'; left: number; line: string };

export class LentBody extends Readable implements ChunkLender {
  readonly socket: net.Socket;
  private readonly pool: SlabPool;
  private readonly windowBytes: number;
  private slab: Slab | undefined;
  private readonly lent = new WeakMap<Uint8Array, Slab>();
  private head: Buffer | undefined = Buffer.alloc(0);
  private framing: Framing | undefined;
  private complete = false;
  private answered = false;
  /** Bytes read and not yet handed on: a range of one slab (counted in its `lent`). */
  private pending: { slab: Slab; start: number; end: number } | undefined;
  private flushScheduled = false;

  constructor(
    options: LentGetOptions,
    private readonly answer: (a: LentAnswer) => void,
    private readonly refuse: (e: Error) => void,
  ) {
    const { secure, hostname: host, port } = options.target;
    const windowBytes = secure ? TLS_WINDOW_BYTES : PLAIN_WINDOW_BYTES;
    // One window's worth: what pauses the socket while the reader is busy.
    super({ highWaterMark: windowBytes });
    this.windowBytes = windowBytes;
    this.pool = secure ? tlsPool : plainPool;
    const onread = { buffer: () => this.nextWindow(), callback: (bytes: number, window: Uint8Array) => this.received(bytes, window) };
    const key = `${host}:${port}`;
    if (secure) {
      const session = options.sessions?.get(key);
      const socket = tls.connect({
        host,
        port,
        servername: net.isIP(host) ? undefined : host,
        secureContext: options.secureContext,
        session,
        onread,
        ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      } as tls.ConnectionOptions);
      socket.on('session', (s: Buffer) => options.sessions?.set(key, s));
      this.socket = socket;
    } else {
      this.socket = net.connect({ host, port, onread });
    }
    const socket = this.socket;
    socket.setNoDelay(true);
    const connectTimer = setTimeout(() => this.fail(options.connectTimeout()), options.connectTimeoutMs);
    socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    socket.setTimeout(options.idleTimeoutMs, () => this.fail(options.idleTimeout()));
    socket.once('error', (e) => this.fail(e));
    socket.once('end', () => this.ended());
    socket.once('close', () => {
      clearTimeout(connectTimer);
      // Only now does no read target the current slab any more.
      if (this.slab) this.pool.retire(this.slab);
      this.slab = undefined;
      if (!this.complete) this.fail(new Error('the connection closed before the answer was complete'));
    });
    if (options.signal) {
      const signal = options.signal;
      const abort = (): void => this.fail(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }));
      if (signal.aborted) abort();
      else {
        signal.addEventListener('abort', abort, { once: true });
        socket.once('close', () => signal.removeEventListener('abort', abort));
      }
    }
    const lines = [`GET ${options.target.path} HTTP/1.${options.http10 ? 0 : 1}`, `Host: ${options.target.host}`, 'Connection: close'];
    for (const [name, value] of Object.entries(options.headers)) {
      if (name.toLowerCase() === 'host' || name.toLowerCase() === 'connection') continue;
      lines.push(`${name}: ${String(value).replace(/[\r\n]/g, '')}`);
    }
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  returnChunk(chunk: Uint8Array): void {
    const slab = this.lent.get(chunk);
    if (!slab) return;
    this.lent.delete(chunk);
    this.pool.returned(slab);
  }

  override _read(): void {
    if (!this.complete) this.socket.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }

  private fail(e: Error): void {
    if (!this.answered) {
      this.answered = true;
      this.complete = true;
      this.socket.destroy();
      this.refuse(e);
      return;
    }
    if (!this.complete) this.destroy(e);
    else this.socket.destroy();
  }

  private nextWindow(): Uint8Array {
    // Done (net asks once more after the last read): nothing read now is kept, and no slab is held for it.
    if (this.complete) return scratch;
    if (!this.slab || this.slab.bytes.length - this.slab.used < this.windowBytes) {
      if (this.slab) this.pool.retire(this.slab);
      this.slab = this.pool.take();
    }
    return this.slab.bytes.subarray(this.slab.used, this.slab.used + this.windowBytes);
  }

  /** net calls this with the window it last got from nextWindow, before asking for the next one. */
  private received(bytes: number, window: Uint8Array): boolean {
    if (this.complete || window === scratch) return true;
    const slab = this.slab as Slab;
    slab.used += bytes;
    let data = Buffer.from(window.buffer, window.byteOffset, bytes);
    if (this.head) {
      const rest = this.readHead(data);
      if (!rest) return true;
      data = rest;
    }
    this.body(data, slab);
    return !this.complete;
  }

  /** Collects the status line and headers; what follows them in `data`, once they are complete. */
  private readHead(data: Buffer): Buffer | undefined {
    const before = this.head!.length;
    const head = Buffer.concat([this.head!, data]);
    const at = head.indexOf('\r\n\r\n');
    if (at < 0) {
      if (head.length > MAX_HEAD_BYTES) this.fail(new Error('the answer headers are too large'));
      else this.head = head;
      return undefined;
    }
    this.head = undefined;
    const lines = head.subarray(0, at).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!m) {
      this.fail(new Error(`not an HTTP answer: ${lines[0].slice(0, 80)}`));
      return undefined;
    }
    const status = Number(m[1]);
    if (status >= 100 && status < 200) {
      // An interim answer (100 Continue): the real one follows.
      this.head = Buffer.alloc(0);
      return this.readHead(data.subarray(at + 4 - before));
    }
    const headers: IncomingHttpHeaders = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const known = headers[name];
      headers[name] = known === undefined ? value : `${String(known)}, ${value}`;
    }
    const encoding = String(headers['transfer-encoding'] ?? '').toLowerCase();
    if (status === 204 || status === 304) this.framing = { kind: 'length', left: 0 };
    else if (encoding.includes('chunked')) this.framing = { kind: 'chunked', state: 'size', left: 0, line: '' };
    else if (headers['content-length'] !== undefined && /^\d+$/.test(String(headers['content-length']))) this.framing = { kind: 'length', left: Number(headers['content-length']) };
    else this.framing = { kind: 'close' };
    this.answered = true;
    this.answer({ status, headers, body: this });
    if (this.framing.kind === 'length' && this.framing.left === 0) this.finish();
    return data.subarray(at + 4 - before);
  }

  private body(data: Buffer, slab: Slab): void {
    const framing = this.framing!;
    if (framing.kind === 'close') return this.lend(data, slab);
    if (framing.kind === 'length') {
      const n = Math.min(framing.left, data.length);
      if (n > 0) this.lend(data.subarray(0, n), slab);
      framing.left -= n;
      if (framing.left === 0) this.finish();
      return;
    }
    let i = 0;
    while (i < data.length && !this.complete) {
      if (framing.state === 'data') {
        const n = Math.min(framing.left, data.length - i);
        this.lend(data.subarray(i, i + n), slab);
        i += n;
        framing.left -= n;
        if (framing.left === 0) framing.state = 'data-end';
        continue;
      }
      const byte = data[i++];
      if (byte !== 0x0a) {
        if (framing.line.length > 1024) return this.fail(new Error('a chunk header of the answer is too long'));
        if (byte !== 0x0d) framing.line += String.fromCharCode(byte);
        continue;
      }
      const line = framing.line;
      framing.line = '';
      if (framing.state === 'data-end') {
        framing.state = 'size';
      } else if (framing.state === 'size') {
        const size = parseInt(line.split(';', 1)[0].trim(), 16);
        if (!Number.isFinite(size) || size < 0) return this.fail(new Error('the answer has a malformed chunk size'));
        if (size === 0) framing.state = 'trailer';
        else {
          framing.state = 'data';
          framing.left = size;
        }
      } else if (line === '') {
        this.finish();
      }
    }
  }

  /**
   * Queues `chunk` to be lent. Reads that follow each other in a slab are handed on as one chunk, at the
   * latest when the event loop has run its pending reads (setImmediate) or at MAX_CHUNK_BYTES: TLS
   * delivers one 16 KiB record per read, and a write to the client per record cost the gateway a
   * syscall and a round of stream events each (bench/graph-download).
   */
  private lend(chunk: Buffer, slab: Slab): void {
    if (chunk.length === 0) return;
    const pending = this.pending;
    if (pending && pending.slab === slab && pending.end === chunk.byteOffset && chunk.buffer === slab.bytes.buffer) {
      pending.end += chunk.length;
    } else {
      this.flush();
      slab.lent++;
      this.pending = { slab, start: chunk.byteOffset, end: chunk.byteOffset + chunk.length };
    }
    if (this.pending!.end - this.pending!.start >= MAX_CHUNK_BYTES) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    if (this.destroyed) return;
    const chunk = Buffer.from(pending.slab.bytes.buffer, pending.start, pending.end - pending.start);
    this.lent.set(chunk, pending.slab);
    if (!this.push(chunk)) this.socket.pause();
  }

  /** The whole answer is in: the stream ends, the connection is closed (it was asked to be). */
  private finish(): void {
    if (this.complete) return;
    this.complete = true;
    this.socket.setTimeout(0);
    this.flush();
    this.push(null);
    this.socket.destroy();
    // No read lands in the slab any more: it is spare as soon as its chunks are back.
    if (this.slab) this.pool.retire(this.slab);
    this.slab = undefined;
  }

  /** The server closed its side: the end of a body framed by the connection, else too early. */
  private ended(): void {
    if (this.answered && this.framing?.kind === 'close') return this.finish();
    if (!this.complete) this.fail(new Error('the connection closed before the answer was complete'));
  }
}
