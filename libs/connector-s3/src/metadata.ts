import { invalid } from './keys';

/**
 * Custom properties as S3 user metadata (x-amz-meta-*). Header names are case-insensitive and S3
 * gives them back lower-case, so property names are lower-case here (an upper-case name would not
 * read back as written: refused rather than folded). Values travel in HTTP headers, so anything but
 * printable ASCII is stored as an RFC 2047 encoded word, the form S3 itself answers non-ASCII
 * metadata in; it is decoded on read. The gateway's own fields (creator, last writer) live under
 * the reserved `gateway-` names, which clients cannot set.
 */
const NAME = /^[a-z][a-z0-9_.-]{0,127}$/;
const MAX_VALUE_LENGTH = 2048;
/** AWS's limit on all user metadata of an object (names and values, in bytes). */
export const MAX_METADATA_BYTES = 2048;
export const CREATED_BY = 'gateway-created-by';
export const MODIFIED_BY = 'gateway-modified-by';
const RESERVED_PREFIX = 'gateway-';
const PLAIN = /^[\x20-\x7e]*$/;
const ENCODED_WORD = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=$/i;

const BUILT_IN = new Set(['id', 'name', 'path', 'basetype', 'typeid', 'type', 'mimetype', 'size', 'created', 'modified', 'createdby', 'modifiedby', 'description', 'checkedout', 'checkedoutby', 'checkincomment', 'versioncount', 'versionlabel', 'versionseriesid', 'etag', 'properties', 'fileid', 'filename', 'folderid']);

export function encodeValue(value: string): string {
  return PLAIN.test(value) && !value.startsWith('=?') ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

export function decodeValue(value: string): string {
  const match = ENCODED_WORD.exec(value);
  return match ? Buffer.from(match[1], 'base64').toString('utf8') : value;
}

/** The client-visible properties of an object's metadata. */
export function propertiesOf(metadata: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata ?? {})) {
    if (!name.toLowerCase().startsWith(RESERVED_PREFIX)) out[name.toLowerCase()] = decodeValue(value);
  }
  return out;
}

export function gatewayField(metadata: Record<string, string> | undefined, name: string): string | undefined {
  const value = metadata?.[name];
  return value === undefined ? undefined : decodeValue(value);
}

/** Validated changes; an empty value removes the property. */
export function parsePropertyChanges(properties: unknown): [string, string][] {
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) {
    throw invalid('properties', 'must be a map of property names to values');
  }
  const changes = Object.entries(properties as Record<string, unknown>);
  for (const [name, value] of changes) {
    const parameter = name.slice(0, 128);
    const lower = name.toLowerCase();
    if (lower.startsWith('svc_') || lower.startsWith('cmis:') || BUILT_IN.has(lower)) {
      throw invalid(parameter, `'${name}' is a built-in property and cannot be set`);
    }
    if (lower.startsWith(RESERVED_PREFIX)) throw invalid(parameter, `names starting with '${RESERVED_PREFIX}' are reserved for the gateway`);
    if (!NAME.test(name)) {
      throw invalid(parameter, 'an S3 property name starts with a lower-case letter and has at most 128 lower-case letters, digits or _ . -');
    }
    if (typeof value !== 'string') throw invalid(parameter, 'a property value must be a string');
    if (value.length > MAX_VALUE_LENGTH) throw invalid(parameter, `a property value has at most ${MAX_VALUE_LENGTH} characters`);
  }
  return changes as [string, string][];
}

/** Applies changes to stored metadata (raw, encoded values); refuses a result over S3's size limit. */
export function applyChanges(metadata: Record<string, string> | undefined, changes: [string, string][]): Record<string, string> {
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata ?? {})) next[name.toLowerCase()] = value;
  for (const [name, value] of changes) {
    if (value === '') delete next[name];
    else next[name] = encodeValue(value);
  }
  const bytes = Object.entries(next).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (bytes > MAX_METADATA_BYTES) throw invalid('properties', `S3 keeps at most ${MAX_METADATA_BYTES} bytes of properties per object`);
  return next;
}
