import type { NextFunction, Request, Response } from 'express';
import { InvalidArgumentError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@gateway/errors';

/**
 * Express error middleware placed right after the body parsers: turns their
 * errors into the gateway's typed errors, so the one filter answers them with
 * the parameter named (Nest would otherwise reduce them to a bare 400).
 */
export function bodyParserErrors(err: unknown, _req: Request, _res: Response, next: NextFunction): void {
  const e = err as { type?: string; limit?: number; message?: string; charset?: string };
  switch (e?.type) {
    case 'entity.too.large':
      return next(new PayloadTooLargeError(`Request body exceeds the limit of ${e.limit} bytes`, { parameter: 'body', limit: e.limit }));
    case 'entity.parse.failed':
      return next(new InvalidArgumentError('body', `Request body is not valid JSON: ${e.message}`, 'INVALID_BODY'));
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return next(new UnsupportedMediaTypeError(e.message ?? 'Unsupported body encoding', { parameter: 'Content-Type' }));
    default:
      return next(err);
  }
}
