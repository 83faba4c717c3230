import type { BigIntStats } from 'node:fs';

/**
 * What one metadata record holds (DocumentMeta) and how a document's first record is made. Kept
 * apart from metadata-store.ts, with no imports, because the copy thread (direct-copy-records.ts)
 * makes first records too.
 */

/** The shape of one record (DocumentMeta), unchanged since layout 1. */
export const RECORD_FORMAT = 1;

/** What identifies the bytes of a file on disk; a mismatch means someone edited it outside the gateway. */
export interface FileIdentity {
  ino: string;
  size: number;
  mtimeNs: string;
}

export interface VersionRecord {
  /** Version number; never reused within a document, so a version id never changes meaning. */
  n: number;
  size: number;
  modified: string;
  modifiedBy?: string;
  /** Media type declared at upload; absent means "derive from the extension". */
  mimeType?: string;
  comment?: string;
}

export interface DocumentMeta {
  format: typeof RECORD_FORMAT;
  /** Repository-relative path, to tell a stale or misplaced record from the real one. */
  path: string;
  created: string;
  createdBy?: string;
  checkedOutBy?: string;
  checkedOutAt?: string;
  properties: Record<string, string>;
  /** Highest version number ever issued. */
  lastVersion: number;
  /** Oldest first; the last entry is the current content, i.e. the file itself. */
  versions: VersionRecord[];
  /** The file as the gateway last wrote it. */
  current?: FileIdentity;
}

/** What records keep of a file's lstat (a direct copy's thread answers these). */
export type StatFields = Pick<BigIntStats, 'ino' | 'size' | 'mtimeNs' | 'birthtimeNs'>;

export function identityOf(stat: StatFields): FileIdentity {
  return { ino: stat.ino.toString(), size: Number(stat.size), mtimeNs: stat.mtimeNs.toString() };
}

export function sameIdentity(a: FileIdentity | undefined, b: FileIdentity): boolean {
  return a !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

export function latestVersion(meta: DocumentMeta): VersionRecord {
  return meta.versions[meta.versions.length - 1];
}

export function statDate(stat: StatFields, which: 'mtime' | 'birthtime'): Date {
  const ns = which === 'mtime' ? stat.mtimeNs : stat.birthtimeNs;
  return new Date(Number(ns / 1_000_000n));
}

/** What a file dropped in by hand looks like: one version, nobody known as author. */
export function synthesizeMeta(rel: string, stat: StatFields): DocumentMeta {
  const modified = statDate(stat, 'mtime');
  const born = stat.birthtimeNs > 0n ? statDate(stat, 'birthtime') : modified;
  return {
    format: RECORD_FORMAT,
    path: rel,
    created: born.toISOString(),
    properties: {},
    lastVersion: 1,
    versions: [{ n: 1, size: Number(stat.size), modified: modified.toISOString() }],
    current: identityOf(stat),
  };
}

/**
 * The first record of a document the gateway just placed: synthesizeMeta, with its author, declared media type
 * and the custom properties written with it (createFile's `properties`, checked by then).
 */
export function firstRecord(rel: string, stat: StatFields, by: { createdBy: string; mimeType?: string; properties?: Record<string, string> }, now = new Date()): DocumentMeta {
  const meta = synthesizeMeta(rel, stat);
  meta.created = now.toISOString();
  meta.createdBy = by.createdBy;
  if (by.properties !== undefined) meta.properties = by.properties;
  const latest = latestVersion(meta);
  latest.modifiedBy = by.createdBy;
  if (by.mimeType !== undefined) latest.mimeType = by.mimeType;
  return meta;
}
