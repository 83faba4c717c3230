import type { Readable } from 'node:stream';
import * as tls from 'node:tls';
import { lentGet, targetOf, type LentTarget } from './lent-body';

/**
 * The one HTTP client of content downloads: CMIS content, S3 objects on http:// endpoints, Graph and
 * SharePoint downloads. One per connector connection: its trust (CA, rejectUnauthorized, built into
 * one TLS context), its time-outs failing with the error types the connector's mapper knows, and the
 * TLS sessions its downloads resume. Each GET is a lent read on a connection of its own (lent-body.ts;
 * why not undici or node:http: README, with the A/B figures).
 */
export interface ContentTransportOptions {
  /** Longest silence of the server: before the answer, and between two reads of its body. */
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
  /**
   * Ask in HTTP/1.0: the server sends the bytes themselves until it closes, never chunked (servlet
   * containers chunk large content for HTTP/1.1 clients). Default HTTP/1.1.
   */
  http10?: boolean;
}

/** Where a GET goes: a URL, or a target whose path is sent byte for byte (a signed S3 path must not be normalised). */
export type ContentTarget = URL | LentTarget;

export interface ContentAnswer {
  status: number;
  /** Header names in lower case; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** The body as it arrives, its chunks lent (ChunkLender); a body cut before its Content-Length fails instead of ending. */
  body: Readable;
}

/** Error answers are read up to this much; the rest is read and dropped. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class ContentTransport {
  /** TLS sessions by host:port, so that each download resumes one. */
  private readonly sessions = new Map<string, Buffer>();
  /** Built once: tls.connect({ ca }) parses the ~140 public roots and the CA on every connection (~50 ms). */
  private readonly secureContext: tls.SecureContext | undefined;

  constructor(private readonly options: ContentTransportOptions) {
    this.secureContext = options.ca !== undefined ? tls.createSecureContext({ ca: options.ca }) : undefined;
  }

  /** Sends the GET; resolves with status and headers once they are in, the body unread. */
  async get(to: ContentTarget, headers: Record<string, string | number>, signal?: AbortSignal): Promise<ContentAnswer> {
    const target = to instanceof URL ? targetOf(to) : to;
    const { idleTimeoutMs, idleTimeout } = this.options;
    const connectTimeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const connectTimeout = this.options.connectTimeout ?? idleTimeout;
    const answer = await lentGet({
      target,
      headers,
      http10: this.options.http10,
      rejectUnauthorized: this.options.rejectUnauthorized,
      secureContext: target.secure ? this.secureContext : undefined,
      sessions: this.sessions,
      connectTimeoutMs,
      idleTimeoutMs,
      connectTimeout: () => connectTimeout(connectTimeoutMs),
      idleTimeout: () => idleTimeout(idleTimeoutMs),
      signal,
    });
    const joined: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) joined[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: answer.status, headers: joined, body: answer.body };
  }
}

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
