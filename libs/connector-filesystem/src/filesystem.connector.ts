import {
  closeSync,
  constants,
  copyFile,
  createReadStream,
  createWriteStream,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  read,
  renameSync,
  unlinkSync,
  type BigIntStats,
  type Dir,
  type Dirent,
} from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ConflictError,
  fileReadOptions,
  GatewayError,
  NotFoundError,
  UpstreamError,
  UpstreamUnavailableError,
  type Actor,
  type ByteRange,
  type CheckInOutCapability,
  type ConnectorDefinition,
  type ContentConnector,
  type ContentUpdateCapability,
  type DirectCopyCapability,
  type FolderCapability,
  type FolderInfo,
  type FolderPage,
  type ItemInfo,
  type ListFolderOptions,
  type LocalFilesCapability,
  type NewContent,
  type NewFile,
  type PropertyUpdateCapability,
  type RepositoryDescription,
  type VersionInfo,
  type VersioningCapability,
  group,
} from '@gateway/connector-api';
import { eventLoopBudget } from '@gateway/concurrency';
import { KeyedMutex } from './concurrency';
import { DirectCopyThread, directCopyScript } from './direct-copy-thread';
import { allRealFolders, type DirectCopyAnswer } from './direct-copy';
import { INLINE_READ_MAX_BYTES, InlineFileRead } from './inline-read';
import { errnoCode, mapFsError } from './fs-errors';
import { LINK_UNSUPPORTED } from './fs-calls';
import { DOCUMENT_TYPE, documentItem, folderItem, unrecordedDocumentItem, versionList } from './item-info';
import {
  MetadataStore,
  firstRecord,
  identityOf,
  latestVersion,
  reconcile,
  synthesizeMeta,
  unlinkIfPresent,
  unlinkQuietly,
  type DocumentMeta,
  type StatFields,
  type VersionRecord,
} from './metadata-store';
import { declaredMimeType } from '@gateway/connector-api';
import { parsePropertyChanges } from './properties';
import { SortedNameRuns } from './sorted-names';
import {
  decodeId,
  encodeId,
  invalid,
  isAddressableName,
  joinRel,
  nameOf,
  parentOf,
  parseFolderPath,
  parseName,
  repoPath,
} from './paths';

export { encodeId } from './paths';

const MAX_COMMENT_LENGTH = 4000;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
// Errors of the writing side of an upload; anything else means the client's stream failed.
const WRITE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO', 'EACCES', 'EPERM', 'EROFS', 'EMFILE', 'ENFILE']);

/** Shared by every instance, so two connectors on one root (a restart in tests, a second definition) still serialise. */
const documentLocks = new KeyedMutex();
/** Shared by every instance: one thread makes the direct copies' calls (direct-copy-thread.ts). */
const copyThread = new DirectCopyThread(directCopyScript);
/** Larger documents are copied the streaming way (copyFile in the pool), so one does not hold up the small ones queued behind it on the copy thread. */
export const DIRECT_COPY_MAX_BYTES = 1024 * 1024;

interface Located {
  rel: string;
  abs: string;
  stat: BigIntStats;
}

interface Mutation {
  abs: string;
  stat: BigIntStats;
  /** Reconciled with the file on disk; a synthesized record for files dropped in by hand. */
  meta: DocumentMeta;
}

/**
 * A real folder as a repository. Content is the files themselves, so files
 * dropped in by hand are part of it; what a plain folder cannot express
 * (versions, check-out, authors, custom properties) lives in the hidden
 * metadata folder (see MetadataStore), which no id or path can reach.
 *
 * Symbolic links are not part of the repository: they are left out of
 * listings, and an id or path that reaches anything through a link is not
 * found. This holds for links pointing inside the root too, so there is one
 * rule to reason about instead of a containment check per use.
 *
 * Threat model: clients of the API. Someone who can rename entries inside the
 * root while a request runs could race the checks; that is a local user with
 * write access to the repository, out of scope.
 */
export class FilesystemConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'filesystem';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;

  readonly contentUpdate: ContentUpdateCapability = group(this, 'updateContent');
  readonly versioning: VersioningCapability = group(this, 'listVersions');
  readonly checkInOut: CheckInOutCapability = group(this, 'checkOut', 'checkIn');
  readonly folders: Required<FolderCapability> = group(this, 'createFolder', 'deleteFolder');
  readonly propertyUpdate: PropertyUpdateCapability = group(this, 'updateProperties');
  readonly directCopy: DirectCopyCapability = group(this, 'copyFrom');

  readonly localFiles: LocalFilesCapability;

  private readonly store: MetadataStore;
  private readonly rootPrefix: string;
  private readonly rootName: string;

  /** `root` must already be a real path (no links); call init() before use. */
  constructor(
    definition: ConnectorDefinition,
    readonly root: string,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = { root };
    this.store = new MetadataStore(root);
    this.rootPrefix = root.endsWith(path.sep) ? root : root + path.sep;
    this.rootName = path.basename(root) || '/';
    this.localFiles = { root, localPath: (id) => this.localPath(id) };
  }

  init(): Promise<void> {
    return this.store.init();
  }

  async close(): Promise<void> {
    this.store.close();
    copyThread.forget(this.store.recordsKey);
  }

  async describeRepository(): Promise<RepositoryDescription> {
    return {
      repositoryId: this.id,
      repositoryName: this.rootName,
      repositoryDescription: this.description || `Filesystem repository at ${this.root}`,
      rootFolderId: encodeId(''),
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    return { folderId: encodeId(''), folderName: this.rootName, folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return { [DOCUMENT_TYPE]: 'File' };
  }

  async checkHealth(): Promise<void> {
    try {
      await fsp.access(this.root, constants.R_OK | constants.W_OK);
      await fsp.access(this.store.base, constants.R_OK | constants.W_OK);
    } catch (e) {
      throw new UpstreamUnavailableError(`Repository folder ${this.root} is not accessible (${errnoCode(e) ?? 'error'})`);
    }
  }

  // ---- reading ------------------------------------------------------------

  async getItem(id: string): Promise<ItemInfo> {
    const { rel, version } = decodeId(id, 'id');
    const located = await this.locate(rel, id);
    if (located.stat.isDirectory()) {
      if (version !== undefined) throw invalid('id', 'folders have no versions');
      return folderItem(rel, located.stat, this.rootName);
    }
    const meta = await this.currentMeta(located);
    if (version === undefined) return documentItem({ id, rel, stat: located.stat, meta, record: latestVersion(meta) });
    const target = await this.versionTarget(located, meta, version, id);
    return documentItem({ id, rel, stat: target.stat, meta, record: target.record });
  }

  /** The file openContent would read; reached without links (locate), so the offload serves nothing outside the root. */
  private async localPath(id: string): Promise<string> {
    const { rel, version } = decodeId(id, 'id');
    const located = await this.locate(rel, id);
    if (located.stat.isDirectory()) throw invalid('id', `'${id}' names a folder; a document is expected`);
    if (version === undefined) return located.abs;
    return (await this.versionTarget(located, await this.currentMeta(located), version, id)).file;
  }

  async openContent(id: string, range?: ByteRange): Promise<Readable> {
    const { rel, version } = decodeId(id, 'id');
    if (range !== undefined) checkRange(range);
    const located = await this.locate(rel, id);
    if (located.stat.isDirectory()) throw invalid('id', `'${id}' names a folder; a document is expected`);
    let file = located.abs;
    if (version !== undefined) file = (await this.versionTarget(located, await this.currentMeta(located), version, id)).file;
    // The open descriptor pins the inode: a concurrent update renames a new
    // file over the path, so this reader keeps seeing the old bytes, whole.
    // O_NOFOLLOW closes the gap to a link swapped in since locate(); O_NONBLOCK
    // keeps a FIFO swapped in from hanging the open.
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      throw mapFsError(e, id);
    }
    let size: number;
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw new NotFoundError('item', id);
      size = stat.size;
    } catch (e) {
      closeSync(fd);
      throw mapFsError(e, id);
    }
    const reads = fileReadOptions(size, range);
    if (reads === undefined) {
      closeSync(fd);
      return Readable.from([]);
    }
    const bytes = reads.end - reads.start + 1;
    const stream = bytes <= INLINE_READ_MAX_BYTES ? new InlineFileRead(fd, reads.start, bytes) : createReadStream(file, { fd, fs: readOnlyFileCalls, ...reads });
    if (range === undefined) wholeFiles.set(stream, file);
    return stream;
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const folderRel = parseFolderPath(folderPath, 'folderPath');
    const rel = joinRel(folderRel, parseName(fileName, 'fileName', folderRel));
    await this.locate(rel, repoPath(rel));
    return encodeId(rel);
  }

  async listFolder(folderId: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    const limit = checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const folder = await this.locateFolder(folderId, 'id');
    // The cursor is the last name returned, not an offset, so entries added or
    // removed between pages neither repeat nor skip the others.
    const page: string[] = [];
    let more = false;
    for (const name of (await this.sortedNames(folder, folderId)).namesAfter(after)) {
      if (limit !== undefined && page.length === limit) {
        more = true;
        break;
      }
      page.push(name);
    }
    return {
      items: await this.describeNames(folder.rel, folderId, page),
      ...(more && page.length > 0 ? { nextCursor: encodeCursor(page[page.length - 1]) } : {}),
    };
  }

  /**
   * The folder read once, described batch by batch: paging through listFolder would read and sort
   * the directory again for every page. What stays for the whole listing is the sorted names, packed
   * (sorted-names.ts), not their descriptions (a 100,000-entry folder held ~500 MB as ItemInfo and
   * JSON at once).
   */
  async *folderBatches(folderId: string, options: { batchSize: number; cursor?: string }): AsyncGenerator<ItemInfo[]> {
    const batchSize = checkLimit(options.batchSize) ?? LIST_BATCH;
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const folder = await this.locateFolder(folderId, 'id');
    const sorted = await this.sortedNames(folder, folderId);
    let names: string[] = [];
    for (const name of sorted.namesAfter(after)) {
      names.push(name);
      if (names.length < batchSize) continue;
      const batch = names;
      names = [];
      yield await this.describeNames(folder.rel, folderId, batch);
    }
    if (names.length > 0) yield await this.describeNames(folder.rel, folderId, names);
  }

  /** The names a listing shows, sorted by UTF-16 code unit (total, locale-independent, and what the cursor comparison uses), packed. */
  private async sortedNames(folder: { rel: string; abs: string }, folderId: string): Promise<SortedNameRuns> {
    const sorted = new SortedNameRuns();
    await this.readListableNames(folder, folderId, (name) => sorted.add(name));
    return sorted;
  }

  /**
   * Hands each name a listing shows to `take`, in directory order. Read through opendir so only the
   * names are kept, never a Dirent per entry; synchronously in batches with the event loop free
   * between them, for the reason lstatMany gives (a promise per entry was most of the time on a big
   * folder).
   */
  private async readListableNames(folder: { rel: string; abs: string }, folderId: string, take: (name: string) => void): Promise<void> {
    const atRoot = folder.rel === '';
    let dir: Dir | undefined;
    try {
      dir = await fsp.opendir(folder.abs, { bufferSize: DIR_READ_BUFFER });
      for (;;) {
        let d: Dirent | null = null;
        for (let n = 0; n < DIR_READ_BATCH && (d = dir.readSync()) !== null; n++) {
          // Links, sockets and devices are dropped by their directory entry type,
          // without a stat; entries of unknown type are settled by the lstat later.
          if ((d.isFile() || d.isDirectory() || isUnknownType(d)) && isAddressableName(d.name, atRoot)) take(d.name);
        }
        if (d === null) break;
        await eventLoopBudget.turn();
      }
    } catch (e) {
      throw mapFsError(e, folderId);
    } finally {
      dir?.closeSync();
    }
  }

  /** Items of some names of one folder: their records in one query, their lstat in batches; names gone meanwhile are left out. */
  private async describeNames(folderRel: string, folderId: string, names: readonly string[]): Promise<ItemInfo[]> {
    let records: Map<string, string>;
    // The records' query and the first lstats run in a turn with budget left, not wherever the
    // caller resumed (a poll-phase callback, among every other connection's).
    await eventLoopBudget.turn();
    try {
      records = this.store.recordTexts(folderRel, names);
    } catch (e) {
      throw mapFsError(e, folderId);
    }
    const stats = await lstatMany(names.map((name) => this.abs(joinRel(folderRel, name))));
    const items: ItemInfo[] = [];
    for (const [i, name] of names.entries()) {
      const item = this.describeEntry(folderRel, name, records, stats[i]);
      if (item !== undefined) items.push(item);
    }
    return items;
  }

  async listVersions(id: string): Promise<VersionInfo[]> {
    const doc = await this.locateDocument(id, 'id');
    const meta = await this.currentMeta(doc);
    if (doc.version !== undefined && !meta.versions.some((v) => v.n === doc.version)) throw new NotFoundError('item', id);
    return versionList(doc.rel, meta);
  }

  // ---- writing ------------------------------------------------------------

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    checkType(input.type);
    const folderRel = decodeId(input.folderId, 'folderId').rel;
    const rel = joinRel(folderRel, parseName(input.fileName, 'fileName', folderRel));
    await this.locateFolder(input.folderId, 'folderId');
    const abs = this.abs(rel);
    // Refuse before reading a possibly large upload; checked again under the lock.
    if (this.exists(abs, rel)) throw alreadyExists(rel);
    const staged = await this.stage(input.content, repoPath(rel));
    try {
      return await documentLocks.run(abs, async () => {
        // A record without a file belongs to a document deleted by hand: the new one starts its own
        // history. (Usually there is none, and link() below refuses a name taken meanwhile by itself.)
        if (this.store.has(rel)) {
          if (this.exists(abs, rel)) throw alreadyExists(rel);
          await this.store.remove(rel);
        }
        // The folder was checked above; one removed since makes link() fail with ENOENT (404).
        placeNew(staged, abs, rel);
        await this.recordNew(rel, lstatSync(abs, { bigint: true }), actor, input.mimeType);
        return encodeId(rel);
      });
    } catch (e) {
      throw mapFsError(e, repoPath(rel), 'fileName');
    } finally {
      unlinkIfPresent(staged);
    }
  }

  /**
   * A document of another filesystem connector copied as openContent + createFile would, with the
   * same checks and errors, but with the calls made on the copy thread (direct-copy.ts) instead
   * of the event loop and the pool. Whole current documents of at most DIRECT_COPY_MAX_BYTES; for
   * anything else (another kind of source, a version id, a larger file, a record left over at the
   * name, a kernel copy that failed) the answer is undefined and the caller streams.
   */
  async copyFrom(source: ContentConnector, sourceId: string, target: Omit<NewFile, 'content'>, actor: Actor): Promise<string | undefined> {
    // Only the driver itself, as it reads: a direct copy does not call openContent, so an object
    // derived from the driver, or one whose openContent was replaced (the tests' fault injection),
    // is read the usual way.
    if (!(source instanceof FilesystemConnector) || Object.getPrototypeOf(source) !== FilesystemConnector.prototype) return undefined;
    if (source.openContent !== FilesystemConnector.prototype.openContent) return undefined;
    const { rel: sourceRel, version } = decodeId(sourceId, 'id');
    if (version !== undefined) return undefined;
    checkType(target.type);
    const folder = decodeId(target.folderId, 'folderId');
    if (folder.version !== undefined) throw invalid('folderId', 'folders have no versions');
    const rel = joinRel(folder.rel, parseName(target.fileName, 'fileName', folder.rel));
    const abs = this.abs(rel);
    return documentLocks.run(abs, async () => {
      // The thread also refuses a name with a record and a file, leaves one with a record and no file
      // (a document deleted by hand) to createFile's path, which clears it, and writes the new record.
      const result = await copyThread.copy({
        source: source.abs(sourceRel),
        sourceFolders: source.foldersAbove(sourceRel),
        targetFolder: this.abs(folder.rel),
        targetFolderParents: this.foldersAbove(folder.rel),
        target: abs,
        staged: this.store.tempFile('upload'),
        cloneMode: this.store.cloneMode,
        maxBytes: DIRECT_COPY_MAX_BYTES,
        record: {
          database: this.store.databaseFile,
          key: this.store.recordsKey,
          folder: parentOf(rel),
          name: nameOf(rel),
          rel,
          createdBy: actor.username,
          mimeType: declaredMimeType(target.mimeType),
        },
      });
      if (result.step === 'large' || result.step === 'fallback') return undefined;
      if (result.step !== 'copied') throw directCopyError(result, sourceId, target.folderId, rel);
      return encodeId(rel);
    });
  }

  /** The first record of a document just placed at `rel`. */
  private async recordNew(rel: string, stat: StatFields, actor: Actor, mimeType: string | undefined): Promise<void> {
    await this.store.write(rel, firstRecord(rel, stat, { createdBy: actor.username, mimeType: declaredMimeType(mimeType) }), true);
  }

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    const doc = await this.writableDocument(id, 'fileId');
    // Refuse a foreign check-out before reading the upload; checked again under the lock.
    const early = this.store.read(doc.rel);
    if (early) assertNotHeldByOther(early, actor, doc.rel);
    const staged = await this.stage(input.content, id);
    try {
      return await this.mutate(doc.rel, id, 'fileId', async ({ abs, meta }) => {
        assertNotHeldByOther(meta, actor, doc.rel);
        const mimeType = declaredMimeType(input.mimeType) ?? latestVersion(meta).mimeType;
        await this.commitVersion(doc.rel, abs, meta, staged, { modifiedBy: actor.username, mimeType });
        return encodeId(doc.rel);
      });
    } finally {
      unlinkIfPresent(staged);
    }
  }

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    const changes = parsePropertyChanges(properties);
    const doc = await this.writableDocument(id, 'fileId');
    return this.mutate(doc.rel, id, 'fileId', async ({ meta }) => {
      assertNotHeldByOther(meta, actor, doc.rel);
      for (const [name, value] of changes) {
        if (value === '') delete meta.properties[name];
        else meta.properties[name] = value;
      }
      await this.store.write(doc.rel, meta);
      return encodeId(doc.rel);
    });
  }

  async checkOut(id: string, actor: Actor): Promise<string> {
    const doc = await this.writableDocument(id, 'id');
    return this.mutate(doc.rel, id, 'id', async ({ meta }) => {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      if (meta.checkedOutBy === actor.username) return encodeId(doc.rel);
      assertNotHeldByOther(meta, actor, doc.rel);
      meta.checkedOutBy = actor.username;
      meta.checkedOutAt = new Date().toISOString();
      await this.store.write(doc.rel, meta);
      return encodeId(doc.rel);
    });
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw invalid('comment', `must be a text of at most ${MAX_COMMENT_LENGTH} characters`);
    }
    const doc = await this.writableDocument(id, 'id');
    return this.mutate(doc.rel, id, 'id', async ({ abs, meta }) => {
      if (meta.checkedOutBy === undefined) {
        throw new ConflictError(`Document '${repoPath(doc.rel)}' is not checked out`, 'NOT_CHECKED_OUT', { path: repoPath(doc.rel) });
      }
      assertNotHeldByOther(meta, actor, doc.rel);
      // The new version is a copy, not a second link to the live file: a
      // version must not share its inode with a file that can be edited in
      // place by hand, or history would change with it.
      const copy = this.store.tempFile('checkin');
      try {
        await fsp.copyFile(abs, copy, constants.COPYFILE_FICLONE);
        delete meta.checkedOutBy;
        delete meta.checkedOutAt;
        await this.commitVersion(doc.rel, abs, meta, copy, {
          modifiedBy: actor.username,
          mimeType: latestVersion(meta).mimeType,
          comment: comment === '' ? undefined : comment,
        });
      } finally {
        unlinkIfPresent(copy);
      }
      return encodeId(doc.rel);
    });
  }

  async deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string> {
    const { rel } = await this.writableDocument(id, 'id', 'folders are deleted by path');
    return this.mutate(rel, id, 'id', async ({ abs, meta }) => {
      assertNotHeldByOther(meta, actor, rel);
      // Only an explicit false keeps older versions (the spec's default is true).
      if (allVersions !== false || meta.versions.length === 1) {
        unlinkSync(abs);
        await this.store.remove(rel);
        return encodeId(rel);
      }
      const previous = meta.versions[meta.versions.length - 2];
      try {
        renameSync(this.store.versionFile(rel, previous.n), abs);
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') throw new UpstreamError(`Version ${previous.n} of '${repoPath(rel)}' is missing from the metadata folder`);
        throw e;
      }
      meta.versions.pop();
      meta.current = identityOf(lstatSync(abs, { bigint: true }));
      await this.store.write(rel, meta);
      return encodeId(rel);
    });
  }

  async createFolder(folderPath: string, _actor: Actor): Promise<string> {
    if (folderPath === '') throw invalid('path', 'must be the absolute path of a folder');
    const rel = parseFolderPath(folderPath, 'path');
    // One segment at a time with lstat, instead of mkdir -p, which would follow a link in the middle of the path.
    // Synchronous, as the lstat: a job's first documents of a folder wait for it, and a round trip through
    // the pool per segment waited for a busy event loop (~10 ms at the start of a job, jobs README session 23).
    let current = '';
    for (const segment of rel === '' ? [] : rel.split('/')) {
      current = joinRel(current, segment);
      const abs = this.abs(current);
      try {
        mkdirSync(abs);
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw mapFsError(e, repoPath(current), 'path');
      }
      let stat;
      try {
        stat = lstatSync(abs);
      } catch (e) {
        throw mapFsError(e, repoPath(current), 'path');
      }
      if (!stat.isDirectory()) {
        throw new ConflictError(`'${repoPath(current)}' exists and is not a folder`, 'ALREADY_EXISTS', { path: repoPath(current) });
      }
    }
    return encodeId(rel);
  }

  async deleteFolder(folderPath: string, actor: Actor): Promise<string> {
    const rel = parseFolderPath(folderPath, 'path');
    if (rel === '') throw invalid('path', 'the root folder cannot be deleted');
    const display = repoPath(rel);
    const folder = await this.locate(rel, display);
    if (!folder.stat.isDirectory()) throw invalid('path', `'${display}' is a document; documents are deleted by id`);
    const folders = await this.subfolders(rel);
    for (const f of folders) this.assertNoForeignCheckOut(f, actor);
    try {
      // Renamed into the trash first, so the folder disappears at once rather
      // than emptying file by file while others list it.
      await this.locate(rel, display);
      let doomed = await this.store.trashEntry();
      try {
        renameSync(folder.abs, doomed);
      } catch (e) {
        if (errnoCode(e) !== 'EXDEV' && errnoCode(e) !== 'EBUSY') throw e;
        doomed = folder.abs; // a mount point: delete in place
      }
      await this.store.removeFolderTree(rel, folders);
      await fsp.rm(doomed, { recursive: true, force: true });
    } catch (e) {
      throw mapFsError(e, display, 'path');
    }
    return encodeId(rel);
  }

  // ---- helpers ------------------------------------------------------------

  private abs(rel: string): string {
    // A rel is validated (no '.', '..' or empty segment, no leading or trailing '/'), so joining is
    // concatenation; path.join's normalising was a measurable share of a job's CPU (several calls per document).
    const abs = rel === '' ? this.root : this.rootPrefix + rel;
    // Validation already refused everything that could escape; this guards against a future slip.
    if (abs !== this.root && !abs.startsWith(this.rootPrefix)) throw new NotFoundError('item', repoPath(rel));
    return abs;
  }

  /** An existing file or folder, reached without any symbolic link. */
  private async locate(rel: string, identifier: string): Promise<Located> {
    const abs = this.abs(rel);
    try {
      const stat = lstatSync(abs, { bigint: true });
      if (!stat.isFile() && !stat.isDirectory()) throw new NotFoundError('item', identifier);
      this.assertNoLinkAbove(rel, identifier);
      return { rel, abs, stat };
    } catch (e) {
      throw mapFsError(e, identifier);
    }
  }

  /**
   * Every folder between the root and `rel` is a real folder, not a link. The root was resolved
   * to its real path when the connector started, so this is what realpath(abs) === abs checked,
   * for a fraction of the calls: realpath reads every component from `/` down (a readlink each,
   * ten or more per document in a job), this lstats only the ones below the root.
   */
  private assertNoLinkAbove(rel: string, identifier: string): void {
    if (!allRealFolders(this.foldersAbove(rel))) throw new NotFoundError('item', identifier);
  }

  /** The folders between the root and `rel` (the root excluded, `rel` too). */
  private foldersAbove(rel: string): string[] {
    const folders: string[] = [];
    for (let slash = rel.indexOf('/'); slash !== -1; slash = rel.indexOf('/', slash + 1)) folders.push(this.abs(rel.slice(0, slash)));
    return folders;
  }

  private async locateFolder(id: string, parameter: string): Promise<Located> {
    const { rel, version } = decodeId(id, parameter);
    if (version !== undefined) throw invalid(parameter, 'folders have no versions');
    const located = await this.locate(rel, id);
    if (!located.stat.isDirectory()) throw invalid(parameter, `'${id}' names a document, not a folder`);
    return located;
  }

  private async locateDocument(id: string, parameter: string, folderHint = 'a document is expected'): Promise<Located & { version?: number }> {
    const { rel, version } = decodeId(id, parameter);
    const located = await this.locate(rel, id);
    if (located.stat.isDirectory()) throw invalid(parameter, `'${id}' names a folder; ${folderHint}`);
    return { ...located, version };
  }

  /** Changes go to the document; a version id is accepted only when it names the current version. */
  private async writableDocument(id: string, parameter: string, folderHint?: string): Promise<Located> {
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

  /** The document's record as it describes the file now (read-only view: nothing is written). */
  private async currentMeta(located: Located): Promise<DocumentMeta> {
    const meta = this.store.read(located.rel) ?? synthesizeMeta(located.rel, located.stat);
    reconcile(meta, located.stat);
    return meta;
  }

  private async versionTarget(
    located: Located,
    meta: DocumentMeta,
    version: number,
    id: string,
  ): Promise<{ file: string; stat: BigIntStats; record: VersionRecord }> {
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
  private mutate<T>(rel: string, id: string, parameter: string, change: (m: Mutation) => Promise<T>): Promise<T> {
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
  private async commitVersion(
    rel: string,
    abs: string,
    meta: DocumentMeta,
    staged: string,
    record: Pick<VersionRecord, 'modifiedBy' | 'mimeType' | 'comment'>,
  ): Promise<void> {
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

  /** Streams an upload into the metadata folder's tmp/ (same filesystem as the target, so it can be renamed into place). */
  private async stage(content: Readable, identifier: string): Promise<string> {
    if (!content || typeof (content as Partial<Readable>).pipe !== 'function') throw invalid('content', 'must be a readable stream');
    let staged: string;
    try {
      staged = this.store.tempFile('upload');
    } catch (e) {
      throw mapFsError(e, identifier);
    }
    if (await copyWholeFile(content, staged, this.store.cloneMode)) return staged;
    try {
      await pipeline(content, createWriteStream(staged, { flags: 'wx' }));
      return staged;
    } catch (e) {
      unlinkIfPresent(staged);
      if (e instanceof GatewayError) throw e;
      if (WRITE_ERRORS.has(errnoCode(e) ?? '')) throw mapFsError(e, identifier);
      throw invalid('content', `the content could not be read (${((e as Error)?.message ?? String(e)).slice(0, 200)})`);
    }
  }

  /** Whether the file is there; a check that fails counts as not there (the record then holds nothing). */
  private existsQuietly(rel: string): boolean {
    try {
      return this.exists(this.abs(rel), rel);
    } catch {
      return false;
    }
  }

  private exists(abs: string, rel: string): boolean {
    try {
      // throwIfNoEntry: the usual answer (a new document's name is free) then costs no error object,
      // whose message and stack trace were dearer than the lstat itself (about 5% of a job's CPU).
      return lstatSync(abs, { throwIfNoEntry: false }) !== undefined;
    } catch (e) {
      throw mapFsError(e, repoPath(rel));
    }
  }

  private describeEntry(folderRel: string, name: string, records: Map<string, string>, statOrError: BigIntStats | Error): ItemInfo | undefined {
    const rel = joinRel(folderRel, name);
    if (statOrError instanceof Error) {
      // Removed since the directory was read (or a name that does not round-trip through UTF-8).
      if (errnoCode(statOrError) === 'ENOENT' || errnoCode(statOrError) === 'ENOTDIR') return undefined;
      throw mapFsError(statOrError, repoPath(rel));
    }
    const stat = statOrError;
    if (stat.isDirectory()) return folderItem(rel, stat, this.rootName);
    if (!stat.isFile()) return undefined;
    const text = records.get(name);
    const stored = text === undefined ? undefined : this.store.parse(text, rel);
    // A file without a record is described as it is: nothing to reconcile.
    if (stored === undefined) return unrecordedDocumentItem(rel, stat);
    reconcile(stored, stat);
    return documentItem({ id: encodeId(rel), rel, stat, meta: stored, record: latestVersion(stored) });
  }

  /** The folder and every folder below it, without following links. */
  private async subfolders(rel: string): Promise<string[]> {
    const folders = [rel];
    for (let i = 0; i < folders.length; i++) {
      let entries;
      try {
        entries = await fsp.readdir(this.abs(folders[i]), { withFileTypes: true });
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') continue;
        throw mapFsError(e, repoPath(folders[i]), 'path');
      }
      for (const entry of entries) {
        const child = joinRel(folders[i], entry.name);
        if (entry.isDirectory()) folders.push(child);
        else if (isUnknownType(entry) && (await fsp.lstat(this.abs(child)).catch(() => undefined))?.isDirectory()) folders.push(child);
      }
    }
    return folders;
  }

  private assertNoForeignCheckOut(folderRel: string, actor: Actor): void {
    for (const meta of this.store.recordsIn(folderRel)) {
      if (meta.checkedOutBy === undefined || meta.checkedOutBy === actor.username) continue;
      if (parentOf(meta.path) !== folderRel) continue;
      // A record whose file was deleted by hand holds nothing.
      if (!this.existsQuietly(meta.path)) continue;
      throw checkedOutError(meta.checkedOutBy, meta.path);
    }
  }
}

function checkType(type: string | undefined): void {
  if (type === undefined || type === '' || type === DOCUMENT_TYPE) return;
  throw invalid('type', `unknown document type; the types call lists the valid ones ('${DOCUMENT_TYPE}')`);
}

function checkRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw invalid('range', 'must be an inclusive byte range with 0 <= start <= end');
  }
}

function checkLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isSafeInteger(limit) || limit < 1) throw invalid('limit', 'must be a positive integer');
  return limit;
}

function encodeCursor(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  if (typeof cursor !== 'string' || !BASE64URL.test(cursor)) throw invalid('cursor', 'is not a cursor returned by a previous page');
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (encodeCursor(name) !== cursor) throw invalid('cursor', 'is not a cursor returned by a previous page');
  return name;
}

/** Index of the first name strictly after `after` in a sorted array. */
function isUnknownType(d: Dirent): boolean {
  return !d.isFile() && !d.isDirectory() && !d.isSymbolicLink() && !d.isFIFO() && !d.isSocket() && !d.isBlockDevice() && !d.isCharacterDevice();
}

function checkedOutError(holder: string, rel: string): ConflictError {
  return new ConflictError(`Document is checked out by '${holder}'`, 'CHECKED_OUT', { checkedOutBy: holder, path: repoPath(rel) });
}

function assertNotHeldByOther(meta: DocumentMeta, actor: Actor, rel: string): void {
  if (meta.checkedOutBy !== undefined && meta.checkedOutBy !== actor.username) throw checkedOutError(meta.checkedOutBy, rel);
}

/** The error createFile or openContent would have thrown where a direct copy stopped. */
function directCopyError(result: Exclude<DirectCopyAnswer, { step: 'copied' | 'large' | 'fallback' }>, sourceId: string, folderId: string, rel: string): GatewayError {
  const errno = (code: string) => Object.assign(new Error(code), { code });
  switch (result.step) {
    case 'source':
      return mapFsError(errno(result.code), sourceId);
    case 'source-missing':
      return new NotFoundError('item', sourceId);
    case 'source-folder':
      return invalid('id', `'${sourceId}' names a folder; a document is expected`);
    case 'target-folder':
      return mapFsError(errno(result.code), folderId);
    case 'target-folder-missing':
      return new NotFoundError('item', folderId);
    case 'target-not-folder':
      return invalid('folderId', `'${folderId}' names a document, not a folder`);
    case 'exists':
      return alreadyExists(rel);
    case 'target':
      return mapFsError(errno(result.code), repoPath(rel), 'fileName');
    case 'record':
      return mapFsError(Object.assign(new Error(result.message), { code: result.code }), repoPath(rel), 'fileName');
    case 'lost':
      return new UpstreamError(`The copy of '${repoPath(rel)}' was cut (the copy thread stopped); it is not known to be complete`);
  }
}

function alreadyExists(rel: string): ConflictError {
  return new ConflictError(`An item named '${repoPath(rel)}' already exists`, 'ALREADY_EXISTS', { path: repoPath(rel) });
}

/**
 * Moves a staged upload to a path that must not exist yet. link() fails with
 * EEXIST instead of replacing, so a file dropped in by hand meanwhile is never
 * overwritten; rename() is the fallback where hard links are unavailable.
 */
function placeNew(staged: string, abs: string, rel: string): void {
  try {
    linkSync(staged, abs);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') throw alreadyExists(rel);
    if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? '')) throw e;
    renameSync(staged, abs);
  }
}

/**
 * Streams from openContent that cover a whole file, with the file they read. Another
 * filesystem connector (a job copying between two of them) then copies in the kernel
 * (copy_file_range, or a reflink where the filesystem has them) instead of through
 * JavaScript buffers: cp's speed for large files, and a fraction of the calls for small ones.
 */
const wholeFiles = new WeakMap<Readable, string>();

/**
 * Copies `content`'s file to `target` when `content` is an untouched whole-file stream from
 * this driver, then closes the stream. A source path that changed since it was opened holds a
 * newer version written whole by a rename (the gateway never rewrites in place), so the copy is
 * never torn; when the copy fails (the path vanished, say) the caller streams from the still-open descriptor.
 */
async function copyWholeFile(content: Readable, target: string, cloneMode: number): Promise<boolean> {
  const source = wholeFiles.get(content);
  if (source === undefined || content.readableFlowing !== null || content.readableDidRead || content.destroyed) return false;
  try {
    // The callback form: the promise form allocates a stats array per request, measurably dearer per small file.
    await new Promise<void>((resolve, reject) => copyFile(source, target, constants.COPYFILE_EXCL | cloneMode, (e) => (e ? reject(e) : resolve())));
  } catch {
    // Streaming from the open descriptor then either succeeds or reports the error the usual way.
    unlinkQuietly(target);
    return false;
  }
  content.destroy();
  return true;
}

/**
 * What a content stream calls on its descriptor: reads in the thread pool as usual, but close
 * inline. Closing a descriptor opened for reading waits for nothing (no data to flush), and a
 * job copying small files closes one per document: a thread-pool round trip each was as dear
 * as the close itself many times over (see "Which calls block").
 */
const readOnlyFileCalls = {
  open,
  read,
  close(fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void {
    try {
      closeSync(fd);
    } catch (e) {
      callback(e as NodeJS.ErrnoException);
      return;
    }
    callback(null);
  },
};

const LSTAT_BATCH = 256;
/** Items described per batch of a streamed listing (folderBatches without a size of its own). */
const LIST_BATCH = 1000;
/** Directory entries libuv reads per getdents call, and entries taken synchronously before the event loop gets a turn. */
const DIR_READ_BUFFER = 1024;
const DIR_READ_BATCH = 4096;
/**
 * lstat of many entries, in synchronous batches with the event loop free between them.
 * An async lstat costs a thread-pool round trip several times dearer than the call itself,
 * which made listing a 10,000-entry folder mostly wake-ups (bench/folderitems-vs-rclone).
 * Between batches the listing waits for a turn with budget left (@gateway/concurrency
 * turn-budget.ts): a bare setImmediate resumed every listing in flight in the same check phase.
 */
async function lstatMany(files: readonly string[]): Promise<Array<BigIntStats | Error>> {
  const out: Array<BigIntStats | Error> = [];
  for (let i = 0; i < files.length; i += LSTAT_BATCH) {
    if (i > 0) await eventLoopBudget.turn();
    for (const file of files.slice(i, i + LSTAT_BATCH)) {
      try {
        out.push(lstatSync(file, { bigint: true }));
      } catch (e) {
        out.push(e as Error);
      }
    }
  }
  return out;
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
