import type { BigIntStats } from 'node:fs';
import type { ItemInfo, VersionInfo } from '@gateway/connector-api';
import { latestVersion, statDate, type DocumentMeta, type VersionRecord } from './metadata-store';
import { mimeTypeFor } from '@gateway/connector-api';
import { encodeId, encodeVersionId, nameOf, repoPath } from './paths';

/** Object types; the document one is what createFile accepts as `type`. */
export const DOCUMENT_TYPE = 'file';
export const FOLDER_TYPE = 'folder';

export function versionLabel(n: number): string {
  return `${n}.0`;
}

/**
 * Changes whenever the bytes do: every gateway write is a new inode renamed
 * into place, and an edit by hand moves the mtime. Only [0-9a-z-], so it can
 * be used bare or quoted.
 */
export function etagOf(stat: BigIntStats): string {
  return `${stat.ino.toString(36)}-${stat.size.toString(36)}-${stat.mtimeNs.toString(36)}`;
}

export function folderItem(rel: string, stat: BigIntStats, rootName: string): ItemInfo {
  const modified = statDate(stat, 'mtime');
  return {
    id: encodeId(rel),
    name: rel === '' ? rootName : nameOf(rel),
    path: repoPath(rel),
    baseType: 'folder',
    typeId: FOLDER_TYPE,
    created: stat.birthtimeNs > 0n ? statDate(stat, 'birthtime') : modified,
    modified,
  };
}

export interface DocumentView {
  /** The id the caller used: the document id, or a version id. */
  id: string;
  rel: string;
  /** Stat of the bytes being described (the file itself, or a stored older version). */
  stat: BigIntStats;
  meta: DocumentMeta;
  record: VersionRecord;
}

/** `meta` must already be reconciled with the file on disk. */
export function documentItem({ id, rel, stat, meta, record }: DocumentView): ItemInfo {
  const current = record === latestVersion(meta);
  return describeDocument({
    id,
    rel,
    stat,
    mimeType: record.mimeType,
    created: new Date(meta.created),
    modified: current ? statDate(stat, 'mtime') : new Date(record.modified),
    createdBy: meta.createdBy,
    modifiedBy: record.modifiedBy,
    checkedOutBy: meta.checkedOutBy,
    comment: record.comment,
    versionCount: meta.versions.length,
    versionNumber: record.n,
    versionSeriesId: encodeId(rel),
    properties: { ...meta.properties },
  });
}

/**
 * A file without a record (dropped in by hand): documentItem of its synthesized record
 * (synthesizeMeta), built directly. A listing shows thousands of these, and the record's
 * ISO dates, parsed back, and its arrays were most of what describing one cost.
 */
export function unrecordedDocumentItem(rel: string, stat: BigIntStats): ItemInfo {
  const id = encodeId(rel);
  const modified = statDate(stat, 'mtime');
  return describeDocument({
    id,
    rel,
    stat,
    created: stat.birthtimeNs > 0n ? statDate(stat, 'birthtime') : new Date(modified.getTime()),
    modified,
    versionCount: 1,
    versionNumber: 1,
    versionSeriesId: id,
    properties: {},
  });
}

interface DocumentFacts {
  id: string;
  rel: string;
  stat: BigIntStats;
  /** Declared; else guessed from the name. */
  mimeType?: string;
  created: Date;
  modified: Date;
  createdBy?: string;
  modifiedBy?: string;
  checkedOutBy?: string;
  comment?: string;
  versionCount: number;
  versionNumber: number;
  versionSeriesId: string;
  properties: Record<string, string>;
}

function describeDocument(f: DocumentFacts): ItemInfo {
  const name = nameOf(f.rel);
  return {
    id: f.id,
    name,
    path: repoPath(f.rel),
    baseType: 'document',
    typeId: DOCUMENT_TYPE,
    mimeType: f.mimeType ?? mimeTypeFor(name),
    size: Number(f.stat.size),
    created: f.created,
    modified: f.modified,
    createdBy: f.createdBy,
    modifiedBy: f.modifiedBy,
    checkedOut: f.checkedOutBy !== undefined,
    checkedOutBy: f.checkedOutBy,
    checkinComment: f.comment,
    versionCount: f.versionCount,
    versionLabel: versionLabel(f.versionNumber),
    versionSeriesId: f.versionSeriesId,
    etag: etagOf(f.stat),
    properties: f.properties,
  };
}

/** Newest first, as CMIS getAllVersions answers. */
export function versionList(rel: string, meta: DocumentMeta): VersionInfo[] {
  const name = nameOf(rel);
  return [...meta.versions].reverse().map((v) => ({
    id: encodeVersionId(rel, v.n),
    name,
    label: versionLabel(v.n),
    size: v.size,
    modified: new Date(v.modified),
    versionSeriesId: encodeId(rel),
    ...(v.comment !== undefined ? { comment: v.comment } : {}),
    ...(v.modifiedBy !== undefined ? { modifiedBy: v.modifiedBy } : {}),
  }));
}
