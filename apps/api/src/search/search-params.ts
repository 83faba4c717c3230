import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/**
 * The query string exactly as sent, as URLSearchParams: select counts
 * repeated parameters (q exactly once, fq any number of times) and takes
 * dotted names (facet.field) literally, neither of which the parsed
 * req.query keeps reliably (it folds long repeats into objects).
 */
export const SearchParams = createParamDecorator((_data: unknown, ctx: ExecutionContext): URLSearchParams => {
  const url = ctx.switchToHttp().getRequest<Request>().originalUrl;
  const question = url.indexOf('?');
  return new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
});
