import { InvalidArgumentError, type ByteRange } from '@gateway/connector-api';
import { SourceStreamError } from './cmis-client';

/** What callers give the connector (ids, names, paths, ranges, limits, cursors, media types, uploads), checked: bad input is a 400 naming the parameter. */

const MAX_NAME_LENGTH = 1024;
const CURSOR = /^s([1-9]\d{0,11})$/;
/** Request media types that describe the request, not the document. */
const GENERIC_MEDIA_TYPES = new Set(['application/octet-stream', 'application/x-www-form-urlencoded']);

export function notAFolder(id: string): InvalidArgumentError {
  return new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is not a folder`);
}

export function checkId(id: string, parameter: string): void {
  if (typeof id !== 'string' || id === '' || id.length > 4096) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a repository id`);
}

export function checkName(name: string, parameter: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a non-empty name`);
  if (name.length > MAX_NAME_LENGTH) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': at most ${MAX_NAME_LENGTH} characters`);
  if (name === '.' || name === '..' || /[/\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': a name is one path segment ('/', control characters, '.' and '..' are refused)`);
  }
  return name;
}

/** Absolute '/'-separated path → its segments ('/' → []). */
export function parseAbsolutePath(path: string, parameter: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be an absolute path starting with '/'`);
  const segments = path.split('/').filter((s, i, all) => !(s === '' && (i === 0 || i === all.length - 1)));
  for (const s of segments) checkName(s, parameter);
  return segments;
}

export function toPath(segments: string[]): string {
  return '/' + segments.join('/');
}

export function checkRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new InvalidArgumentError('range', 'must be an inclusive byte range with 0 <= start <= end');
  }
}

export function checkLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError('limit', "Invalid parameter 'limit': must be a positive integer");
  return limit;
}

/** The cursor is the skipCount of the next page: 's' and a decimal number. */
export function encodeCursor(skip: number): string {
  return `s${skip}`;
}

export function decodeCursor(cursor: string): number {
  const m = typeof cursor === 'string' ? CURSOR.exec(cursor) : null;
  if (!m) throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor returned by a previous page");
  return Number(m[1]);
}

/** The essence of a declared media type, unless it only describes the request. */
export function declaredMimeType(mimeType: string | undefined): string | undefined {
  if (!mimeType) return undefined;
  const essence = mimeType.split(';', 1)[0].trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence)) return undefined;
  if (GENERIC_MEDIA_TYPES.has(essence) || essence.startsWith('multipart/')) return undefined;
  return essence;
}

/** Runs an upload; a failure of the client's own stream is the client's (400 on content), not the repository's. */
export async function uploading<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof SourceStreamError) throw new InvalidArgumentError('content', `Invalid parameter 'content': ${e.message}`);
    throw e;
  }
}
