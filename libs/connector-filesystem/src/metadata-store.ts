import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fsync,
  linkSync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  type BigIntStats,
} from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { InvalidArgumentError, UpstreamError } from '@gateway/connector-api';
import { errnoCode } from './fs-errors';
import { METADATA_FOLDER, nameOf, parentOf } from './paths';

/**
 * The connector's own state, kept beside the content under
 * `<root>/.gateway/` so that it travels with the repository folder:
 *
 *   format.json                       layout version, for future migrations
 *   tmp/                              uploads and JSON being written (same filesystem, so rename is atomic)
 *   trash/                            folders being deleted (renamed here first, so they vanish at once)
 *   docs/<key(folder)>/<key(name)>/
 *     meta.json                       DocumentMeta
 *     v/<n>                           content of version n, for every version but the current one
 *
 * Keys are hashes of the folder path and of the name, so any name maps to a
 * short fixed-length directory name, and all the metadata of one folder's
 * documents sits in one directory: a listing reads that directory once to
 * learn which entries have metadata, and deleting a folder removes one
 * directory per subfolder.
 */

export const LAYOUT_FORMAT = 1;
const STALE_TEMP_MS = 60 * 60 * 1000;
const TMP_RECHECK_MS = 1000;
const META_FILE = 'meta.json';
const VERSIONS_DIR = 'v';
// Where hard links are unavailable, versions fall back to a (reflinked where possible) copy.
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK', 'ENOSYS']);

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
  format: typeof LAYOUT_FORMAT;
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

export function identityOf(stat: BigIntStats): FileIdentity {
  return { ino: stat.ino.toString(), size: Number(stat.size), mtimeNs: stat.mtimeNs.toString() };
}

export function sameIdentity(a: FileIdentity | undefined, b: FileIdentity): boolean {
  return a !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

export function latestVersion(meta: DocumentMeta): VersionRecord {
  return meta.versions[meta.versions.length - 1];
}

export function statDate(stat: BigIntStats, which: 'mtime' | 'birthtime'): Date {
  const ns = which === 'mtime' ? stat.mtimeNs : stat.birthtimeNs;
  return new Date(Number(ns / 1_000_000n));
}

/** What a file dropped in by hand looks like: one version, nobody known as author. */
export function synthesizeMeta(rel: string, stat: BigIntStats): DocumentMeta {
  const modified = statDate(stat, 'mtime');
  const born = stat.birthtimeNs > 0n ? statDate(stat, 'birthtime') : modified;
  return {
    format: LAYOUT_FORMAT,
    path: rel,
    created: born.toISOString(),
    properties: {},
    lastVersion: 1,
    versions: [{ n: 1, size: Number(stat.size), modified: modified.toISOString() }],
    current: identityOf(stat),
  };
}

/**
 * Folds edits made outside the gateway into the current version: its old
 * bytes are gone, so the record is made to describe what is on disk, with no
 * known author and the media type derived again from the name.
 */
export function reconcile(meta: DocumentMeta, stat: BigIntStats): void {
  const identity = identityOf(stat);
  if (sameIdentity(meta.current, identity)) return;
  const latest = latestVersion(meta);
  latest.size = identity.size;
  latest.modified = statDate(stat, 'mtime').toISOString();
  delete latest.modifiedBy;
  delete latest.mimeType;
  meta.current = identity;
}

export function nameKey(name: string): string {
  return createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 32);
}

export class MetadataStore {
  readonly base: string;
  private readonly docsDir: string;
  private readonly tmpDir: string;
  private readonly trashDir: string;
  private tmpCheckedAt = 0;
  /** Temp names: this process's random prefix and a counter (unique without a random draw per file). */
  private readonly tmpPrefix = randomBytes(8).toString('hex');
  private tmpCounter = 0;

  constructor(root: string) {
    this.base = path.join(root, METADATA_FOLDER);
    this.docsDir = path.join(this.base, 'docs');
    this.tmpDir = path.join(this.base, 'tmp');
    this.trashDir = path.join(this.base, 'trash');
  }

  /** Creates the layout and clears what an interrupted earlier run left behind. */
  async init(): Promise<void> {
    try {
      const stat = await fsp.lstat(this.base);
      // A link here would send metadata writes wherever it points.
      if (!stat.isDirectory()) throw new InvalidArgumentError('root', `contains '${METADATA_FOLDER}' which is not a folder`);
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
    for (const dir of [this.base, this.docsDir, this.tmpDir, this.trashDir]) await fsp.mkdir(dir, { recursive: true });
    await this.checkFormat();
    await this.sweep();
  }

  documentDir(rel: string): string {
    return path.join(this.folderDir(parentOf(rel)), nameKey(nameOf(rel)));
  }

  versionFile(rel: string, n: number): string {
    return path.join(this.documentDir(rel), VERSIONS_DIR, String(n));
  }

  /** A fresh path in tmp/; the caller creates the file and removes it on failure. */
  tempFile(suffix: string): string {
    // init() made tmp/; checking once per second instead of per call still heals a tmp/ deleted by hand.
    const now = Date.now();
    if (now - this.tmpCheckedAt > TMP_RECHECK_MS) {
      mkdirSync(this.tmpDir, { recursive: true });
      this.tmpCheckedAt = now;
    }
    return path.join(this.tmpDir, `${now}-${this.tmpPrefix}-${(this.tmpCounter++).toString(36)}.${suffix}`);
  }

  async trashEntry(): Promise<string> {
    await fsp.mkdir(this.trashDir, { recursive: true });
    return path.join(this.trashDir, `${Date.now()}-${randomBytes(8).toString('hex')}`);
  }

  async read(rel: string): Promise<DocumentMeta | undefined> {
    return this.readFile(path.join(this.documentDir(rel), META_FILE), rel);
  }

  /**
   * Replaces the record atomically (temp file, fsync, rename): readers see the old or the new JSON, never half.
   * `first`: the document has no record yet, so there is nothing a power cut could take back; the
   * fsync is left out (it was most of the cost of creating many small documents) and a record a
   * power cut left empty reads as absent, i.e. as a file without history (see readFile).
   */
  async write(rel: string, meta: DocumentMeta, first = false): Promise<void> {
    const dir = this.documentDir(rel);
    const tmp = this.tempFile('json');
    try {
      // Creating an inode can take hundreds of microseconds of kernel time (see the README), so the
      // open and the new folder go to the thread pool; the small write and close stay inline.
      const fd = await openAsync(tmp, 'wx');
      try {
        writeFileSync(fd, JSON.stringify(meta));
        // The one call here that waits for the disk: off the event loop.
        if (!first) await fsyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      if (first) await fsp.mkdir(dir, { recursive: true });
      try {
        renameSync(tmp, path.join(dir, META_FILE));
      } catch (e) {
        // A record synthesised for a file dropped in by hand: its folder does not exist yet.
        if (errnoCode(e) !== 'ENOENT' || first) throw e;
        await fsp.mkdir(dir, { recursive: true });
        renameSync(tmp, path.join(dir, META_FILE));
      }
    } catch (e) {
      unlinkQuietly(tmp);
      throw e;
    }
  }

  /** Forgets a document: its record and every older version. */
  async remove(rel: string): Promise<void> {
    const dir = this.documentDir(rel);
    try {
      // Usually there is nothing to forget; one lstat is far cheaper than rm's recursive walk.
      lstatSync(dir);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return;
      throw e;
    }
    await fsp.rm(dir, { recursive: true, force: true });
  }

  /** Keys (see nameKey) of the documents in a folder that have metadata. */
  async keysIn(folderRel: string): Promise<Set<string>> {
    try {
      return new Set(await fsp.readdir(this.folderDir(folderRel)));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return new Set();
      throw e;
    }
  }

  /** Every readable record of a folder's documents; unreadable ones are skipped (used for checks, not answers). */
  async recordsIn(folderRel: string): Promise<DocumentMeta[]> {
    const records: DocumentMeta[] = [];
    for (const key of await this.keysIn(folderRel)) {
      try {
        const meta = await this.readFile(path.join(this.folderDir(folderRel), key, META_FILE), undefined);
        if (meta) records.push(meta);
      } catch {
        // a damaged record cannot hold a check-out worth honouring
      }
    }
    return records;
  }

  async removeFolders(folderRels: readonly string[]): Promise<void> {
    for (const rel of folderRels) await fsp.rm(this.folderDir(rel), { recursive: true, force: true });
  }

  /**
   * Keeps the current content of a document as version n. A hard link costs
   * nothing and stays correct because the gateway never rewrites a file in
   * place: the next content arrives as a new inode renamed over the path.
   */
  async archive(rel: string, sourceAbs: string, n: number): Promise<void> {
    const target = this.versionFile(rel, n);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    unlinkIfPresent(target); // left by an update interrupted between link and rename
    try {
      linkSync(sourceAbs, target);
    } catch (e) {
      if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? '')) throw e;
      await fsp.copyFile(sourceAbs, target, constants.COPYFILE_FICLONE);
    }
  }

  async discardVersion(rel: string, n: number): Promise<void> {
    unlinkIfPresent(this.versionFile(rel, n));
  }

  private folderDir(folderRel: string): string {
    return path.join(this.docsDir, nameKey(folderRel));
  }

  private async readFile(file: string, expectedRel: string | undefined): Promise<DocumentMeta | undefined> {
    let text: string;
    try {
      // Read inline, so nothing that could block may be opened: a FIFO or a link put in by hand fails at once.
      const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      try {
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return undefined;
      if (errnoCode(e) === 'ELOOP') throw new UpstreamError(`The metadata of '/${expectedRel ?? '?'}' is damaged (a link stands in its place)`);
      throw e;
    }
    // A first record written without fsync (see write) that a power cut emptied.
    if (text === '') return undefined;
    let meta: DocumentMeta;
    try {
      meta = JSON.parse(text) as DocumentMeta;
    } catch {
      throw new UpstreamError(`The metadata of '/${expectedRel ?? '?'}' is damaged`);
    }
    if (meta?.format !== LAYOUT_FORMAT || !Array.isArray(meta.versions) || meta.versions.length === 0 || typeof meta.path !== 'string') {
      throw new UpstreamError(`The metadata of '/${meta?.path ?? expectedRel ?? '?'}' is damaged`);
    }
    meta.properties ??= {};
    // A record copied to the wrong place by hand describes some other document.
    if (expectedRel !== undefined && meta.path !== expectedRel) return undefined;
    return meta;
  }

  private async checkFormat(): Promise<void> {
    const file = path.join(this.base, 'format.json');
    try {
      const { format } = JSON.parse(await fsp.readFile(file, 'utf8')) as { format?: unknown };
      if (typeof format === 'number' && format > LAYOUT_FORMAT) {
        throw new InvalidArgumentError('root', `holds metadata in layout ${format}, newer than this gateway understands (${LAYOUT_FORMAT})`);
      }
    } catch (e) {
      if (e instanceof InvalidArgumentError) throw e;
      await fsp.writeFile(file, JSON.stringify({ format: LAYOUT_FORMAT }));
    }
  }

  /**
   * Temp files of another live instance on the same root may be in use, so
   * only old ones go; the trash is always safe to empty (nothing refers to it).
   */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const name of await fsp.readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const stat = await fsp.lstat(file).catch(() => undefined);
      if (stat && now - stat.mtimeMs > STALE_TEMP_MS) await fsp.rm(file, { recursive: true, force: true });
    }
    for (const name of await fsp.readdir(this.trashDir)) {
      await fsp.rm(path.join(this.trashDir, name), { recursive: true, force: true });
    }
  }
}

const fsyncAsync = promisify(fsync);
const openAsync = promisify(open);

/** Removes a file that may already be gone. */
export function unlinkIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
}

/** Cleanup after a failure that is already being reported: a second error would only hide the first. */
export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // reported by the caller's error; a leftover temp file is swept after an hour
  }
}
