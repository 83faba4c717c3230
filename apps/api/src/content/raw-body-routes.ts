import type { Request } from 'express';

/**
 * Routes whose body is document content of any media type. The global JSON
 * and form parsers must leave these bodies alone, or a .json or form-encoded
 * document would be parsed (and size-limited) instead of stored byte for byte.
 */
const RAW_BODY_ROUTE = /\/api\/repo\/[^/]+\/(update|updatecontent)\/?$/i;

export function isRawBodyRoute(req: Request): boolean {
  return req.method === 'PUT' && RAW_BODY_ROUTE.test(req.path);
}
