import { unescape } from 'node:querystring';
import { InvalidArgumentError } from '@gateway/connector-api';

/**
 * Pure validation and encoding of repository locations. Nothing here touches
 * the disk: every string that reaches the filesystem has passed through one of
 * these functions first, so the checks against escaping the root live in one
 * place. Symbolic links are handled where the disk is touched (the connector).
 *
 * A location is a "rel": '' for the root, otherwise validated names joined
 * with '/'. It never starts or ends with '/' and never contains '.', '..' or
 * empty segments.
 */

export const ID_PREFIX = 'fs-';
/** Hidden folder under the root holding the connector's own state; never addressable. */
export const METADATA_FOLDER = '.gateway';

const VERSION_SEPARATOR = ';';
const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;
// Common filesystems limit a name to 255 bytes; refusing earlier gives a clear 400 instead of ENAMETOOLONG.
const MAX_NAME_BYTES = 255;
// A proxy, a client library and the gateway may each decode once; beyond that, refuse rather than guess.
const MAX_DECODE_ROUNDS = 3;
// C1 controls (U+0080-U+009F, NEL among them) break lines and terminals as C0 ones do (issue 16, defect 6).
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

export interface ParsedId {
  rel: string;
  /** Set when the id names one version of a document (`<id>;<n>`). */
  version?: number;
}

export function invalid(parameter: string, reason: string): InvalidArgumentError {
  return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': ${reason}`);
}

/** Ids are opaque to clients but derived from the path, so they survive restarts without a lookup table. */
export function encodeId(rel: string): string {
  return ID_PREFIX + Buffer.from(rel, 'utf8').toString('base64url');
}

export function encodeVersionId(rel: string, version: number): string {
  return `${encodeId(rel)}${VERSION_SEPARATOR}${version}`;
}

export function decodeId(id: unknown, parameter: string): ParsedId {
  if (typeof id !== 'string' || id === '') throw invalid(parameter, 'must be a repository id');
  const separator = id.indexOf(VERSION_SEPARATOR);
  // Stryker disable next-line EqualityOperator: an id starting with ';' is refused below whether its base is '' or the whole id (neither has the prefix)
  const base = separator < 0 ? id : id.slice(0, separator);
  // Stryker disable next-line EqualityOperator: at 0 the base is '', refused below before the suffix is read
  const suffix = separator < 0 ? undefined : id.slice(separator + 1);
  if (!base.startsWith(ID_PREFIX)) throw invalid(parameter, 'is not an id of this repository');
  const encoded = base.slice(ID_PREFIX.length);
  const rel = Buffer.from(encoded, 'base64url').toString('utf8');
  // Only the canonical encoding is accepted, so one item never has two ids
  // (and invalid UTF-8, which decodes lossily, cannot alias another name). This also refuses every
  // character outside the base64url alphabet, which the decoder skips and the encoder never writes.
  if (encodeId(rel) !== base) throw invalid(parameter, 'is not an id of this repository');
  const problem = relProblem(rel);
  if (problem) throw invalid(parameter, `does not name an item of this repository (${problem})`);
  if (suffix === undefined) return { rel };
  if (!VERSION_NUMBER.test(suffix)) throw invalid(parameter, 'has a malformed version suffix');
  if (rel === '') throw invalid(parameter, 'folders have no versions');
  return { rel, version: Number(suffix) };
}

/** A name that must be exactly one path segment (fileName). */
export function parseName(name: unknown, parameter: string, parentRel: string): string {
  if (typeof name !== 'string' || name === '') throw invalid(parameter, 'must be a non-empty name');
  if (name.includes('/') || name.includes('\\')) throw invalid(parameter, 'must be a single name without path separators');
  const problem = segmentProblem(name, parentRel === '');
  if (problem) throw invalid(parameter, problem);
  return name;
}

/**
 * A folder path as clients write it: '/a/b' (a leading '/' is optional, one
 * trailing '/' is tolerated). '' and '/' are the root.
 */
export function parseFolderPath(value: unknown, parameter: string): string {
  if (typeof value !== 'string') throw invalid(parameter, 'must be a folder path');
  if (value.includes('\\')) throw invalid(parameter, 'must use / as the separator (backslash found)');
  let p = value.startsWith('/') ? value.slice(1) : value;
  if (p.endsWith('/')) p = p.slice(0, -1);
  const problem = relProblem(p);
  if (problem) throw invalid(parameter, problem);
  return p;
}

/** True when a name read from disk can be addressed; others are left out of listings' items (and reported as `unaddressable`). */
export function isAddressableName(name: string, atRoot: boolean): boolean {
  return segmentProblem(name, atRoot) === undefined;
}

/** Why a name read from disk cannot be addressed, or undefined when it can. */
export function nameProblem(name: string, atRoot: boolean): string | undefined {
  return segmentProblem(name, atRoot);
}

export function joinRel(parentRel: string, name: string): string {
  return parentRel === '' ? name : `${parentRel}/${name}`;
}

export function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

export function nameOf(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}

/** The repository path clients see: '/' for the root, else '/a/b'. */
export function repoPath(rel: string): string {
  return '/' + rel;
}

function relProblem(rel: string): string | undefined {
  if (rel === '') return undefined;
  const segments = rel.split('/');
  for (const [i, segment] of segments.entries()) {
    const problem = segmentProblem(segment, i === 0);
    if (problem) return problem;
  }
  return undefined;
}

function segmentProblem(segment: string, atRoot: boolean): string | undefined {
  if (segment === '') return 'contains an empty name';
  if (Buffer.byteLength(segment, 'utf8') > MAX_NAME_BYTES) return `contains a name longer than ${MAX_NAME_BYTES} bytes`;
  const forms = decodedForms(segment);
  if (forms === undefined) return 'contains a name percent-encoded too many times';
  for (const form of forms) {
    if (form === '.' || form === '..') return "contains a '.' or '..' name";
    if (form.includes('/') || form.includes('\\')) return 'contains a path separator inside a name';
    if (CONTROL_CHARACTER.test(form)) return 'contains a control character';
    if (atRoot && form.toLowerCase() === METADATA_FOLDER) return `'${METADATA_FOLDER}' is reserved for the repository's metadata`;
  }
  return undefined;
}

/**
 * The name and what it becomes when percent-decoded again and again. A
 * literal '%2e%2e' is harmless on disk, but some layer in front of us (or a
 * client building URLs) may decode it once more, so every form must be safe.
 * The lenient decoder also decodes the valid escapes of a malformed string,
 * as lenient servers do ('%2e%2e%2f%zz' -> '../%zz').
 */
function decodedForms(segment: string): string[] | undefined {
  const forms = [segment];
  let current = segment;
  // No loop condition: every round ends in a return (stable, or one round too many) or decodes once more.
  for (let round = 0; ; round++) {
    const next = unescape(current);
    if (next === current) return forms;
    if (round === MAX_DECODE_ROUNDS) return undefined;
    forms.push(next);
    current = next;
  }
}
