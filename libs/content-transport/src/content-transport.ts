import type { Readable } from 'node:stream';
import * as tls from 'node:tls';
import { Agent, type Dispatcher } from 'undici';

/**
 * The one HTTP client of content downloads (CMIS content, S3 objects on http:// endpoints, Graph and
 * SharePoint downloads): undici's `request()` over a keep-alive `Agent` per connector connection.
 * undici parses HTTP/1.1 (Content-Length, chunked) in llhttp, keeps connections alive between
 * downloads, and pauses the socket while the reader is busy (backpressure). What the connectors
 * need on top is here: their trust (CA, rejectUnauthorized), idle and connect time-outs failing
 * with the error types their mappers know, and paths sent exactly as given.
 */
export interface ContentTransportOptions {
  /** Longest silence of the server: before the answer's headers, and between two reads of its body. */
  idleTimeoutMs: number;
  /** The error an idle time-out fails the request (or the body already handed on) with. */
  idleTimeout: (ms: number) => Error;
  /** Establishing a connection, TCP and TLS; default 10 s. */
  connectTimeoutMs?: number;
  /** The error a connect time-out fails with; default the idle time-out's. */
  connectTimeout?: (ms: number) => Error;
  /** The CAs trusted for https, as tls's `ca` (replacing the public roots: a connector passes them plus its caFile); default the public roots. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** false accepts any server certificate (a connector configured so); default true. */
  rejectUnauthorized?: boolean;
  /** Connections kept alive per origin; default 64. */
  connections?: number;
}

/** Where a GET goes: a URL, or an origin and a path sent byte for byte (a signed S3 path must not be normalised). */
export type ContentTarget = URL | { origin: string; path: string };

export interface ContentAnswer {
  status: number;
  /** Header names in lower case; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** The body as it arrives; a body cut before its Content-Length fails instead of ending. */
  body: Readable;
}

/** Error answers are read up to this much; the rest is read and dropped. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export class ContentTransport {
  private readonly agent: Dispatcher;

  constructor(options: ContentTransportOptions) {
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    const connectTimeout = options.connectTimeout ?? options.idleTimeout;
    const agent = new Agent({
      connections: options.connections ?? 64,
      headersTimeout: options.idleTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      connect: {
        timeout: connectTimeoutMs,
        // Built once: tls.connect({ ca }) parses the ~140 public roots and the CA on every connection (~50 ms).
        ...(options.ca !== undefined ? { secureContext: tls.createSecureContext({ ca: options.ca }) } : {}),
        ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      },
    });
    // undici's own time-out errors become the caller's, on the answer and on a body already handed on alike.
    this.agent = agent.compose(
      renameErrors((error) => {
        const code = (error as { code?: string }).code;
        if (code === 'UND_ERR_CONNECT_TIMEOUT') return connectTimeout(connectTimeoutMs);
        if (code !== undefined && TIMEOUT_CODES.has(code)) return options.idleTimeout(options.idleTimeoutMs);
        return error;
      }),
    );
  }

  /** Sends the GET; resolves with status and headers once they are in, the body unread. */
  async get(target: ContentTarget, headers: Record<string, string | number>, signal?: AbortSignal): Promise<ContentAnswer> {
    const { origin, path } = target instanceof URL ? { origin: target.origin, path: `${target.pathname}${target.search}` } : target;
    const sent: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) sent[name] = String(value).replace(/[\r\n]/g, '');
    const answer = await this.agent.request({ origin, path, method: 'GET', headers: sent, signal });
    const joined: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) joined[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    // A reader that stops early destroys the body (sendBody when the client goes away); undici then emits
    // RequestAbortedError, which must not go unhandled. Readers that care listen for errors themselves.
    answer.body.on('error', ignore);
    return { status: answer.statusCode, headers: joined, body: answer.body };
  }

  /** Closes the kept-alive connections (a connector being shut down). */
  close(): Promise<void> {
    return this.agent.close();
  }
}

function ignore(): void {}

/** The (small) body of an error answer as text, at most MAX_ERROR_BODY_BYTES kept. */
export async function readSmall(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An interceptor that passes every error through `rename` before the request (and its body) sees it. */
function renameErrors(rename: (error: Error) => Error): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) =>
    dispatch(options, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, status, headers, socket) => handler.onRequestUpgrade?.(controller, status, headers, socket),
      onResponseStart: (controller, status, headers, message) => handler.onResponseStart?.(controller, status, headers, message),
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, rename(error)),
    });
}
