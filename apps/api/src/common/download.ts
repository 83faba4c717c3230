import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create as contentDisposition } from 'content-disposition';
import type { Request, Response } from 'express';
import rangeParser from 'range-parser';
import type { ByteRange } from '@gateway/connector-api';
import { RangeNotSatisfiableError } from '@gateway/errors';

/**
 * Everything the download helper needs to answer for one stored byte sequence,
 * whatever keeps it (a repository driver, the user-file store, a public link).
 */
export interface DownloadSource {
  /** Unknown: the body is sent chunked and Range is not offered. */
  size?: number;
  /** Absent: application/octet-stream. */
  mimeType?: string;
  /** Offered to the client in Content-Disposition; any Unicode is fine. */
  fileName: string;
  /** Opaque strong validator, unquoted; it must change whenever the bytes do. */
  etag?: string;
  lastModified?: Date;
  /** Opens the whole content, or the inclusive byte range when given. Called at most once. */
  open(range?: ByteRange): Promise<Readable> | Readable;
}

export interface DownloadOptions {
  /** Default 'attachment': the gateway hands out files, it does not render them. */
  disposition?: 'attachment' | 'inline';
  /** Default 'private, no-cache': content is per-user, but validators let clients revalidate cheaply. */
  cacheControl?: string;
}

const DEFAULT_MIME_TYPE = 'application/octet-stream';
// RFC 9110 etagc: %x21 / %x23-7E (obs-text left out so headers stay ASCII).
const ETAG_CHARACTERS = /^[\x21\x23-\x7e]+$/;

/**
 * Answers a GET or HEAD with the content of `source`, streamed with
 * stream.pipeline and never buffered.
 *
 * - Validators: ETag (quoted, strong) and Last-Modified.
 * - Conditional GET: If-None-Match (weak comparison, `*` matches) answers 304;
 *   If-Modified-Since is only looked at when If-None-Match is absent (RFC 9110 13.2.2).
 * - Range: one `bytes` range answers 206 with Content-Range; an unsatisfiable
 *   one throws RangeNotSatisfiableError (the filter answers 416, Content-Range carrying only the size). A Range header that is
 *   malformed, of another unit, or asks for several ranges is ignored and the
 *   whole content is served with 200 (RFC 9110 14.2 allows ignoring Range; it
 *   spares a multipart/byteranges encoder nobody here needs). Range is only
 *   honoured for GET, and only when the size is known. If-Range must match
 *   the ETag strongly, or equal Last-Modified to the second, otherwise the
 *   whole content is served. (If-Match / If-Unmodified-Since are not
 *   evaluated: they guard writes, and downloads are read-only.)
 * - HEAD: the same headers, and `open` is never called.
 *
 * Errors thrown before the status line is written (by `open` included) reach
 * the global exception filter as usual, so `open` is called before any header
 * is set. A failure of the source after that cuts the connection (the filter
 * destroys the response); a client that goes away destroys the source.
 */
export async function sendDownload(req: Request, res: Response, source: DownloadSource, options: DownloadOptions = {}): Promise<void> {
  const etag = source.etag === undefined || source.etag === '' ? undefined : strongEtag(source.etag);
  const lastModified = source.lastModified && !Number.isNaN(source.lastModified.getTime()) ? source.lastModified : undefined;
  const isHead = req.method === 'HEAD';

  const validators: Record<string, string> = { 'Cache-Control': options.cacheControl ?? 'private, no-cache' };
  if (etag) validators.ETag = etag;
  if (lastModified) validators['Last-Modified'] = lastModified.toUTCString();

  if (isNotModified(req, etag, lastModified)) {
    res.status(304);
    setHeaders(res, validators);
    res.end();
    return;
  }

  const size = source.size;
  const range = isHead || size === undefined ? undefined : requestedRange(req, size, etag, lastModified);

  const stream = isHead ? undefined : await source.open(range);

  res.status(range ? 206 : 200);
  setHeaders(res, {
    ...validators,
    'Content-Type': source.mimeType || DEFAULT_MIME_TYPE,
    'Content-Disposition': contentDisposition(source.fileName || 'download', { type: options.disposition ?? 'attachment' }),
    'Accept-Ranges': size === undefined ? 'none' : 'bytes',
    'X-Content-Type-Options': 'nosniff',
  });
  if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  const length = range ? range.end - range.start + 1 : size;
  if (length !== undefined) res.setHeader('Content-Length', String(length));

  if (!stream) {
    res.end();
    return;
  }
  try {
    await (length === undefined ? pipeline(stream, res) : pipeline(stream, exactly(length), res));
  } catch (e) {
    // The client went away: pipeline has destroyed the source already, and there is nobody to tell.
    if ((e as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    throw e;
  }
}

/**
 * Passes the bytes on while checking there are exactly `length` of them.
 * Content that changed size since it was described must not go out under the
 * old Content-Length: surplus bytes would be read as the next response on a
 * kept-alive connection, and a short body would wait for bytes that never come.
 * Failing the pipeline cuts the connection, which the client can see.
 */
function exactly(length: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > length) return callback(new Error(`Content is longer than the ${length} bytes announced; it changed while being served`));
      callback(null, chunk);
    },
    flush(callback) {
      callback(seen === length ? null : new Error(`Content ended after ${seen} of the ${length} bytes announced; it changed while being served`));
    },
  });
}

// res.set() would append a charset to text types, a claim about bytes we never looked at.
function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/** Quotes a driver's validator; values that cannot travel in a header are hashed into one that can. */
export function strongEtag(value: string): string {
  if (/^"[\x21\x23-\x7e]*"$/.test(value)) return value;
  if (ETAG_CHARACTERS.test(value)) return `"${value}"`;
  return `"${createHash('sha256').update(value, 'utf8').digest('base64url')}"`;
}

function isNotModified(req: Request, etag: string | undefined, lastModified: Date | undefined): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    // The representation exists (we are about to serve it), so '*' always matches.
    if (ifNoneMatch.trim() === '*') return true;
    if (!etag) return false;
    const ours = opaque(etag);
    return splitEtags(ifNoneMatch).some((tag) => opaque(tag) === ours);
  }
  const ifModifiedSince = req.headers['if-modified-since'];
  if (ifModifiedSince !== undefined && lastModified) {
    const since = Date.parse(ifModifiedSince);
    if (Number.isNaN(since)) return false;
    // HTTP dates have one-second resolution: compare at that resolution.
    return Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
  }
  return false;
}

/** The one byte range to serve, undefined for the whole content; throws when the range lies beyond it. */
function requestedRange(req: Request, size: number, etag: string | undefined, lastModified: Date | undefined): ByteRange | undefined {
  const header = req.headers.range;
  if (header === undefined) return undefined;
  const ifRange = req.get('If-Range');
  if (ifRange !== undefined && !ifRangeMatches(ifRange.trim(), etag, lastModified)) return undefined;
  const ranges = rangeParser(size, header, { combine: true });
  if (ranges === -2) return undefined;
  if (ranges === -1) throw new RangeNotSatisfiableError(size);
  if (ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}

function ifRangeMatches(value: string, etag: string | undefined, lastModified: Date | undefined): boolean {
  if (value.startsWith('"') || value.startsWith('W/')) {
    // Strong comparison: a weak tag never matches.
    return etag !== undefined && !value.startsWith('W/') && value === etag;
  }
  const date = Date.parse(value);
  if (Number.isNaN(date) || !lastModified) return false;
  return Math.floor(date / 1000) === Math.floor(lastModified.getTime() / 1000);
}

function splitEtags(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/** The opaque part used by the weak comparison If-None-Match calls for. */
function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
