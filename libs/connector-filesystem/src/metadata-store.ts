import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, type BigIntStats } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { InvalidArgumentError, UpstreamError } from '@gateway/connector-api';
import { errnoCode, unlinkIfPresent, unlinkQuietly } from './fs-calls';
import { METADATA_FOLDER, nameOf, parentOf } from './paths';
import { RecordDatabase } from './record-database';
import { OWNER_PREFIX, TEMP_FILE, currentOwner, ownerState, readOwner, type OwnerState } from './temp-owners';
import { RECORD_FORMAT, identityOf, latestVersion, sameIdentity, statDate, type DocumentMeta } from './record-format';

export { unlinkIfPresent, unlinkQuietly } from './fs-calls';
export * from './record-format';

/**
 * The connector's own state, kept beside the content under
 * `<root>/.gateway/` so that it travels with the repository folder:
 *
 *   format.json                       layout version (2), for migrations
 *   metadata.db (-wal, -shm)          DocumentMeta of every document that has one (see RecordDatabase)
 *   tmp/                              uploads being written (same filesystem, so rename and link are atomic),
 *                                     `<ms>-<prefix>-<n>.<suffix>`
 *   owners/<prefix>                   which process writes the temp files of <prefix> (pid, host, boot, start)
 *   trash/                            folders being deleted (renamed here first, so they vanish at once)
 *   docs/<key(folder)>/<key(name)>/
 *     v/<n>                           content of version n, for every version but the current one
 *
 * Keys are hashes of the folder path and of the name, so any name maps to a
 * short fixed-length directory name, and all the older versions of one
 * folder's documents sit in one directory: deleting a folder removes one
 * directory per subfolder.
 *
 * Layout 1 kept each record in `docs/<key(folder)>/<key(name)>/meta.json`;
 * init() moves such records into the database (see migrateRecordFiles).
 */

export const LAYOUT_FORMAT = 2;
const STALE_TEMP_MS = 60 * 60 * 1000;
const TMP_RECHECK_MS = 1000;
const DATABASE_FILE = 'metadata.db';
/** Layout 1's per-document record file. */
const LEGACY_RECORD_FILE = 'meta.json';
const VERSIONS_DIR = 'v';
// Where hard links are unavailable, versions fall back to a (reflinked where possible) copy.
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK', 'ENOSYS']);

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
  private readonly ownersDir: string;
  /** The records' database, which the copy thread writes first records into (direct-copy-records.ts). */
  readonly databaseFile: string;
  private records?: RecordDatabase;
  private tmpCheckedAt = 0;
  /**
   * COPYFILE_FICLONE where this filesystem has reflinks, 0 where it has none: Node tries the
   * clone first and falls back to a copy, so on ext4 every copy would begin with a failing ioctl.
   */
  cloneMode = 0;
  /** Temp names: this process's random prefix and a counter (unique without a random draw per file). */
  private readonly tmpPrefix = randomBytes(8).toString('hex');
  /** This instance among the copy thread's connections (closed with it: DirectCopyThread.forget). */
  readonly recordsKey = this.tmpPrefix;
  private tmpCounter = 0;

  constructor(root: string) {
    this.base = path.join(root, METADATA_FOLDER);
    this.docsDir = path.join(this.base, 'docs');
    this.tmpDir = path.join(this.base, 'tmp');
    this.trashDir = path.join(this.base, 'trash');
    this.ownersDir = path.join(this.base, 'owners');
    this.databaseFile = path.join(this.base, DATABASE_FILE);
  }

  /** Creates the layout, opens the records (moving layout 1's files in) and clears what an interrupted earlier run left behind. */
  async init(): Promise<void> {
    try {
      const stat = await fsp.lstat(this.base);
      // A link here would send metadata writes wherever it points.
      if (!stat.isDirectory()) throw new InvalidArgumentError('root', `contains '${METADATA_FOLDER}' which is not a folder`);
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
    for (const dir of [this.base, this.docsDir, this.tmpDir, this.trashDir, this.ownersDir]) await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(this.ownerFile(this.tmpPrefix), JSON.stringify(currentOwner()));
    const format = await this.readFormat();
    this.records = await this.openRecords();
    try {
      if (format < LAYOUT_FORMAT) {
        await this.migrateRecordFiles();
        await this.writeFormat();
      }
      await this.sweep();
      this.cloneMode = (await this.hasReflinks()) ? constants.COPYFILE_FICLONE : 0;
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** Commits the queued record writes and closes the database. */
  close(): void {
    this.records?.close();
    unlinkQuietly(this.ownerFile(this.tmpPrefix));
  }

  private ownerFile(prefix: string): string {
    return path.join(this.ownersDir, prefix);
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
    // Concatenation, not path.join: tmpDir is normalised and the name has no separator (a copy job asks once per document).
    return `${this.tmpDir}${path.sep}${now}-${this.tmpPrefix}-${(this.tmpCounter++).toString(36)}.${suffix}`;
  }

  async trashEntry(): Promise<string> {
    await fsp.mkdir(this.trashDir, { recursive: true });
    return path.join(this.trashDir, `${Date.now()}-${randomBytes(8).toString('hex')}`);
  }

  /** The document's record; a query on the event loop (a page-cache read, like the lstat beside it). */
  read(rel: string): DocumentMeta | undefined {
    const text = this.db().get(parentOf(rel), nameOf(rel));
    return text === undefined ? undefined : parseRecord(text, rel);
  }

  has(rel: string): boolean {
    return this.db().get(parentOf(rel), nameOf(rel)) !== undefined;
  }

  /**
   * Replaces the record; readers see the old or the new one, never half. Settles once committed
   * (with other writes of the same turn, see RecordDatabase) and, unless `first`, once on disk.
   * `first`: the document has no record yet, so there is nothing a power cut could take back;
   * the wait for the disk is left out (it was most of the cost of creating many small documents)
   * and a record a power cut lost reads as absent, i.e. as a file without history.
   */
  async write(rel: string, meta: DocumentMeta, first = false): Promise<void> {
    await this.db().put(parentOf(rel), nameOf(rel), JSON.stringify(meta), !first);
  }

  /** Forgets a document: its record and every older version. */
  async remove(rel: string): Promise<void> {
    await this.db().delete(parentOf(rel), nameOf(rel));
    const dir = this.documentDir(rel);
    try {
      // Usually there are no older versions; one lstat is far cheaper than rm's recursive walk.
      lstatSync(dir);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return;
      throw e;
    }
    await fsp.rm(dir, { recursive: true, force: true });
  }

  /**
   * The records of some documents of one folder, by name, still unparsed (see parse): a listing
   * asks for its page's names in one query and parses only the files it describes.
   */
  recordTexts(folderRel: string, names: readonly string[]): Map<string, string> {
    return this.db().some(folderRel, names);
  }

  parse(text: string, rel: string): DocumentMeta | undefined {
    return parseRecord(text, rel);
  }

  /** Every readable record of a folder's documents; unreadable ones are skipped (used for checks, not answers). */
  recordsIn(folderRel: string): DocumentMeta[] {
    const records: DocumentMeta[] = [];
    for (const [name, text] of this.db().inFolder(folderRel)) {
      try {
        const meta = parseRecord(text, folderRel === '' ? name : `${folderRel}/${name}`);
        if (meta) records.push(meta);
      } catch {
        // a damaged record cannot hold a check-out worth honouring
      }
    }
    return records;
  }

  /** Forgets a deleted folder's documents: the records of it and everything below, and the older versions of `folderRels`. */
  async removeFolderTree(rel: string, folderRels: readonly string[]): Promise<void> {
    await this.db().deleteTree(rel);
    for (const folder of folderRels) await fsp.rm(this.folderDir(folder), { recursive: true, force: true });
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

  private db(): RecordDatabase {
    if (!this.records) throw new UpstreamError('The filesystem connector was used before init() or after close()');
    return this.records;
  }

  private folderDir(folderRel: string): string {
    return path.join(this.docsDir, nameKey(folderRel));
  }

  /**
   * SQLite opens its files following links and would block opening a FIFO, so what stands at
   * their names is checked first: anything but a regular file stops the connector from starting.
   */
  private async openRecords(): Promise<RecordDatabase> {
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      const stat = await fsp.lstat(this.databaseFile + suffix).catch((e: unknown) => {
        if (errnoCode(e) === 'ENOENT') return undefined;
        throw e;
      });
      if (stat && !stat.isFile()) {
        throw new InvalidArgumentError('root', `contains '${METADATA_FOLDER}/${DATABASE_FILE}${suffix}' which is not a regular file`);
      }
    }
    try {
      return new RecordDatabase(this.databaseFile);
    } catch (e) {
      if (errnoCode(e)?.startsWith('SQLITE_') || /newer than/.test((e as Error)?.message ?? '')) {
        throw new InvalidArgumentError('root', `holds a metadata database '${METADATA_FOLDER}/${DATABASE_FILE}' that cannot be used (${(e as Error).message})`);
      }
      throw e;
    }
  }

  private async hasReflinks(): Promise<boolean> {
    const source = this.tempFile('probe');
    const clone = this.tempFile('probe');
    try {
      // Large enough not to be stored inline in the metadata (btrfs), which cannot be cloned.
      await fsp.writeFile(source, Buffer.alloc(64 * 1024, 1), { flag: 'wx' });
      await fsp.copyFile(source, clone, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE_FORCE);
      return true;
    } catch {
      return false;
    } finally {
      unlinkQuietly(source);
      unlinkQuietly(clone);
    }
  }

  /** 0 when nothing says otherwise: a new folder, or one written before format.json existed. */
  private async readFormat(): Promise<number> {
    const file = path.join(this.base, 'format.json');
    let format: unknown;
    try {
      format = (JSON.parse(await fsp.readFile(file, 'utf8')) as { format?: unknown }).format;
    } catch {
      return 0;
    }
    if (typeof format !== 'number') return 0;
    if (format > LAYOUT_FORMAT) {
      throw new InvalidArgumentError('root', `holds metadata in layout ${format}, newer than this gateway understands (${LAYOUT_FORMAT})`);
    }
    return format;
  }

  /** Temp file, fsync, rename: format.json says 2 only once the records it describes are where it says. */
  private async writeFormat(): Promise<void> {
    const tmp = this.tempFile('json');
    try {
      await fsp.writeFile(tmp, JSON.stringify({ format: LAYOUT_FORMAT }), { flag: 'wx', flush: true });
      await fsp.rename(tmp, path.join(this.base, 'format.json'));
    } catch (e) {
      unlinkQuietly(tmp);
      throw e;
    }
  }

  /**
   * Layout 1 to 2: every `docs/<key>/<key>/meta.json` goes into the database in one durable
   * transaction, then the files go, then format.json says 2. Until it does, the files are the
   * truth (a gateway of layout 1 may still have run on the folder), so a migration interrupted
   * anywhere is simply done again, replacing what the database holds. Records that cannot be
   * read (a link or FIFO in place, damaged JSON, a record at the wrong place) are left out, and
   * their documents read as files without history, as a power cut could leave them before.
   */
  private async migrateRecordFiles(): Promise<void> {
    const rows: Array<{ folder: string; name: string; record: string }> = [];
    const files: string[] = [];
    for (const folderKey of await fsp.readdir(this.docsDir)) {
      const folderDir = path.join(this.docsDir, folderKey);
      let docKeys: string[];
      try {
        docKeys = await fsp.readdir(folderDir);
      } catch (e) {
        if (errnoCode(e) === 'ENOTDIR') continue;
        throw e;
      }
      for (const docKey of docKeys) {
        const file = path.join(folderDir, docKey, LEGACY_RECORD_FILE);
        let meta: DocumentMeta | undefined;
        try {
          meta = readLegacyRecord(file);
        } catch (e) {
          if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') continue;
          if (!(e instanceof UpstreamError) && errnoCode(e) !== 'ELOOP') throw e;
        }
        files.push(file);
        if (meta && this.documentDir(meta.path) === path.join(folderDir, docKey)) {
          rows.push({ folder: parentOf(meta.path), name: nameOf(meta.path), record: JSON.stringify(meta) });
        }
      }
    }
    if (rows.length > 0) this.db().putAll(rows);
    for (const file of files) {
      unlinkIfPresent(file);
      // A document without older versions leaves an empty folder behind.
      await fsp.rmdir(path.dirname(file)).catch(() => undefined);
    }
  }

  /**
   * Temp files of a live process on the same root (another instance sharing the folder) may be in
   * use; those of a dead one never will be. Each process records itself in `owners/<prefix>`, so a
   * restart after a kill -9 removes the partial uploads at once (issue 16). An owner on another
   * machine cannot be checked from here: its files, like files without an owner record, go once
   * they are an hour old. The trash is always safe to empty (nothing refers to it).
   */
  private async sweep(): Promise<void> {
    const now = Date.now();
    const verdicts = new Map<string, OwnerState>();
    const stateOf = async (prefix: string): Promise<OwnerState> => {
      let state = verdicts.get(prefix);
      if (state === undefined) {
        state = prefix === this.tmpPrefix ? 'alive' : ownerState(await readOwner(this.ownerFile(prefix)));
        verdicts.set(prefix, state);
      }
      return state;
    };
    for (const name of await fsp.readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const owned = TEMP_FILE.exec(name);
      const state = owned ? await stateOf(owned[1]) : 'unknown';
      if (state === 'alive') continue;
      if (state === 'unknown') {
        const stat = await fsp.lstat(file).catch(() => undefined);
        if (!stat || now - stat.mtimeMs <= STALE_TEMP_MS) continue;
      }
      await fsp.rm(file, { recursive: true, force: true });
    }
    for (const prefix of await fsp.readdir(this.ownersDir)) {
      if (OWNER_PREFIX.test(prefix) && (await stateOf(prefix)) === 'dead') unlinkQuietly(this.ownerFile(prefix));
    }
    for (const name of await fsp.readdir(this.trashDir)) {
      await fsp.rm(path.join(this.trashDir, name), { recursive: true, force: true });
    }
  }
}

/** Checks a record's shape; a record whose path is not `expectedRel` describes some other document (copied by hand). */
function parseRecord(text: string, expectedRel: string): DocumentMeta | undefined {
  let meta: DocumentMeta;
  try {
    meta = JSON.parse(text) as DocumentMeta;
  } catch {
    throw new UpstreamError(`The metadata of '/${expectedRel}' is damaged`);
  }
  if (meta?.format !== RECORD_FORMAT || !Array.isArray(meta.versions) || meta.versions.length === 0 || typeof meta.path !== 'string') {
    throw new UpstreamError(`The metadata of '/${expectedRel}' is damaged`);
  }
  meta.properties ??= {};
  if (meta.path !== expectedRel) return undefined;
  return meta;
}

/** A layout-1 record file, read without following a link or blocking on a FIFO; an empty one (a power cut) is absent. */
function readLegacyRecord(file: string): DocumentMeta | undefined {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  let text: string;
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  if (text === '') return undefined;
  let meta: DocumentMeta;
  try {
    meta = JSON.parse(text) as DocumentMeta;
  } catch {
    throw new UpstreamError('damaged');
  }
  if (meta?.format !== RECORD_FORMAT || typeof meta.path !== 'string') throw new UpstreamError('damaged');
  return parseRecord(text, meta.path);
}
