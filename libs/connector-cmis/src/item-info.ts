import { createHash } from 'node:crypto';
import type { ItemInfo, VersionInfo } from '@gateway/connector-api';
import type { CmisProperties } from './cmis-client';

/** Properties a listing needs; asking for only these keeps pages small. */
export const LISTING_FILTER = [
  'cmis:objectId',
  'cmis:baseTypeId',
  'cmis:objectTypeId',
  'cmis:name',
  'cmis:path',
  'cmis:description',
  'cmis:createdBy',
  'cmis:creationDate',
  'cmis:lastModifiedBy',
  'cmis:lastModificationDate',
  'cmis:changeToken',
  'cmis:contentStreamLength',
  'cmis:contentStreamMimeType',
  'cmis:versionSeriesId',
  'cmis:versionLabel',
  'cmis:isPrivateWorkingCopy',
  'cmis:isVersionSeriesCheckedOut',
  'cmis:versionSeriesCheckedOutBy',
  'cmis:versionSeriesCheckedOutId',
  'cmis:checkinComment',
].join(',');

export const VERSION_SEPARATOR = ';';

/** A property value as text: JSON gives strings, numbers and booleans (and, from odd servers, objects). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function str(props: CmisProperties, id: string): string | undefined {
  const v = props[id];
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return v.length === 0 ? undefined : text(v[0]);
  return text(v);
}

export function num(props: CmisProperties, id: string): number | undefined {
  const v = props[id];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

function date(props: CmisProperties, id: string): Date | undefined {
  const ms = num(props, id);
  return ms === undefined ? undefined : new Date(ms);
}

export function isFolder(props: CmisProperties): boolean {
  return props['cmis:baseTypeId'] === 'cmis:folder';
}

export function isDocument(props: CmisProperties): boolean {
  return props['cmis:baseTypeId'] === 'cmis:document';
}

export function objectId(props: CmisProperties): string {
  const id = str(props, 'cmis:objectId');
  if (id === undefined) throw new Error('CMIS object without cmis:objectId');
  return id;
}

/**
 * The gateway id of a document is its version series id: it stays the same
 * across check-ins (each of which makes a new CMIS object), so clients keep
 * one id per document. Folders (and documents without a series) use the
 * object id.
 */
export function gatewayId(props: CmisProperties): string {
  return (isDocument(props) ? str(props, 'cmis:versionSeriesId') : undefined) ?? objectId(props);
}

/** Version labels are absent on non-versionable documents; their single version is '1.0'. */
export function versionLabelOf(props: CmisProperties): string {
  return str(props, 'cmis:versionLabel') ?? '1.0';
}

/** `<version series id>;<version label>`, spec 2.4's CMIS version id. */
export function versionId(props: CmisProperties): string {
  return `${gatewayId(props)}${VERSION_SEPARATOR}${versionLabelOf(props)}`;
}

/** Strong validator of one object's content: changes with the object, its change token, date or length. */
export function etagOf(props: CmisProperties): string {
  const basis = [objectId(props), str(props, 'cmis:changeToken') ?? '', str(props, 'cmis:lastModificationDate') ?? '', str(props, 'cmis:contentStreamLength') ?? ''].join('\u0000');
  return createHash('sha256').update(basis).digest('base64url').slice(0, 27);
}

export function joinPath(folderPath: string, name: string): string {
  return folderPath === '/' || folderPath === '' ? `/${name}` : `${folderPath}/${name}`;
}

/** Values of properties outside the cmis: namespace, as strings (multi-valued ones comma-separated). */
export function customProperties(props: CmisProperties): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, value] of Object.entries(props)) {
    if (id.startsWith('cmis:') || value === null || value === undefined) continue;
    if (Array.isArray(value)) {
      if (value.length === 0) continue;
      out[id] = value.map(text).join(',');
    } else {
      out[id] = text(value);
    }
  }
  return out;
}

/**
 * One CMIS object as an ItemInfo. `id` is the id the caller used (a document
 * id, a version id or a folder id); `path` its repository path. Listings
 * (`full` false) leave out what they do not show: custom properties, etag.
 */
export function toItemInfo(props: CmisProperties, id: string, path: string, full = true): ItemInfo {
  const folder = isFolder(props);
  const info: ItemInfo = {
    id,
    name: str(props, 'cmis:name') ?? '',
    path,
    baseType: folder ? 'folder' : 'document',
    typeId: str(props, 'cmis:objectTypeId'),
    created: date(props, 'cmis:creationDate'),
    modified: date(props, 'cmis:lastModificationDate'),
    createdBy: str(props, 'cmis:createdBy'),
    modifiedBy: str(props, 'cmis:lastModifiedBy'),
    description: str(props, 'cmis:description'),
  };
  if (!folder) {
    Object.assign(info, {
      mimeType: str(props, 'cmis:contentStreamMimeType'),
      size: num(props, 'cmis:contentStreamLength') ?? 0,
      checkedOut: props['cmis:isVersionSeriesCheckedOut'] === true,
      checkedOutBy: str(props, 'cmis:versionSeriesCheckedOutBy'),
      checkinComment: str(props, 'cmis:checkinComment'),
      versionLabel: str(props, 'cmis:versionLabel'),
      versionSeriesId: gatewayId(props),
    } satisfies Partial<ItemInfo>);
    if (full) {
      info.etag = etagOf(props);
      info.properties = customProperties(props);
    }
  }
  return info;
}

export function toVersionInfo(props: CmisProperties): VersionInfo {
  const comment = str(props, 'cmis:checkinComment');
  const modifiedBy = str(props, 'cmis:lastModifiedBy');
  const properties = customProperties(props);
  return {
    id: versionId(props),
    name: str(props, 'cmis:name'),
    label: versionLabelOf(props),
    size: num(props, 'cmis:contentStreamLength') ?? 0,
    modified: date(props, 'cmis:lastModificationDate') ?? new Date(0),
    versionSeriesId: gatewayId(props),
    ...(comment !== undefined ? { comment } : {}),
    // Each version's own author: what a copy job carries to the versions it writes.
    ...(modifiedBy !== undefined ? { modifiedBy } : {}),
    // Each version's own custom properties (a copy job's source_modified, source_author, source_version).
    ...(Object.keys(properties).length > 0 ? { properties } : {}),
  };
}

export function isCheckedOut(props: CmisProperties): boolean {
  return props['cmis:isVersionSeriesCheckedOut'] === true;
}

/** `<series>;<label>` → its parts; undefined for plain ids. */
export function splitVersion(id: string): { series: string; label: string } | undefined {
  const at = id.lastIndexOf(VERSION_SEPARATOR);
  if (at <= 0 || at === id.length - 1) return undefined;
  return { series: id.slice(0, at), label: id.slice(at + 1) };
}
