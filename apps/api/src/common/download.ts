import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import type { Request, Response } from 'express';
import rangeParser from 'range-parser';
import type { ByteRange } from '@gateway/connector-api';
import { RangeNotSatisfiableError } from '@gateway/errors';
import { asciiFallback } from './file-name';
import { sendBody } from './response-body';

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
  /**
   * The download offload (offload.ts): runs what `open` checks and counts, without
   * opening, and names the header that hands the bytes to the reverse proxy;
   * undefined (or absent) streams them through `open` as usual. Never called for HEAD.
   */
  handOff?(range?: ByteRange): Promise<HandOff | undefined>;
  /** Which stored content this is, for the access audit (apps/api/src/audit); absent for a zip built on the fly. */
  identity?: ContentIdentity;
}

/** Where the bytes of a download come from, as the access audit names them. */
export interface ContentIdentity {
  connectorId: string;
  documentId: string;
  /** Null where the repository pays a call of its own for the path (CMIS downloads). */
  path: string | null;
  /** The id names an older version of a document, not the document itself. */
  version?: boolean;
}

/** How a GET that read content ended (HEAD, 304 and errors before the content was opened read none). */
export interface DownloadOutcome {
  /** Bytes the socket took (the length handed to the proxy, when offloaded). */
  bytes: number;
  /** complete: every byte went out (or to the proxy); cut: the client went away; error: the source failed. */
  result: 'complete' | 'cut' | 'error';
  ranged: boolean;
  offloaded: boolean;
}

/** The one header that hands a download's bytes to the reverse proxy (offload.ts). */
export interface HandOff {
  header: string;
  value: string;
}

export interface DownloadOptions {
  /** Default 'attachment': the gateway hands out files, it does not render them. */
  disposition?: 'attachment' | 'inline';
  /** Default 'private, no-cache': content is per-user, but validators let clients revalidate cheaply. */
  cacheControl?: string;
  /** Told once how a GET that opened (or handed off) the content ended. */
  onServed?: (outcome: DownloadOutcome) => void;
}

const DEFAULT_MIME_TYPE = 'application/octet-stream';
/** Media types a browser renders as a page with scripts: HTML, XHTML, SVG, XML and friends. */
const ACTIVE_CONTENT = /^\s*(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/xsl|application\/xslt\+xml)\s*(;|$)/i;
// RFC 9110 etagc: %x21 / %x23-7E (obs-text left out so headers stay ASCII).
const ETAG_CHARACTERS = /^[\x21\x23-\x7e]+$/;

/**
 * Answers a GET or HEAD with the content of `source`, streamed (sendBody) and
 * never buffered.
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

  const served = isHead ? undefined : options.onServed;
  const tally = { bytes: 0 };
  const report = (result: DownloadOutcome['result'], offloaded = false): void =>
    served?.({ bytes: tally.bytes, result, ranged: range !== undefined, offloaded });
  let handOff: HandOff | undefined;
  let stream: Readable | undefined;
  try {
    handOff = isHead ? undefined : await source.handOff?.(range);
    stream = isHead || handOff ? undefined : await source.open(range);
  } catch (e) {
    report('error');
    throw e;
  }
  if (handOff) {
    // The proxy answers Range and sends the bytes and their length; the validators and names are ours.
    res.status(200);
    setHeaders(res, {
      ...validators,
      ...contentHeaders(source, options),
      [handOff.header]: handOff.value,
    });
    res.end();
    tally.bytes = range ? range.end - range.start + 1 : (size ?? 0);
    report('complete', true);
    return;
  }

  res.status(range ? 206 : 200);
  setHeaders(res, { ...validators, ...contentHeaders(source, options), 'Accept-Ranges': size === undefined ? 'none' : 'bytes' });
  if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  const length = range ? range.end - range.start + 1 : size;
  if (length !== undefined) res.setHeader('Content-Length', String(length));

  if (!stream) {
    res.end();
    return;
  }
  if (!served) {
    await sendBody(stream, res, length);
    return;
  }
  let complete: boolean;
  try {
    complete = await sendBody(stream, res, length, tally);
  } catch (e) {
    report('error');
    throw e;
  }
  report(complete ? 'complete' : 'cut');
}

/**
 * What the content is and how a browser may treat it, the same whether the gateway streams the bytes
 * or hands them to the reverse proxy (whose offload locations pass these headers on).
 */
function contentHeaders(source: DownloadSource, options: DownloadOptions): Record<string, string> {
  const mimeType = source.mimeType || DEFAULT_MIME_TYPE;
  const fileName = source.fileName || 'download';
  return {
    'Content-Type': mimeType,
    // Markup that a browser would run is never shown inline, whatever the caller asked: it would run in the gateway's origin.
    'Content-Disposition': contentDisposition(fileName, {
      type: ACTIVE_CONTENT.test(mimeType) ? 'attachment' : (options.disposition ?? 'attachment'),
      fallback: asciiFallback(fileName),
    }),
    'X-Content-Type-Options': 'nosniff',
    // Even opened directly (a saved link, a lax client), the content gets no script, no plugins and an opaque origin.
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  };
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
    // Node's parser has already stripped the whitespace around header values (RFC 9110 5.5).
    if (ifNoneMatch === '*') return true;
    if (!etag) return false;
    const ours = opaque(etag);
    return splitEtags(ifNoneMatch).some((tag) => opaque(tag) === ours);
  }
  const ifModifiedSince = req.headers['if-modified-since'];
  if (ifModifiedSince !== undefined && lastModified) {
    // HTTP dates have one-second resolution: compare at that resolution. An unparsable date is NaN,
    // which no comparison satisfies, so it never answers 304.
    return Math.floor(lastModified.getTime() / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000);
  }
  return false;
}

/** The one byte range to serve, undefined for the whole content; throws when the range lies beyond it. */
function requestedRange(req: Request, size: number, etag: string | undefined, lastModified: Date | undefined): ByteRange | undefined {
  const header = req.headers.range;
  if (header === undefined) return undefined;
  const ifRange = req.get('If-Range');
  if (ifRange !== undefined && !ifRangeMatches(ifRange, etag, lastModified)) return undefined;
  const ranges = rangeParser(size, header, { combine: true });
  if (ranges === -1) throw new RangeNotSatisfiableError(size);
  // Malformed (-2), another unit, or several ranges: the whole content.
  // Stryker disable next-line ConditionalExpression: -2 has no `type` either, so `false` here falls to the same answer; the check narrows the type
  if (typeof ranges === 'number') return undefined;
  if (ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}

function ifRangeMatches(value: string, etag: string | undefined, lastModified: Date | undefined): boolean {
  // Strong comparison: our ETag is always a quoted strong tag, so a weak one (W/"...") can only
  // fall through to the date comparison, where it does not parse and never matches.
  if (value.startsWith('"')) return value === etag;
  if (!lastModified) return false;
  // An unparsable date is NaN, which equals nothing.
  return Math.floor(Date.parse(value) / 1000) === Math.floor(lastModified.getTime() / 1000);
}

function splitEtags(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/** The opaque part used by the weak comparison If-None-Match calls for. */
function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
