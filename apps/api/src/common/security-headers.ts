import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's security headers, worked out once at start and set on every answer. helmet itself runs
 * eleven middlewares per request that compute and set the same constant headers each time; with
 * constant options (no per-request CSP nonce) their result never changes, so it is computed by
 * running helmet once against a recording response. helmet stays the source of the headers and
 * their values: an upgrade of helmet changes them here too.
 */
export function securityHeaders(options: HelmetOptions): RequestHandler {
  const directives = typeof options.contentSecurityPolicy === 'object' ? options.contentSecurityPolicy.directives : undefined;
  for (const [name, value] of Object.entries(directives ?? {})) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'function')) throw new Error(`securityHeaders: the CSP directive '${name}' is computed per request, so the headers cannot be computed once`);
  }
  const set: Array<[string, string | number | readonly string[]]> = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void set.push([name, value]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let finished = false;
  let failure: unknown;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    failure = err;
    finished = true;
  });
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error('securityHeaders: helmet refused its options');
  if (!finished) throw new Error('securityHeaders: helmet did not finish at once, so its headers cannot be computed once');
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
