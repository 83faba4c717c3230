import type { IncomingMessage, ServerResponse } from 'node:http';

/** What one request's completion line says (README.md: no headers, no query string). */
export interface RequestLine {
  /** The authenticated user's name; absent when the request carried no accepted credentials. */
  user?: string;
  method: string;
  /** The path only: the query string can carry public download keys. */
  path: string;
  status: number;
  /** Bytes sent on the connection for this answer, head included (nginx's $bytes_sent). */
  bytes: number;
  /** Milliseconds from the request's arrival at the gateway to its answer's end. */
  ms: number;
}

const BYTES_AT_START = Symbol('bytesWrittenAtStart');

type TrackedRequest = IncomingMessage & { [BYTES_AT_START]?: number; originalUrl?: string; user?: { username?: unknown } };

/**
 * Notes how much the connection had sent before this answer, so the line counts this answer's bytes only.
 * The request's socket is read, not the response's: Node detaches the latter when the answer finishes.
 */
export function markRequestStart(req: IncomingMessage): void {
  (req as TrackedRequest)[BYTES_AT_START] = req.socket?.bytesWritten ?? 0;
}

/** The completion line of a request, built once its answer is done (the user is known only then). */
export function requestLine(req: IncomingMessage, res: ServerResponse, ms: number): RequestLine {
  const tracked = req as TrackedRequest;
  const user = tracked.user?.username;
  return {
    ...(typeof user === 'string' ? { user } : {}),
    method: req.method ?? '',
    path: (tracked.originalUrl ?? req.url ?? '').split('?')[0],
    status: res.statusCode,
    bytes: Math.max(0, (req.socket?.bytesWritten ?? 0) - (tracked[BYTES_AT_START] ?? 0)),
    ms,
  };
}
