import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GatewayError, RangeNotSatisfiableError, RetryLaterError, UpstreamUnavailableError, type GatewayErrorKind } from '@gateway/errors';
import { isDatabaseUnavailable } from '@gateway/persistence';
import { lingerOnUnreadBody } from './lingering-close';
const STATUS_BY_KIND: Record<GatewayErrorKind, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  range_not_satisfiable: 416,
  not_supported: 501,
  upstream_error: 502,
  upstream_unavailable: 503,
  upstream_throttled: 503,
  upstream_timeout: 504,
  service_busy: 503,
};

const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
};

export const BASIC_CHALLENGE = 'Basic realm="content-gateway", charset="UTF-8"';

export interface ErrorBody {
  success: false;
  message: string;
  error: { code: string; [key: string]: unknown };
}

/** The one place where errors become HTTP responses. */
@Catch()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('GatewayExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request>();
    const { status, body } = this.toResponse(exception, req);

    if (status >= 500 && !(exception instanceof GatewayError) && !isDatabaseUnavailable(exception)) {
      // The path only: query strings can carry public download keys. The request id is named here:
      // no request context follows the code a request runs (logging/README.md).
      this.logger.error({ err: exception, reqId: (req as { id?: unknown }).id, path: req.path }, 'Unhandled error');
    }
    if (res.headersSent) {
      // A stream failed after its headers went out: all we can do is cut the connection
      // so the client sees a truncated body instead of a silently short one.
      res.destroy(exception instanceof Error ? exception : undefined);
      return;
    }
    if (status === 401) res.setHeader('WWW-Authenticate', BASIC_CHALLENGE);
    // An answer before the whole body arrived (a refused upload): the rest is read and dropped, within bounds.
    lingerOnUnreadBody(req);
    if (exception instanceof RetryLaterError) {
      res.setHeader('Retry-After', String(exception.retryAfterSeconds));
    }
    if (exception instanceof RangeNotSatisfiableError) {
      // RFC 9110 15.5.17: the size goes in Content-Range so the client can ask again.
      res.setHeader('Content-Range', `bytes */${exception.size}`);
      res.setHeader('Accept-Ranges', 'bytes');
    }
    res.status(status).json(body);
  }

  private toResponse(exception: unknown, req: Request): { status: number; body: ErrorBody } {
    // The database unreachable is an outage of a dependency (503, like a connector's), not a bug.
    if (isDatabaseUnavailable(exception)) exception = new UpstreamUnavailableError('The database is unavailable; try again later');
    if (exception instanceof GatewayError) {
      return {
        status: STATUS_BY_KIND[exception.kind],
        body: { success: false, message: exception.message, error: { code: exception.code, ...exception.details } },
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      let message = exception.message;
      if (typeof response === 'object' && response && 'message' in response) {
        const m = response.message;
        message = Array.isArray(m) ? m.join('; ') : String(m);
      }
      if (status === 404 && /^Cannot (GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /.test(message)) {
        message = `No route ${req.method} ${req.path}`;
        return { status, body: { success: false, message, error: { code: 'ROUTE_NOT_FOUND' } } };
      }
      return {
        status,
        body: { success: false, message, error: { code: CODE_BY_STATUS[status] ?? `HTTP_${status}` } },
      };
    }
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      body: { success: false, message: 'Internal server error', error: { code: 'INTERNAL' } },
    };
  }
}
