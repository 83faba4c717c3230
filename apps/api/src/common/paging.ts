import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';

export const NEXT_CURSOR_HEADER = 'X-Next-Cursor';

/**
 * One page of a listing. The spec fixes the shape of `results`, so the cursor
 * of the next page travels in headers instead (see PagingHeadersInterceptor).
 */
export class Page<T> {
  constructor(
    readonly results: T,
    /** Absent on the last page. */
    readonly nextCursor?: string,
  ) {}
}

/**
 * Unwraps a Page: `results` goes on to the envelope, the next cursor becomes
 * `X-Next-Cursor` and `Link: <same URL with cursor=...>; rel="next"`. Neither
 * header is sent on the last page.
 */
@Injectable()
export class PagingHeadersInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((value: unknown): unknown => {
        if (!(value instanceof Page)) return value;
        if (value.nextCursor !== undefined) {
          const http = context.switchToHttp();
          const res = http.getResponse<Response>();
          res.setHeader(NEXT_CURSOR_HEADER, value.nextCursor);
          res.setHeader('Link', `<${nextPageUrl(http.getRequest<Request>().originalUrl, value.nextCursor)}>; rel="next"`);
        }
        return value.results;
      }),
    );
  }
}

/** The request's own path and query with `cursor` replaced; relative, so proxies and context paths need no knowledge here. */
export function nextPageUrl(originalUrl: string, cursor: string): string {
  const url = new URL(originalUrl, 'http://gateway.invalid');
  url.searchParams.set('cursor', cursor);
  return url.pathname + url.search;
}
