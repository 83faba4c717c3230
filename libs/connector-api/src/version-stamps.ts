import type { Actor } from './connector';

/** A part of a version's stamp: its dates and its authors. */
export type StampField = 'created' | 'modified' | 'createdBy' | 'modifiedBy';
export const STAMP_FIELDS: readonly StampField[] = ['created', 'modified', 'createdBy', 'modifiedBy'];

/**
 * Who made a version and when, as the source repository reports it: the document's creation (date and
 * author) and the version's own last modification. A copy job with `copyVersions` carries it to each version
 * it writes (apps/api/src/jobs/version-stamps.ts).
 */
export interface VersionStamp {
  created?: Date;
  createdBy?: string;
  modified?: Date;
  modifiedBy?: string;
}

/**
 * A repository that keeps a version's original dates and authors as its own fields (what getItem and
 * listVersions then report), instead of the time and the user of the write. Found through the group
 * (`versionStamps`), so a wrapper keeps it; reported as the `versionStamps` capability.
 *
 * Two ways, by what the repository allows:
 * - with the write: createFile and updateContent take `stamp` (NewFile/NewContent) where the fields belong to
 *   the stored object itself (S3 user metadata is part of an object version; Graph's fileSystemInfo travels in
 *   the upload session). `stampWritten` is then absent.
 * - after the write: `stampWritten` sets them on the version just written (the filesystem's mtime and record,
 *   SharePoint's list item fields by ValidateUpdateListItem with bNewDocumentUpdate), adding no version.
 */
export interface VersionStampCapability {
  /** The fields kept; the copier notes the others in the document's outcome rather than dropping them silently. */
  readonly keeps: readonly StampField[];
  /** Dates are kept to this many milliseconds (1: to the millisecond; 1000: to the second). */
  readonly precisionMs: number;
  /** False where an empty version cannot take a stamp (Graph: an upload session takes no empty content); the copier notes it. */
  readonly stampsEmptyContent?: boolean;
  /** Sets the stamp on the current version of document `id`, written just before, without adding a version. */
  stampWritten?(id: string, stamp: VersionStamp, actor: Actor): Promise<void>;
}

/** The date a repository keeping `precisionMs` reports for `date` (truncated, as the repositories store it). */
export function toPrecision(date: Date, precisionMs: number): Date {
  return new Date(date.getTime() - (((date.getTime() % precisionMs) + precisionMs) % precisionMs));
}
