import * as net from 'node:net';
import type { Readable } from 'node:stream';
import * as tls from 'node:tls';
import { LentReadConnection } from './lent-reads';

/**
 * An HTTP/1.0 GET on a connection of its own, for content downloads: the server answers with the
 * bytes themselves until it closes (no chunked framing to decode), and over plain HTTP the body's
 * reads are lent (lent-reads.ts). Servlet containers answer large content chunked to HTTP/1.1
 * clients, and decoding that framing (fetch, or node:http with its thousands of small chunks) cost
 * two thirds of the throughput of a 100 MB CMIS download; node:http's 64 KiB reads into fresh buffers
 * cost the gateway about half of an S3 download's (README.md). The price is one connection per
 * download, which content downloads can afford.
 */

/** Where a GET goes, with the path exactly as it is sent (no normalisation, no re-encoding). */
export interface RawTarget {
  secure: boolean;
  /** Host name or address to connect to (an IPv6 address without brackets). */
  hostname: string;
  port: number;
  /** The Host header (host[:port]). */
  host: string;
  /** Path and query string as they go on the request line. */
  path: string;
}

export interface RawGetOptions {
  /** Longest silence of the server: before the answer, and between two reads of its body. */
  timeoutMs: number;
  /** The error a time-out fails the request (or the body) with; default RawHttpTimeout. */
  timeoutError?: (ms: number) => Error;
  /**
   * When the answer announces a Content-Length, a connection that closes before that many bytes
   * fails the body instead of ending it (plain HTTP only: a TLS body ends at the close, as before).
   */
  checkLength?: boolean;
}

export interface RawAnswer {
  status: number;
  /** Header names in lower case; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** The connection itself, positioned at the first byte of the body; the body ends when the server closes. */
  body: Readable;
}

/** The default time-out error (name and code as other HTTP clients' time-outs, for error mappers). */
export class RawHttpTimeout extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'ETIMEDOUT';
  constructor(readonly ms: number) {
    super(`The server did not answer within ${ms} ms`);
  }
}

/** Headers of an answer larger than this are refused; error bodies are read up to this much. */
export const MAX_HEADER_BYTES = 64 * 1024;

export function targetOf(url: URL): RawTarget {
  const secure = url.protocol === 'https:';
  return {
    secure,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || (secure ? 443 : 80)),
    host: url.host,
    path: `${url.pathname}${url.search}`,
  };
}

/**
 * Status and headers are parsed here, the socket is the body. The time-out is an idle time-out,
 * before the answer and between chunks of the body alike.
 */
export function rawGet(to: URL | RawTarget, headers: Record<string, string>, options: RawGetOptions): Promise<RawAnswer> {
  const target = to instanceof URL ? targetOf(to) : to;
  const { timeoutMs } = options;
  const timeoutError = options.timeoutError ?? ((ms: number) => new RawHttpTimeout(ms));
  const { socket, incoming } = target.secure ? tlsConnection(target.hostname, target.port) : plainConnection(target.hostname, target.port);
  const request =
    `GET ${target.path} HTTP/1.0\r\nHost: ${target.host}\r\nConnection: close\r\nAccept: */*\r\n` +
    Object.entries(headers).map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, '')}\r\n`).join('') +
    '\r\n';
  return new Promise<RawAnswer>((resolve, reject) => {
    let head: Buffer = Buffer.alloc(0);
    const fail = (e: unknown) => {
      socket.destroy();
      reject(e);
    };
    socket.setTimeout(timeoutMs, () => socket.destroy(timeoutError(timeoutMs)));
    socket.once(target.secure ? 'secureConnect' : 'connect', () => socket.write(request));
    incoming.on('error', fail);
    incoming.once('end', () => fail(new Error('the connection closed before the answer was complete')));
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = incoming.read() as Buffer | null) !== null) {
        if (head.length === 0) head = chunk;
        else {
          const before = head;
          head = Buffer.concat([before, chunk]);
          // Copied: their read buffers can be read into again.
          if (incoming instanceof LentReadConnection) {
            incoming.returnChunk(before);
            incoming.returnChunk(chunk);
          }
        }
        const at = head.indexOf('\r\n\r\n');
        if (at < 0) {
          if (head.length > MAX_HEADER_BYTES) return fail(new Error('the answer headers are too large'));
          continue;
        }
        incoming.off('readable', onReadable);
        incoming.off('error', fail);
        incoming.removeAllListeners('end');
        const rest = head.subarray(at + 4);
        if (incoming instanceof LentReadConnection) {
          // The body's first bytes are lent in place of the read they came in.
          if (head === chunk && rest.length > 0) incoming.relend(chunk, rest);
          else incoming.returnChunk(chunk);
        }
        if (rest.length > 0) incoming.unshift(rest);
        const lines = head.subarray(0, at).toString('latin1').split('\r\n');
        const m = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0]);
        if (!m) return fail(new Error(`not an HTTP answer: ${lines[0].slice(0, 80)}`));
        const parsed: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          if (colon <= 0) continue;
          const name = line.slice(0, colon).trim().toLowerCase();
          const value = line.slice(colon + 1).trim();
          parsed[name] = parsed[name] === undefined ? value : `${parsed[name]}, ${value}`;
        }
        const length = parsed['content-length'];
        if (options.checkLength && incoming instanceof LentReadConnection && length !== undefined && /^\d+$/.test(length)) {
          // `head` holds every byte read so far, from the connection's first: the body starts at at + 4.
          incoming.expectTotalBytes(at + 4 + Number(length));
        }
        incoming.once('end', () => socket.setTimeout(0));
        resolve({ status: Number(m[1]), headers: parsed, body: incoming });
        return;
      }
    };
    incoming.on('readable', onReadable);
  });
}

interface Connection {
  /** For writing the request, the timeout and destroying. */
  socket: net.Socket;
  /** What the server sends. */
  incoming: Readable;
}

function tlsConnection(host: string, port: number): Connection {
  const socket = tls.connect({ host, port, servername: net.isIP(host) ? undefined : host });
  return { socket, incoming: socket };
}

/** A plain connection whose reads are lent to the consumer (see lent-reads.ts). */
function plainConnection(host: string, port: number): Connection {
  const incoming = new LentReadConnection(host, port);
  return { socket: incoming.socket, incoming };
}

/** The (small) body of an error answer, at most 64 KiB kept (the rest is read and dropped). */
export async function readSmall(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size < MAX_HEADER_BYTES) chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks).toString('utf8');
}
