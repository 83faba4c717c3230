import { InvalidArgumentError, NotFoundError } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS } from '@gateway/microsoft-client';

/** Drive items as Graph sends them, their ids and names, and SharePoint's field names: what the connector and its groups share. */

/** The acting gateway user's fields (shared with the SharePoint connector). */
export const GATEWAY_FIELDS = ATTRIBUTION_FIELDS;
export const GATEWAY_FIELD_NAMES = new Set<string>(Object.values(GATEWAY_FIELDS));
/** SharePoint's own columns of a document library item: never shown as custom properties. */
export const SYSTEM_FIELDS = new Set([
  'id', 'ID', 'Title', 'FileLeafRef', 'ContentType', 'Created', 'Modified', 'Author', 'Editor', 'AuthorLookupId', 'EditorLookupId',
  'LinkFilename', 'LinkFilenameNoMenu', 'DocIcon', 'ItemChildCount', 'FolderChildCount', 'FileSizeDisplay', 'Edit', 'Attachments',
  'AppAuthorLookupId', 'AppEditorLookupId', 'ComplianceAssetId', 'ContentTypeId', 'CheckoutUserLookupId', 'ParentVersionStringLookupId', 'ParentLeafNameLookupId',
]);
export const ILLEGAL_NAME = /[\\/*<>?:|#%"\u0000-\u001f]/;

export interface GraphIdentitySet {
  user?: { displayName?: string; email?: string } | null;
  application?: { displayName?: string; id?: string } | null;
}

export interface DriveItem {
  id: string;
  name: string;
  size?: number;
  eTag?: string;
  cTag?: string;
  /** `hashes.quickXorHash`: what SharePoint and OneDrive for Business compute of every file (graph-content-hash.ts). */
  file?: { mimeType?: string; hashes?: { quickXorHash?: string; sha1Hash?: string; sha256Hash?: string } };
  folder?: { childCount?: number };
  root?: object;
  parentReference?: { path?: string; id?: string; driveId?: string };
  createdDateTime?: string;
  lastModifiedDateTime?: string;
  createdBy?: GraphIdentitySet;
  lastModifiedBy?: GraphIdentitySet;
  publication?: { level?: string; versionId?: string | null };
  listItem?: { fields?: Record<string, unknown> };
}

export interface DriveItemVersion {
  id: string;
  size?: number;
  lastModifiedDateTime?: string;
}

/** SharePoint internal field names: `.`, `:`, `-` (and any other non-word character) as `_xHHHH_`. */
export function encodeFieldName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, (c) => `_x${c.charCodeAt(0).toString(16).padStart(4, '0')}_`);
}

export function decodeFieldName(name: string): string {
  return name.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function identityName(set: GraphIdentitySet | undefined): string | undefined {
  return set?.user?.displayName ?? set?.user?.email ?? set?.application?.displayName ?? undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function checkName(name: string, parameter: string): string {
  if (typeof name !== 'string' || name.trim() === '' || name !== name.trim() || ILLEGAL_NAME.test(name) || name.startsWith('~') || name.length > 400 || name === '.' || name === '..') {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': a SharePoint name cannot contain \\ / * < > ? : | # % " or start with ~`);
  }
  return name;
}

export function checkId(id: string, _parameter: string): void {
  if (typeof id !== 'string' || !/^[A-Za-z0-9!_.-]{1,200}(;[0-9]{1,6}\.[0-9]{1,6})?$/.test(id)) throw new NotFoundError('item', String(id));
}

export function splitVersion(id: string): { item: string; version?: string } {
  const at = id.indexOf(';');
  return at < 0 ? { item: id } : { item: id.slice(0, at), version: id.slice(at + 1) };
}

export function encodePath(segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s)).join('/');
}
