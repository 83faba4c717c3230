import { MethodNotAllowedException } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { InvalidArgumentError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@gateway/errors';

/**
 * Express middleware that refuses hostile requests before routing (issue 16). Each hands a typed
 * error to next(), so the one exception filter answers it like any other error.
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Percent-escapes in the path and query must decode to valid UTF-8. Node's decoders turn invalid
 * sequences into U+FFFD silently, which once created a folder named with replacement characters;
 * refusing keeps every name the client meant or none at all.
 */
export function strictUtf8Url(req: Request, _res: Response, next: NextFunction): void {
  const url = req.originalUrl ?? req.url;
  if (!url.includes('%')) return next();
  const q = url.indexOf('?');
  const pathPart = q < 0 ? url : url.slice(0, q);
  if (!decodesAsUtf8(pathPart)) return next(new InvalidArgumentError('url', 'Invalid request path: its percent-escapes are not valid UTF-8', 'INVALID_ENCODING'));
  if (q >= 0) {
    for (const pair of url.slice(q + 1).split('&')) {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      const name = decodesAsUtf8(rawName) ? decodeQueryPart(rawName) : undefined;
      if (name === undefined) return next(new InvalidArgumentError('query', 'Invalid query string: a parameter name is not valid UTF-8 once percent-decoded', 'INVALID_ENCODING'));
      if (eq >= 0 && !decodesAsUtf8(pair.slice(eq + 1))) {
        return next(new InvalidArgumentError(name, `Invalid parameter '${name}': not valid UTF-8 once percent-decoded`, 'INVALID_ENCODING'));
      }
    }
  }
  next();
}

function decodesAsUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  // The common case at native speed: decodeURIComponent succeeds only when every escape is well formed
  // and every run of escapes is valid UTF-8 (what the byte-wise check below accepts, and less).
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    // a malformed escape (sent as it came, below) or invalid UTF-8: the byte-wise check decides
  }
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25 && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      // Anything else is sent as it came (Node has already refused raw bytes outside ASCII in URLs).
      bytes.push(...Buffer.from(text[i], 'utf8'));
    }
  }
  try {
    UTF8.decode(Uint8Array.from(bytes));
    return true;
  } catch {
    return false;
  }
}

function decodeQueryPart(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** Deep enough for any body the gateway takes (a raw search query included); far below what recursion would choke on. */
export const MAX_BODY_DEPTH = 64;

/**
 * Bounds the nesting of a parsed JSON body before anything transforms it: class-transformer and
 * the search translators recurse, and 2,000 nested arrays overflowed the stack (a 500). Iterative,
 * so the check itself cannot overflow.
 */
export function bodyDepthLimit(req: Request, _res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (body === null || typeof body !== 'object') return next();
  const stack: Array<[unknown, number]> = [[body, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_BODY_DEPTH) {
      return next(new InvalidArgumentError('body', `Invalid request body: nested deeper than ${MAX_BODY_DEPTH} levels`, 'BODY_TOO_DEEP'));
    }
    for (const child of Object.values(value as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  next();
}

/** The media types the JSON and form parsers read; what every route that is not @RawBody takes. */
export const PARSED_BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'];

const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * A body the parsers did not read (another media type, or none declared) would be ignored, and the
 * route would answer a puzzling 400 about a missing field: answer 415 naming Content-Type instead.
 * Raw-body routes are skipped by the caller (they take any type).
 */
export function requireParsedBodyType(req: Request, _res: Response, next: NextFunction): void {
  if (!hasBody(req) || req.is(PARSED_BODY_TYPES)) return next();
  const type = req.headers['content-type'];
  next(
    new UnsupportedMediaTypeError(`Content-Type must be application/json (got ${type ? `'${type}'` : 'none'})`, {
      parameter: 'Content-Type',
    }),
  );
}

/**
 * Upload size limit of the routes that take document content. A declared Content-Length above it
 * is refused at once, before anything is read or stored; a body without one (chunked, or a
 * multipart part) is cut by IncomingContent when it crosses the limit, which res.locals carries.
 */
export function uploadLimit(maxBytes: number): RequestHandler {
  return (req, res, next) => {
    if (maxBytes <= 0) return next();
    res.locals.maxUploadBytes = maxBytes;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) return next(tooLarge(maxBytes));
    next();
  };
}

export function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Upload exceeds the limit of ${maxBytes} bytes (GATEWAY_MAX_UPLOAD_BYTES)`, { parameter: 'body', limit: maxBytes });
}

/** Segments of a path, a trailing slash aside (the patterns take one): '/api/repo/x/' and '/api/repo/x' have 3. */
function segmentCount(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 0x2f && i + 1 < path.length) n++;
  return n;
}

interface DocumentedPath {
  pattern: RegExp;
  methods: string[];
  /** Parameters in the template: the fewer, the more specific. */
  params: number;
}

const DOCUMENTED_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/**
 * 405 with Allow for a method a documented path does not take (Express would say 404, as if the
 * path did not exist), and for TRACE anywhere: nothing here echoes requests, and saying so beats
 * a 404. The table is read from the OpenAPI document, which a test keeps complete, once it exists.
 */
export class MethodTable {
  /** The documented paths by their number of segments: a request's path is tested against those of its own length only. */
  private bySegments = new Map<number, DocumentedPath[]>();

  load(document: OpenAPIObject, contextPath: string): void {
    this.bySegments = new Map();
    for (const [template, item] of Object.entries(document.paths)) {
      const methods = DOCUMENTED_METHODS.filter((m) => (item as Record<string, unknown>)[m] !== undefined).map((m) => m.toUpperCase());
      if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
      const source = (contextPath + template)
        .split('/')
        .map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      const segments = segmentCount(contextPath + template);
      const paths = this.bySegments.get(segments) ?? [];
      paths.push({ pattern: new RegExp(`^${source}/?$`, 'i'), methods, params: (template.match(/\{[^}]+\}/g) ?? []).length });
      this.bySegments.set(segments, paths);
    }
  }

  middleware(): RequestHandler {
    return (req, res, next) => {
      // A literal segment wins over a parameter, as in routing: /api/repo/__BATCH__/file is not /api/repo/{connectorId}/file.
      const candidates = (this.bySegments.get(segmentCount(req.path)) ?? []).filter((p) => p.pattern.test(req.path));
      const fewest = Math.min(...candidates.map((p) => p.params));
      const matching = candidates.filter((p) => p.params === fewest);
      if (req.method !== 'TRACE' && matching.length === 0) return next();
      const allowed = [...new Set(matching.flatMap((p) => p.methods))];
      if (req.method !== 'TRACE' && allowed.includes(req.method)) return next();
      res.setHeader('Allow', allowed.join(', '));
      next(new MethodNotAllowedException(`Method ${req.method} is not allowed on ${req.path}${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`));
    };
  }
}
