import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type pino from 'pino';
import { markRequestStart, requestLine } from './request-line';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// `id`: declared on IncomingMessage by pino-http's types (nestjs-pino, which the adapter comes from, brings them).
type LoggedRequest = IncomingMessage & { originalUrl?: string };

/**
 * The request-logging middleware: one line per request when its answer is done (request-line.ts),
 * at info, warn for a 4xx, error for a 5xx; `/api/health` is not logged. Every request gets its id
 * (the client's `X-Request-Id` when well formed, else a random UUID), sent back as `X-Request-Id`
 * and kept as `req.id` for the exception filter's `Unhandled error` line.
 *
 * One listener and one log call per request. pino-http, which this replaces, built two child
 * loggers per request (one of them binding the whole request, run through the root's redaction)
 * that nothing used: its middleware was the largest single cost of a small request (README.md).
 */
export function requestLogger(root: pino.Logger): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  // The line's fields are fixed (request-line.ts) and none is a credential: the root's redaction, which
  // walks every logged object for its wildcard paths, is left out of the one line every request writes.
  const lines = root.child({}, { redact: { paths: [] } });
  return (req: LoggedRequest, res, next) => {
    const started = Date.now();
    markRequestStart(req);
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    if (!(req.originalUrl ?? req.url ?? '').endsWith('/api/health')) {
      // 'finish': the answer was handed over whole; 'close' alone: the connection ended first (logged by its status all the same).
      const done = () => {
        res.off('finish', done);
        res.off('close', done);
        const status = res.statusCode;
        const fields = { reqId: id, ...requestLine(req, res, Date.now() - started) };
        if (status >= 500) lines.error(fields, 'request failed');
        else if (status >= 400) lines.warn(fields, 'request completed');
        else lines.info(fields, 'request completed');
      };
      res.on('finish', done);
      res.on('close', done);
    }
    next();
  };
}
