import type { NextFunction, Request, Response } from 'express';
import type { Socket } from 'node:net';
import type { GatewayMetrics, TransferDirection } from './gateway-metrics';

/** Socket byte counts already attributed to an earlier request of the same keep-alive connection. */
const counted = new WeakMap<Socket, { read: number; written: number }>();

const DOWNLOAD_PATH = /\/(?:file|download)$/;
const BODY_PARSED = /^(?:application\/(?:[\w.+-]+\+)?json|application\/x-www-form-urlencoded)\b/i;

/**
 * Express middleware (installed first, so it sees every request): on the answer's close it counts
 * the request by method, route template (Express's matched route with the context path cut, or
 * 'unmatched': a scanner's thousand paths stay one series) and status, its latency, the socket
 * bytes since the previous request on the connection, login failures (401 to a request with
 * credentials) and lock-out refusals (429 to one); file transfers are active from start to close.
 */
export function httpMetrics(metrics: GatewayMetrics, contextPath: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const direction = transferDirection(req);
    const transferEnded = direction ? metrics.transferStarted(direction) : undefined;
    res.once('close', () => {
      transferEnded?.();
      const socket = req.socket;
      const before = counted.get(socket) ?? { read: 0, written: 0 };
      const now = { read: socket.bytesRead, written: socket.bytesWritten };
      counted.set(socket, now);
      const route = routeOf(req, contextPath);
      const status = res.headersSent ? res.statusCode : 0; // 0: the client left before any answer
      metrics.request(req.method, route, status, Number(process.hrtime.bigint() - started) / 1e9, now.read - before.read, now.written - before.written);
      if (req.headers.authorization !== undefined) {
        if (status === 401) metrics.loginFailed();
        else if (status === 429) metrics.loginLockedOut();
      }
    });
    next();
  };
}

function routeOf(req: Request, contextPath: string): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string') return 'unmatched';
  const full = req.baseUrl + path;
  return contextPath && full.startsWith(contextPath + '/') ? full.slice(contextPath.length) : full;
}

function transferDirection(req: Request): TransferDirection | undefined {
  if ((req.method === 'GET' || req.method === 'HEAD') && DOWNLOAD_PATH.test(req.path)) return 'download';
  if (req.method !== 'POST' && req.method !== 'PUT') return undefined;
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  return hasBody && !BODY_PARSED.test(req.headers['content-type'] ?? '') ? 'upload' : undefined;
}
