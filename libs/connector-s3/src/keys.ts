import { InvalidArgumentError } from '@gateway/connector-api';

/**
 * Ids and paths over S3 keys. A location is a "rel": the key below the connector's prefix. A document's
 * rel never ends with '/'; a folder's is '' (the root) or ends with '/'. Ids carry the rel itself,
 * base64url-encoded, so every key (spaces, '+', '%', any Unicode) round-trips and no lookup table is
 * needed; a version id adds the S3 VersionId, encoded the same way.
 */

export const ID_PREFIX = 's3-';
const VERSION_SEPARATOR = ';';
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** S3's own limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export interface ParsedId {
  rel: string;
  versionId?: string;
}

export function invalid(parameter: string, reason: string): InvalidArgumentError {
  return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': ${reason}`);
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

export function encodeId(rel: string, versionId?: string): string {
  return versionId === undefined ? ID_PREFIX + b64(rel) : `${ID_PREFIX}${b64(rel)}${VERSION_SEPARATOR}${b64(versionId)}`;
}

function decodePart(encoded: string, parameter: string): string {
  if (!BASE64URL.test(encoded)) throw invalid(parameter, 'is not an id of this repository');
  const text = Buffer.from(encoded, 'base64url').toString('utf8');
  // Only the canonical encoding: one key, one id (and invalid UTF-8 cannot alias another key).
  if (b64(text) !== encoded) throw invalid(parameter, 'is not an id of this repository');
  return text;
}

export function decodeId(id: unknown, parameter: string): ParsedId {
  if (typeof id !== 'string' || id === '') throw invalid(parameter, 'must be a repository id');
  if (!id.startsWith(ID_PREFIX)) throw invalid(parameter, 'is not an id of this repository');
  const separator = id.indexOf(VERSION_SEPARATOR);
  const rel = decodePart(id.slice(ID_PREFIX.length, separator < 0 ? undefined : separator), parameter);
  if (rel.startsWith('/') || rel.includes('//')) throw invalid(parameter, 'is not an id of this repository');
  if (separator < 0) return { rel };
  const versionId = decodePart(id.slice(separator + 1), parameter);
  if (versionId === '' || isFolderRel(rel)) throw invalid(parameter, 'has a malformed version suffix');
  return { rel, versionId };
}

export function isFolderRel(rel: string): boolean {
  return rel === '' || rel.endsWith('/');
}

/** One path segment a client names (fileName, a folder in a path). */
export function checkSegment(name: unknown, parameter: string): string {
  if (typeof name !== 'string' || name === '') throw invalid(parameter, 'must be a non-empty name');
  if (name.includes('/')) throw invalid(parameter, 'must be a single name without /');
  // Legal in a key, but '.' and '..' would make the repository path mean something else to every client.
  if (name === '.' || name === '..') throw invalid(parameter, "must not be '.' or '..'");
  if (CONTROL_CHARACTER.test(name)) throw invalid(parameter, 'must not contain control characters');
  return name;
}

/** A folder path as clients write it ('/a/b', '/', 'a/b/'): its folder rel ('' or 'a/b/'). */
export function parseFolderPath(value: unknown, parameter: string): string {
  if (typeof value !== 'string') throw invalid(parameter, 'must be a folder path');
  let p = value.startsWith('/') ? value.slice(1) : value;
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '') return '';
  for (const segment of p.split('/')) checkSegment(segment, parameter);
  return `${p}/`;
}

/** The repository path clients see: '/' for the root, '/a/b' for 'a/b' or 'a/b/'. */
export function repoPath(rel: string): string {
  return '/' + (rel.endsWith('/') ? rel.slice(0, -1) : rel);
}

/** The last segment of a rel (a folder's without its '/'). */
export function nameOf(rel: string): string {
  const trimmed = rel.endsWith('/') ? rel.slice(0, -1) : rel;
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** Every folder rel above a rel, from the top down ('a/b/c' -> 'a/', 'a/b/'). */
export function ancestors(rel: string): string[] {
  const out: string[] = [];
  for (let i = rel.indexOf('/'); i !== -1 && i < rel.length - 1; i = rel.indexOf('/', i + 1)) out.push(rel.slice(0, i + 1));
  return out;
}

export function encodeCursor(token: string): string {
  return `c${b64(token)}`;
}

export function decodeCursor(cursor: string): string {
  if (!cursor.startsWith('c')) throw invalid('cursor', 'is not a cursor of this listing');
  try {
    return decodePart(cursor.slice(1), 'cursor');
  } catch {
    throw invalid('cursor', 'is not a cursor of this listing');
  }
}
