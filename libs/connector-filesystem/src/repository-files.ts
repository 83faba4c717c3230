import { createWriteStream, linkSync, lstatSync, renameSync, type BigIntStats } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConflictError, GatewayError, NotFoundError, declaredMimeType, type Actor } from '@gateway/connector-api';
import { KeyedMutex } from '@gateway/concurrency';
import { WrittenHashes } from './content-hashes';
import { copyWholeFile } from './content-reads';
import { allRealFolders } from './direct-copy';
import { LINK_UNSUPPORTED } from './fs-calls';
import { errnoCode, mapFsError } from './fs-errors';
import { DOCUMENT_TYPE } from './item-info';
import {
  firstRecord,
  identityOf,
  latestVersion,
  reconcile,
  sameIdentity,
  statDate,
  synthesizeMeta,
  unlinkIfPresent,
  type DocumentMeta,
  type MetadataStore,
  type StatFields,
  type VersionRecord,
} from './metadata-store';
import { decodeId, encodeId, invalid, repoPath } from './paths';

function lstatIfPresent(file: string): BigIntStats | undefined {
  try {
    return lstatSync(file, { bigint: true });
  } catch {
    return undefined;
  }
}

// Errors of the writing side of an upload; anything else means the client's stream failed.
const WRITE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO', 'EACCES', 'EPERM', 'EROFS', 'EMFILE', 'ENFILE']);

/** Shared by every instance, so two connectors on one root (a restart in tests, a second definition) still serialise. */
export const documentLocks = new KeyedMutex();

export interface Located {
  rel: string;
  abs: string;
  stat: BigIntStats;
}

export interface Mutation {
  abs: string;
  stat: BigIntStats;
  /** Reconciled with the file on disk; a synthesized record for files dropped in by hand. */
  meta: DocumentMeta;
}

/**
 * The repository's files as every capability group reaches them: a rel (validated, paths.ts) to
 * its path under the root, reached without a link (locate); a document's record as it describes
 * the file now; a change under the document's lock; an upload staged and made current.
 */
export class RepositoryFiles {
  readonly rootName: string;
  private readonly rootPrefix: string;

  /** `root` must already be a real path (no links). */
  /** SHA-256 of the files written through this instance, computed while writing (the `contentHash` group). */
  readonly written = new WrittenHashes();

  constructor(
    readonly root: string,
    readonly store: MetadataStore,
  ) {
    this.rootPrefix = root.endsWith(path.sep) ? root : root + path.sep;
    this.rootName = path.basename(root) || '/';
  }

  abs(rel: string): string {
    // A rel is validated (no '.', '..' or empty segment, no leading or trailing '/'), so joining is
    // concatenation; path.join's normalising was a measurable share of a job's CPU (several calls per document).
    const abs = rel === '' ? this.root : this.rootPrefix + rel;
    // Validation already refused everything that could escape; this guards against a future slip.
    if (abs !== this.root && !abs.startsWith(this.rootPrefix)) throw new NotFoundError('item', repoPath(rel));
    return abs;
  }

  /** An existing file or folder, reached without any symbolic link. */
  async locate(rel: string, identifier: string): Promise<Located> {
    const abs = this.abs(rel);
    try {
      const stat = lstatSync(abs, { bigint: true });
      if (!stat.isFile() && !stat.isDirectory()) throw new NotFoundError('item', identifier);
      // Every folder between the root and `rel` is a real folder, not a link. The root was resolved
      // to its real path when the connector started, so this is what realpath(abs) === abs checked,
      // for a fraction of the calls: realpath reads every component from `/` down (a readlink each,
      // ten or more per document in a job), this lstats only the ones below the root.
      if (!allRealFolders(this.foldersAbove(rel))) throw new NotFoundError('item', identifier);
      return { rel, abs, stat };
    } catch (e) {
      throw mapFsError(e, identifier);
    }
  }

  /** The folders between the root and `rel` (the root excluded, `rel` too). */
  foldersAbove(rel: string): string[] {
    const folders: string[] = [];
    for (let slash = rel.indexOf('/'); slash !== -1; slash = rel.indexOf('/', slash + 1)) folders.push(this.abs(rel.slice(0, slash)));
    return folders;
  }

  async locateFolder(id: string, parameter: string): Promise<Located> {
    const { rel, version } = decodeId(id, parameter);
    if (version !== undefined) throw invalid(parameter, 'folders have no versions');
    const located = await this.locate(rel, id);
    if (!located.stat.isDirectory()) throw invalid(parameter, `'${id}' names a document, not a folder`);
    return located;
  }

  async locateDocument(id: string, parameter: string, folderHint = 'a document is expected'): Promise<Located & { version?: number }> {
    const { rel, version } = decodeId(id, parameter);
    const located = await this.locate(rel, id);
    if (located.stat.isDirectory()) throw invalid(parameter, `'${id}' names a folder; ${folderHint}`);
    return { ...located, version };
  }

  /** Changes go to the document; a version id is accepted only when it names the current version. */
  async writableDocument(id: string, parameter: string, folderHint?: string): Promise<Located> {
    const doc = await this.locateDocument(id, parameter, folderHint);
    if (doc.version !== undefined) {
      const meta = await this.currentMeta(doc);
      if (!meta.versions.some((v) => v.n === doc.version)) throw new NotFoundError('item', id);
      if (latestVersion(meta).n !== doc.version) {
        throw invalid(parameter, `'${id}' names an older version; changes apply to the document '${encodeId(doc.rel)}'`);
      }
    }
    return doc;
  }

  /** The document's record as it describes the file now (read-only view: nothing is written); `stored`: its record, already read. */
  async currentMeta(located: Located, stored: DocumentMeta | undefined = this.store.read(located.rel)): Promise<DocumentMeta> {
    const meta = stored ?? synthesizeMeta(located.rel, located.stat);
    if (stored) this.recoverUnrecordedVersion(located, meta);
    reconcile(meta, located.stat);
    return meta;
  }

  /**
   * An update killed between its rename and its record (commitVersion) leaves the previous content archived
   * as version n, a hard link to the very inode the record still names, and the new content in place: the
   * update took. It is recorded as version n+1, not read as an outside edit of version n, which would drop n
   * from the history (the crash matrix's updateContent case found it). Where the archive is a copy (no hard
   * links), the two cannot be told apart and the file reads as an outside edit, as before.
   */
  private recoverUnrecordedVersion(located: Located, meta: DocumentMeta): void {
    const current = identityOf(located.stat);
    if (meta.current === undefined || sameIdentity(meta.current, current)) return;
    const archived = lstatIfPresent(this.store.versionFile(located.rel, latestVersion(meta).n));
    if (!archived || !sameIdentity(meta.current, identityOf(archived))) return;
    meta.lastVersion += 1;
    meta.versions.push({ n: meta.lastVersion, size: current.size, modified: statDate(located.stat, 'mtime').toISOString() });
    meta.current = current;
  }

  async versionTarget(located: Located, meta: DocumentMeta, version: number, id: string): Promise<{ file: string; stat: BigIntStats; record: VersionRecord }> {
    const record = meta.versions.find((v) => v.n === version);
    if (!record) throw new NotFoundError('item', id);
    if (record === latestVersion(meta)) return { file: located.abs, stat: located.stat, record };
    const file = this.store.versionFile(located.rel, version);
    try {
      return { file, stat: lstatSync(file, { bigint: true }), record };
    } catch (e) {
      throw mapFsError(e, id);
    }
  }

  /** Read-modify-write of one document, serialised per document and on state re-read under the lock. */
  mutate<T>(rel: string, id: string, parameter: string, change: (m: Mutation) => Promise<T>): Promise<T> {
    const abs = this.abs(rel);
    return documentLocks.run(abs, async () => {
      const located = await this.locate(rel, id);
      if (located.stat.isDirectory()) throw invalid(parameter, `'${id}' names a folder; a document is expected`);
      const meta = await this.currentMeta(located);
      try {
        return await change({ abs, stat: located.stat, meta });
      } catch (e) {
        throw mapFsError(e, id, parameter);
      }
    });
  }

  /**
   * Makes `staged` the current content and keeps the old one as a version.
   * The rename is atomic, so readers see the old file or the new one, never
   * a mix; the old bytes stay reachable through the version's hard link.
   */
  async commitVersion(rel: string, abs: string, meta: DocumentMeta, staged: string, record: Pick<VersionRecord, 'modifiedBy' | 'mimeType' | 'comment'>): Promise<void> {
    const previous = latestVersion(meta).n;
    await this.store.archive(rel, abs, previous);
    try {
      renameSync(staged, abs);
    } catch (e) {
      await this.store.discardVersion(rel, previous);
      throw e;
    }
    const stat = lstatSync(abs, { bigint: true });
    meta.lastVersion += 1;
    meta.versions.push({
      n: meta.lastVersion,
      size: Number(stat.size),
      modified: new Date(Number(stat.mtimeNs / 1_000_000n)).toISOString(),
      ...dropUndefined(record),
    });
    meta.current = identityOf(stat);
    await this.store.write(rel, meta);
  }

  /** The first record of a document just placed at `rel`. */
  async recordNew(rel: string, stat: StatFields, actor: Actor, mimeType: string | undefined, properties?: Record<string, string>): Promise<void> {
    await this.store.write(rel, firstRecord(rel, stat, { createdBy: actor.username, mimeType: declaredMimeType(mimeType), properties }), true);
  }

  /** Streams an upload into the metadata folder's tmp/ (same filesystem as the target, so it can be renamed into place). */
  async stage(content: Readable, identifier: string): Promise<string> {
    if (!content || typeof (content as Partial<Readable>).pipe !== 'function') throw invalid('content', 'must be a readable stream');
    let staged: string;
    try {
      staged = this.store.tempFile('upload');
    } catch (e) {
      throw mapFsError(e, identifier);
    }
    if (await copyWholeFile(content, staged, this.store.cloneMode)) return staged;
    try {
      const hashing = this.written.hashing();
      await pipeline(content, hashing.stream, createWriteStream(staged, { flags: 'wx' }));
      hashing.written(staged);
      return staged;
    } catch (e) {
      unlinkIfPresent(staged);
      if (e instanceof GatewayError) throw e;
      if (WRITE_ERRORS.has(errnoCode(e) ?? '')) throw mapFsError(e, identifier);
      throw invalid('content', `the content could not be read (${((e as Error)?.message ?? String(e)).slice(0, 200)})`);
    }
  }

  exists(abs: string, rel: string): boolean {
    try {
      // throwIfNoEntry: the usual answer (a new document's name is free) then costs no error object,
      // whose message and stack trace were dearer than the lstat itself (about 5% of a job's CPU).
      return lstatSync(abs, { throwIfNoEntry: false }) !== undefined;
    } catch (e) {
      throw mapFsError(e, repoPath(rel));
    }
  }

  /** Whether the file is there; a check that fails counts as not there (the record then holds nothing). */
  existsQuietly(rel: string): boolean {
    try {
      return this.exists(this.abs(rel), rel);
    } catch {
      return false;
    }
  }
}

export function checkType(type: string | undefined): void {
  if (type === undefined || type === '' || type === DOCUMENT_TYPE) return;
  throw invalid('type', `unknown document type; the types call lists the valid ones ('${DOCUMENT_TYPE}')`);
}

export function alreadyExists(rel: string): ConflictError {
  return new ConflictError(`An item named '${repoPath(rel)}' already exists`, 'ALREADY_EXISTS', { path: repoPath(rel) });
}

export function checkedOutError(holder: string, rel: string): ConflictError {
  return new ConflictError(`Document is checked out by '${holder}'`, 'CHECKED_OUT', { checkedOutBy: holder, path: repoPath(rel) });
}

export function assertNotHeldByOther(meta: DocumentMeta, actor: Actor, rel: string): void {
  if (meta.checkedOutBy !== undefined && meta.checkedOutBy !== actor.username) throw checkedOutError(meta.checkedOutBy, rel);
}

/**
 * Moves a staged upload to a path that must not exist yet. link() fails with
 * EEXIST instead of replacing, so a file dropped in by hand meanwhile is never
 * overwritten; rename() is the fallback where hard links are unavailable.
 */
export function placeNew(staged: string, abs: string, rel: string): void {
  try {
    linkSync(staged, abs);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') throw alreadyExists(rel);
    if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? '')) throw e;
    renameSync(staged, abs);
  }
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
