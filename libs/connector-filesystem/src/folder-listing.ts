import { lstatSync, type BigIntStats, type Dir, type Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { FolderPage, ItemInfo, ListFolderOptions, UnaddressableEntry } from '@gateway/connector-api';
import { eventLoopBudget } from '@gateway/concurrency';
import { errnoCode, mapFsError } from './fs-errors';
import { documentItem, folderItem, unrecordedDocumentItem } from './item-info';
import { latestVersion, reconcile } from './metadata-store';
import { encodeId, invalid, isAddressableName, joinRel, METADATA_FOLDER, nameProblem, repoPath } from './paths';
import type { RepositoryFiles } from './repository-files';
import { SortedNameRuns } from './sorted-names';

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const LSTAT_BATCH = 256;
/** Items described per batch of a streamed listing (folderBatches without a size of its own). */
const LIST_BATCH = 1000;
/** Directory entries libuv reads per getdents call, and entries taken synchronously before the event loop gets a turn. */
const DIR_READ_BUFFER = 1024;
const DIR_READ_BATCH = 4096;

/** listFolder and folderBatches: a folder's entries as items, sorted by name. */
export class FolderListing {
  constructor(private readonly files: RepositoryFiles) {}

  async listFolder(folderId: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    const limit = checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const folder = await this.files.locateFolder(folderId, 'id');
    // The cursor is the last name returned, not an offset, so entries added or
    // removed between pages neither repeat nor skip the others.
    const page: string[] = [];
    let more = false;
    const unaddressable: UnaddressableEntry[] = [];
    const leftOut = after === undefined ? (entry: UnaddressableEntry) => unaddressable.push(entry) : undefined;
    for (const name of (await this.sortedNames(folder, folderId, leftOut)).namesAfter(after)) {
      if (limit !== undefined && page.length === limit) {
        more = true;
        break;
      }
      page.push(name);
    }
    return {
      items: await this.describeNames(folder.rel, folderId, page),
      ...(more && page.length > 0 ? { nextCursor: encodeCursor(page[page.length - 1]) } : {}),
      ...(unaddressable.length > 0 ? { unaddressable } : {}),
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
    const folder = await this.files.locateFolder(folderId, 'id');
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
  private async sortedNames(folder: { rel: string; abs: string }, folderId: string, leftOut?: (entry: UnaddressableEntry) => void): Promise<SortedNameRuns> {
    const sorted = new SortedNameRuns();
    await readListableNames(folder, folderId, (name) => sorted.add(name), leftOut);
    return sorted;
  }

  /** Items of some names of one folder: their records in one query, their lstat in batches; names gone meanwhile are left out. */
  private async describeNames(folderRel: string, folderId: string, names: readonly string[]): Promise<ItemInfo[]> {
    let records: Map<string, string>;
    // The records' query and the first lstats run in a turn with budget left, not wherever the
    // caller resumed (a poll-phase callback, among every other connection's).
    await eventLoopBudget.turn();
    try {
      records = this.files.store.recordTexts(folderRel, names);
    } catch (e) {
      throw mapFsError(e, folderId);
    }
    const stats = await lstatMany(names.map((name) => this.files.abs(joinRel(folderRel, name))));
    const items: ItemInfo[] = [];
    for (const [i, name] of names.entries()) {
      const item = this.describeEntry(folderRel, name, records, stats[i]);
      if (item !== undefined) items.push(item);
    }
    return items;
  }

  private describeEntry(folderRel: string, name: string, records: Map<string, string>, statOrError: BigIntStats | Error): ItemInfo | undefined {
    const rel = joinRel(folderRel, name);
    if (statOrError instanceof Error) {
      // Removed since the directory was read (or a name that does not round-trip through UTF-8).
      if (errnoCode(statOrError) === 'ENOENT' || errnoCode(statOrError) === 'ENOTDIR') return undefined;
      throw mapFsError(statOrError, repoPath(rel));
    }
    const stat = statOrError;
    if (stat.isDirectory()) return folderItem(rel, stat, this.files.rootName);
    if (!stat.isFile()) return undefined;
    const text = records.get(name);
    const stored = text === undefined ? undefined : this.files.store.parse(text, rel);
    // A file without a record is described as it is: nothing to reconcile.
    if (stored === undefined) return unrecordedDocumentItem(rel, stat);
    reconcile(stored, stat);
    return documentItem({ id: encodeId(rel), rel, stat, meta: stored, record: latestVersion(stored) });
  }
}

/**
 * Hands each name a listing shows to `take`, in directory order. Read through opendir so only the
 * names are kept, never a Dirent per entry; synchronously in batches with the event loop free
 * between them, for the reason lstatMany gives (a promise per entry was most of the time on a big
 * folder).
 */
async function readListableNames(
  folder: { rel: string; abs: string },
  folderId: string,
  take: (name: string) => void,
  leftOut?: (entry: UnaddressableEntry) => void,
): Promise<void> {
  const atRoot = folder.rel === '';
  let dir: Dir | undefined;
  try {
    dir = await fsp.opendir(folder.abs, { bufferSize: DIR_READ_BUFFER });
    for (;;) {
      let d: Dirent | null = null;
      for (let n = 0; n < DIR_READ_BATCH && (d = dir.readSync()) !== null; n++) {
        // Links, sockets and devices are dropped by their directory entry type,
        // without a stat; entries of unknown type are settled by the lstat later.
        if (!(d.isFile() || d.isDirectory() || isUnknownType(d))) continue;
        if (isAddressableName(d.name, atRoot)) take(d.name);
        // The connector's own metadata folder is no entry of the repository.
        else if (leftOut && !(atRoot && d.name === METADATA_FOLDER)) {
          leftOut({ name: d.name, baseType: d.isDirectory() ? 'folder' : 'document', reason: `the name ${nameProblem(d.name, atRoot) ?? 'cannot be addressed'}` });
        }
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

/** A directory entry whose type the filesystem does not report (settled by an lstat). */
export function isUnknownType(d: Dirent): boolean {
  return !d.isFile() && !d.isDirectory() && !d.isSymbolicLink() && !d.isFIFO() && !d.isSocket() && !d.isBlockDevice() && !d.isCharacterDevice();
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
