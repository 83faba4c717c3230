import { InvalidArgumentError, type ItemInfo, type VersionInfo } from '@gateway/connector-api';

/** Spec 2.3: every member a string, absent values null. */
export interface FolderItemEntry {
  BaseType: string;
  CheckedOut: 'true' | 'false';
  CheckinComment: string | null;
  ContentLength: string | null;
  CreatedBy: string | null;
  CreatedDate: string | null;
  Description: string | null;
  Id: string;
  ItemPath: string;
  MimeType: string | null;
  ModifiedBy: string | null;
  ModifiedDate: string | null;
  Name: string;
  SitePath: string | null;
  SvcType: string;
  Type: string | null;
  VersionCount: string;
  VersionLabel: string | null;
  VersionSeriesId: string | null;
}

/** Spec 2.4. */
export interface VersionEntry {
  docId: string;
  lastModified: number;
  name: string | null;
  versionLabel: string;
  versionLength: number;
  versionSeriesId: string;
}

/** Spec 2.5: `DisplayName` is the value inside square brackets, `QueryName` the human label. */
export interface PropertyEntry {
  DisplayName: string;
  QueryName: string;
}

export type PropertyMap = Record<string, PropertyEntry>;

/** The svc_ properties of spec 2.5 with their labels, in the spec's order. */
export const SVC_PROPERTY_LABELS = {
  svc_created: 'Created',
  svc_last_modified: 'Last Modified',
  svc_filename: 'File Name',
  svc_content_type: 'Mime Type',
  svc_length: 'Content Length',
} as const;

const RESERVED_PREFIX = 'svc_';
/** Custom property names: a plain identifier, so they survive every repository and every query string. */
export const PROPERTY_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/;

function text(value: string | undefined | null): string | null {
  return value === undefined || value === null ? null : value;
}

/** Dates travel as epoch milliseconds, as the spec's other integer timestamps do. */
function millis(date: Date | undefined): string | null {
  return date === undefined || Number.isNaN(date.getTime()) ? null : String(date.getTime());
}

export function toFolderItemEntry(item: ItemInfo): FolderItemEntry {
  return {
    BaseType: item.baseType,
    CheckedOut: item.checkedOut ? 'true' : 'false',
    CheckinComment: text(item.checkinComment),
    ContentLength: item.size === undefined ? null : String(item.size),
    CreatedBy: text(item.createdBy),
    CreatedDate: millis(item.created),
    Description: text(item.description),
    Id: item.id,
    ItemPath: item.path,
    MimeType: text(item.mimeType),
    ModifiedBy: text(item.modifiedBy),
    ModifiedDate: millis(item.modified),
    Name: item.name,
    // Sites exist only in site-based repositories; drivers without them have no site path.
    SitePath: null,
    SvcType: item.baseType,
    Type: text(item.typeId),
    VersionCount: String(item.versionCount ?? -1),
    VersionLabel: text(item.versionLabel),
    VersionSeriesId: text(item.versionSeriesId),
  };
}

/** Spec 2.3: an object keyed by item path, in the order the driver listed the items. */
export function toFolderListing(items: readonly ItemInfo[]): Record<string, FolderItemEntry> {
  const listing: Record<string, FolderItemEntry> = {};
  for (const item of items) listing[item.path] = toFolderItemEntry(item);
  return listing;
}

export function toVersionEntry(version: VersionInfo): VersionEntry {
  return {
    docId: version.id,
    lastModified: version.modified.getTime(),
    name: version.name ?? null,
    versionLabel: version.label,
    versionLength: version.size,
    versionSeriesId: version.versionSeriesId,
  };
}

/**
 * The value goes inside the square brackets of DisplayName ('[report.pdf]';
 * absent: '[]'); QueryName holds the label. Clients read the value as
 * DisplayName.slice(1, -1).
 */
function property(value: string | null, label: string): PropertyEntry {
  return { DisplayName: `[${value ?? ''}]`, QueryName: label };
}

/** Spec 2.5: the five svc_ properties always, then the item's custom properties under their own name. */
export function toPropertyMap(item: ItemInfo): PropertyMap {
  const map: PropertyMap = {
    svc_created: property(millis(item.created), SVC_PROPERTY_LABELS.svc_created),
    svc_last_modified: property(millis(item.modified), SVC_PROPERTY_LABELS.svc_last_modified),
    svc_filename: property(item.name, SVC_PROPERTY_LABELS.svc_filename),
    svc_content_type: property(text(item.mimeType), SVC_PROPERTY_LABELS.svc_content_type),
    svc_length: property(item.size === undefined ? null : String(item.size), SVC_PROPERTY_LABELS.svc_length),
  };
  for (const [name, value] of Object.entries(item.properties ?? {})) {
    if (name.startsWith(RESERVED_PREFIX)) continue;
    map[name] = property(value, name);
  }
  return map;
}

/**
 * The free-form `<property>=<value>` query parameters of the update routes:
 * every query parameter except the route's own. Each must be given once, with
 * a plain name; svc_ names are the service's and cannot be set. Value rules
 * (length, what an empty value means) are the connector's.
 */
export function collectProperties(query: Record<string, unknown>, reserved: readonly string[]): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (reserved.includes(name)) continue;
    if (!PROPERTY_NAME_PATTERN.test(name)) {
      throw new InvalidArgumentError(name, `Invalid parameter '${name}': property names are a letter followed by up to 127 letters, digits or _ . : -`, 'INVALID_PROPERTY');
    }
    if (name.toLowerCase().startsWith(RESERVED_PREFIX)) {
      throw new InvalidArgumentError(name, `Invalid parameter '${name}': svc_ properties are maintained by the service and cannot be set`, 'INVALID_PROPERTY');
    }
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(name, `Invalid parameter '${name}': give each property once, as <name>=<value>`, 'INVALID_PROPERTY');
    }
    properties[name] = value;
  }
  return properties;
}
