import {
  GatewayError,
  NotFoundError,
  UpstreamError,
  declaredMimeType,
  type Actor,
  type DirectCopyCapability,
  type DirectCopyDone,
  type LocalFilesCapability,
  type NewFile,
} from '@gateway/connector-api';
import { targetPathOf, type CopyTargetFolder, type DirectCopyAnswer, type DirectCopyRequest } from './direct-copy';
import { DirectCopyThread, directCopyScript } from './direct-copy-thread';
import { LargeCopyThreads } from './large-copy-threads';
import { mapFsError } from './fs-errors';
import { initialProperties } from './properties';
import { decodeId, encodeId, invalid, joinRel, parseName, repoPath } from './paths';
import { alreadyExists, checkType, documentLocks, type RepositoryFiles } from './repository-files';

/** Target folders remembered per instance (targetFolder): a job's tasks copy into a few folders at a time. */
const KNOWN_FOLDERS = 64;

/** Shared by every instance: one thread makes the direct copies' calls (direct-copy-thread.ts). */
const copyThread = new DirectCopyThread(directCopyScript);
/** Larger documents go to the large-copy threads (large-copy-threads.ts), so one does not hold up the small ones queued behind it on the copy thread. */
export const DIRECT_COPY_MAX_BYTES = 1024 * 1024;
const largeCopyThreads = new LargeCopyThreads();

/**
 * The directCopy group: a document of a `localFiles` source (another filesystem connector) copied
 * as openContent + createFile would, with the same checks and errors, but with the calls made on
 * the copy thread (direct-copy.ts) instead of the event loop and the pool. The source is reached
 * through its group alone, whatever wraps the connector (the metrics Proxy); a source whose
 * openContent reads otherwise has withdrawn that group, so it is never copied here.
 */
export class DirectCopies implements DirectCopyCapability {
  private readonly folders = new Map<string, CopyTargetFolder>();

  constructor(private readonly files: RepositoryFiles) {}

  /**
   * Whole current documents, with the SHA-256 of the bytes the thread read and wrote (the target's own
   * hash of what it wrote: the copy job asks no more): up to DIRECT_COPY_MAX_BYTES on the copy thread,
   * larger ones on a large-copy thread. For anything else (a version id, a record left over at the
   * name, a copy that failed) the answer is undefined and the caller streams.
   */
  async copyFrom(source: LocalFilesCapability, sourceId: string, target: Omit<NewFile, 'content'>, actor: Actor, signal?: AbortSignal): Promise<DirectCopyDone | undefined> {
    const from = source.unverifiedFile(sourceId);
    if (from === undefined) return undefined;
    checkType(target.type);
    const properties = initialProperties(target.properties);
    const folder = this.targetFolder(target.folderId);
    const name = parseName(target.fileName, 'fileName', folder.rel);
    const rel = joinRel(folder.rel, name);
    const abs = this.files.abs(rel);
    const store = this.files.store;
    return documentLocks.run(abs, async () => {
      // The thread also refuses a name with a record and a file, leaves one with a record and no file
      // (a document deleted by hand) to createFile's path, which clears it, and writes the new record.
      const request: DirectCopyRequest = {
        source: from.file,
        sourceFolders: from.foldersAbove,
        into: folder,
        name,
        staged: store.tempFile('upload'),
        cloneMode: store.cloneMode,
        maxBytes: DIRECT_COPY_MAX_BYTES,
        record: {
          createdBy: actor.username,
          mimeType: declaredMimeType(target.mimeType),
          ...(properties !== undefined ? { properties } : {}),
        },
      };
      const result = await copyThread.copy(request);
      if (result.step === 'large') return this.copyLarge(request, sourceId, target, actor, signal);
      if (result.step === 'fallback') return undefined;
      if (result.step !== 'copied') throw directCopyError(result, sourceId, target.folderId, rel);
      return { id: encodeId(rel), sha256: result.sha256, size: result.size };
    });
  }

  /**
   * The target folder of a copy, decoded and placed once per folder: a job's documents come in runs
   * of one folder, and decoding its id and building its paths was a measurable share of the event
   * loop's time per document. Holds the last few folders (their ids are checked as decodeId checks).
   */
  private targetFolder(folderId: string): CopyTargetFolder {
    const known = this.folders.get(folderId);
    if (known) return known;
    const { rel, version } = decodeId(folderId, 'folderId');
    if (version !== undefined) throw invalid('folderId', 'folders have no versions');
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a cache cleared sooner or later only costs decodes
    if (this.folders.size >= KNOWN_FOLDERS) this.folders.clear();
    const { store } = this.files;
    const folder = { rel, path: this.files.abs(rel), parents: this.files.foldersAbove(rel), records: { database: store.databaseFile, key: store.recordsKey } };
    this.folders.set(folderId, folder);
    return folder;
  }

  /**
   * A source the copy thread found larger than it takes, copied on a large-copy thread under the
   * same document lock (the copy thread found no record at the name). As createFile, a name taken
   * (by hand) is refused before the copy, not after it. The record is createFile's, written here, and
   * the hash kept as an upload's is (the contentHash group answers it unread).
   */
  private async copyLarge(request: DirectCopyRequest, sourceId: string, target: Omit<NewFile, 'content'>, actor: Actor, signal?: AbortSignal): Promise<DirectCopyDone | undefined> {
    const rel = joinRel(request.into.rel, request.name);
    if (this.files.exists(targetPathOf(request), rel)) throw alreadyExists(rel);
    const result = await largeCopyThreads.copy({ ...request, maxBytes: Number.POSITIVE_INFINITY, chunked: true, record: undefined }, signal);
    if (result.step === 'large' || result.step === 'fallback') return undefined;
    if (result.step !== 'copied') throw directCopyError(result, sourceId, target.folderId, rel);
    try {
      await this.files.recordNew(rel, result.stat, actor, target.mimeType, request.record?.properties);
    } catch (e) {
      throw mapFsError(e, repoPath(rel), 'fileName');
    }
    this.files.written.remember(result.stat, result.sha256);
    return { id: encodeId(rel), sha256: result.sha256, size: Number(result.stat.size) };
  }

  /** The connector closed its records: the threads close their connections to them. */
  forget(): void {
    // The folders name this instance's records: an instance opened again has a new key.
    this.folders.clear();
    copyThread.forget(this.files.store.recordsKey);
  }
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
