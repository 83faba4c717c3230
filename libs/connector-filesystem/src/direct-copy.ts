import { createHash } from 'node:crypto';
import { closeSync, constants, copyFileSync, fstatSync, linkSync, lstatSync, openSync, readSync, renameSync, writeSync, type BigIntStats, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { LINK_UNSUPPORTED, errnoOf, unlinkQuietly } from './fs-calls';

/**
 * One document copied from a filesystem connector into another, with the system calls
 * `openContent` on the source and `createFile` on the target make, in the same order and with
 * the same checks, but synchronously in one place: the connector runs them on its copy thread
 * (direct-copy-thread.ts), so that a job copying many small documents has them made beside
 * the event loop, not on it. Paths only: the caller decoded and validated the ids (paths.ts)
 * and holds the target's document lock; the record is written by the caller.
 */
export interface DirectCopyRequest {
  /** The source file and the folders between the source root and it (each must be a real folder). */
  source: string;
  sourceFolders: readonly string[];
  /** The target folder (shared by the requests into it) and the new file's name in it: one segment, checked by the caller. */
  into: CopyTargetFolder;
  name: string;
  /** A fresh name in the target's tmp/ for the staged copy. */
  staged: string;
  /** COPYFILE_FICLONE where the target's filesystem has reflinks (probed at start), else 0. */
  cloneMode: number;
  /** Larger sources are left to the streaming path (answer `large`). */
  maxBytes: number;
  /**
   * Copy a chunk at a time through one chunk-sized buffer (streamedCopy), whatever the size: the
   * large-copy threads' requests (large-copy-threads.ts, maxBytes unbounded). Otherwise the source is read whole first.
   */
  chunked?: boolean;
  /** The new document's first record, which the copy thread writes into the target's database (absent: none is written). */
  record?: FirstRecordRequest;
}

/**
 * A target folder of direct copies, one object shared by every request into it: the copy thread's
 * messages carry its strings once, not once per document (structured clone keeps an object seen
 * twice in one message as one), which halved a message's cost on the event loop (decision 0110).
 */
export interface CopyTargetFolder {
  /** The folder, and the folders between the target root and it (each must be a real folder). */
  path: string;
  parents: readonly string[];
  /** Its repository-relative path ('' for the root): the folder key of its documents' records. */
  rel: string;
  /** The target's metadata database, and the key of the connector instance that opened it (its connection in the copy thread). */
  records: { database: string; key: string };
}

/** The new file's path: its folder's and its name. */
export function targetPathOf(req: Pick<DirectCopyRequest, 'into' | 'name'>): string {
  return req.into.path.endsWith(sep) ? req.into.path + req.name : `${req.into.path}${sep}${req.name}`;
}

/** What the copy thread records for a copied document besides its place (direct-copy-records.ts). */
export interface FirstRecordRequest {
  createdBy: string;
  /** The declared media type (declaredMimeType), when one was given. */
  mimeType?: string;
  /** The custom properties written with the document (createFile's `properties`, checked on the event loop). */
  properties?: Record<string, string>;
}

/** Where a copy stopped; the connector turns each into the error its own calls would have thrown. */
export type DirectCopyFailure =
  /** An errno from a call on the source (lstat, open, fstat): mapFsError on the source id. */
  | { step: 'source'; code: string }
  /** The source is no regular file, or a folder above it is no real folder: 404 on the source id. */
  | { step: 'source-missing' }
  /** The source is a folder: 400 on the source id. */
  | { step: 'source-folder' }
  /** An errno from a check of the target folder: mapFsError on the folder id. */
  | { step: 'target-folder'; code: string }
  /** The target folder, or one above it, is no real folder: 404 on the folder id. */
  | { step: 'target-folder-missing' }
  /** The target folder id names a document: 400 on folderId. */
  | { step: 'target-not-folder' }
  /** The name is taken (before the copy, or link() refused it): 409. */
  | { step: 'exists' }
  /** An errno from the existence check or from placing the copy: mapFsError on the new path. */
  | { step: 'target'; code: string }
  /** Not copied here, nothing left behind: the caller takes the streaming path (a large source, a failed kernel copy). */
  | { step: 'large' }
  | { step: 'fallback' }
  /** The copy thread stopped before answering (direct-copy-thread.ts): 502, the document is not known to be copied. */
  | { step: 'lost' }
  /** The file was placed but its record could not be committed (SQLite's error): the error createFile's record write would throw. */
  | { step: 'record'; message: string; code?: string };

export interface DirectCopied {
  step: 'copied';
  /** SHA-256 (hex) of the bytes copied, hashed as they were read from the source (the copy job's checksum). */
  sha256: string;
  /** The new file's lstat, what its first record keeps (metadata-store's StatFields). */
  stat: { ino: bigint; size: bigint; mtimeNs: bigint; birthtimeNs: bigint };
}

export type DirectCopyResult = DirectCopied | DirectCopyFailure;

/** What the copy thread answers the event loop: a result, a copy with its hash and size but without its stat (the thread recorded it). */
export type DirectCopyAnswer = { step: 'copied'; sha256: string; size: number } | DirectCopyFailure;

/** A copy's answer to the event loop: what it needs of it, not the stat the records thread keeps (structured clone of BigInts costs it per document). */
export function copiedAnswer(result: DirectCopied): DirectCopyAnswer {
  return { step: 'copied', sha256: result.sha256, size: Number(result.stat.size) };
}

const OPEN_FOR_READING = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_STAGED = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Sources are copied from the descriptor the checks were made on: read once into this thread's
 * buffer, hashed (SHA-256, the copy job's checksum) and written from it, where the kernel copy
 * (copyFileSync) would open the source again by its path, stat it, copy its mode with an fchmod and
 * leave the bytes unseen, so a hash would cost a second read of the source. On a filesystem with
 * reflinks the copy is a clone (no data copied) and the hash a read of the source's descriptor.
 */
const READ_CHUNK_BYTES = 256 * 1024;
/** The buffer of a read copy: a chunk more than a source may have, so one that grew since its fstat is seen to have. */
let readCopyBuffer = Buffer.alloc(0);

function copyBuffer(maxBytes: number): Buffer {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a buffer reallocated at the same size (or on every call) costs more, copies the same
  if (readCopyBuffer.length < maxBytes + READ_CHUNK_BYTES) readCopyBuffer = Buffer.allocUnsafe(maxBytes + READ_CHUNK_BYTES);
  return readCopyBuffer;
}

/**
 * The folder checks of one message of the copy thread (direct-copy-records.ts answerBatch): each
 * folder's lstat is made once per message, not once per document, since a job's documents come in
 * runs of the same source and target folders (four to five of a small document's seven lstats).
 * What it costs: a folder swapped for a link during the message (a few milliseconds) is not seen
 * by the documents after its check, where per document the window was the microseconds between a
 * check and its use. Neither closes it: only calls relative to an open folder (openat, linkat)
 * would, and Node has none. A check that failed fails every document asking it in the message.
 */
export class FolderChecks {
  private readonly stats = new Map<string, Stats | { error: unknown }>();

  lstat(folder: string): Stats {
    let known = this.stats.get(folder);
    if (!known) {
      try {
        known = lstatSync(folder);
      } catch (error) {
        known = { error };
      }
      this.stats.set(folder, known);
    }
    if ('error' in known) throw known.error;
    return known;
  }

  /** allRealFolders through this message's lstats. */
  allReal(folders: readonly string[]): boolean {
    return allRealFolders(folders, (folder) => this.lstat(folder));
  }
}

export function copyDocumentSync(req: DirectCopyRequest, folders = new FolderChecks()): DirectCopyResult {
  let fd = -1;
  try {
    let opened: Stats;
    // openContent: the item (a file, not a link), no link above it, opened without following a link.
    try {
      const stat = lstatSync(req.source);
      if (stat.isDirectory()) return { step: 'source-folder' };
      if (!stat.isFile() || !folders.allReal(req.sourceFolders)) return { step: 'source-missing' };
      fd = openSync(req.source, OPEN_FOR_READING);
      opened = fstatSync(fd);
      // Stryker disable next-line ConditionalExpression: reached only when the path changed between the lstat and the open (a FIFO swapped in); defence in depth, as in openContent
      if (!opened.isFile()) return { step: 'source-missing' };
      if (opened.size > req.maxBytes) return { step: 'large' };
    } catch (e) {
      return { step: 'source', code: errnoOf(e) };
    }
    return copyInto(req, fd, opened, folders);
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

/**
 * createFile's part: locate the folder, stage a copy, link it into place (link() refuses a
 * taken name). Unlike createFile there is no lstat of the name first: createFile makes it to refuse
 * before reading a possibly large upload; here the copy is at most maxBytes, a name taken by the
 * gateway was refused already (its record, direct-copy-records.ts), and a copy per name taken by
 * hand costs less than an lstat per document.
 */
function copyInto(req: DirectCopyRequest, source: number, sourceStat: Stats, folders: FolderChecks): DirectCopyResult {
  try {
    const folder = folders.lstat(req.into.path);
    if (!folder.isFile() && !folder.isDirectory()) return { step: 'target-folder-missing' };
    if (!folders.allReal(req.into.parents)) return { step: 'target-folder-missing' };
    if (!folder.isDirectory()) return { step: 'target-not-folder' };
  } catch (e) {
    return { step: 'target-folder', code: errnoOf(e) };
  }
  let staged: Staged;
  const hash = createHash('sha256');
  try {
    if (req.cloneMode !== 0) staged = cloneCopy(req, source, hash);
    else staged = req.chunked ? streamedCopy(source, sourceStat.mode, req.staged, hash) : readCopy(source, sourceStat.mode, req.staged, req.maxBytes, hash);
  } catch {
    staged = 'failed';
  }
  if (typeof staged !== 'object') {
    // As createFile does when its copy fails: stream from the source instead (that path reports the
    // error, if there still is one, the usual way). A staged name that was taken, or not made, is not ours to remove.
    if (staged === 'failed') unlinkQuietly(req.staged);
    return { step: 'fallback' };
  }
  const target = targetPathOf(req);
  try {
    try {
      linkSync(req.staged, target);
    } catch (e) {
      const code = errnoOf(e);
      if (code === 'EEXIST') return { step: 'exists' };
      if (!LINK_UNSUPPORTED.has(code)) return { step: 'target', code };
      // No hard links here: rename() would replace a file at the name, so look first (as createFile's lstat does).
      if (lstatSync(target, { throwIfNoEntry: false }) !== undefined) return { step: 'exists' };
      renameSync(req.staged, target);
    }
    // The staged file's stat is the placed one's: the link (or rename) placed that inode, and neither changes its size or times.
    return { step: 'copied', sha256: hash.digest('hex'), stat: { ino: staged.ino, size: staged.size, mtimeNs: staged.mtimeNs, birthtimeNs: staged.birthtimeNs } };
  } catch (e) {
    return { step: 'target', code: errnoOf(e) };
  } finally {
    unlinkQuietly(req.staged);
  }
}

/**
 * How staging went: made (the staged file's stat, which is the placed file's: no lstat of the placed
 * name); the name was taken (EEXIST); the source could not be read (nothing made); failed after it was made.
 */
type Staged = BigIntStats | 'taken' | 'unread' | 'failed';

/** A clone of the source (COPYFILE_FICLONE: its extents shared, no data copied), hashed from the checked descriptor; a failure throws. */
function cloneCopy(req: DirectCopyRequest, source: number, hash: ReturnType<typeof createHash>): Staged {
  const buffer = copyBuffer(0);
  try {
    for (let at = 0; ; ) {
      const n = readSync(source, buffer, 0, READ_CHUNK_BYTES, at);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
      at += n;
    }
  } catch {
    return 'unread';
  }
  try {
    copyFileSync(req.source, req.staged, constants.COPYFILE_EXCL | req.cloneMode);
  } catch (e) {
    if (errnoOf(e) === 'EEXIST') return 'taken';
    throw e;
  }
  // No descriptor to fstat: the clone's stat by its (fresh, tmp/) name.
  return lstatSync(req.staged, { bigint: true });
}

/**
 * A source copied from its checked descriptor into a new staged file with the source's mode (less
 * the umask, where the kernel copy sets it exactly), hashed as read. A source that cannot be read,
 * or grew past `maxBytes` since its fstat, is 'unread' (the caller streams it); a failure once made throws.
 */
function readCopy(source: number, mode: number, stagedPath: string, maxBytes: number, hash: ReturnType<typeof createHash>): Staged {
  const buffer = copyBuffer(maxBytes);
  let length = 0;
  try {
    for (;;) {
      const n = readSync(source, buffer, length, buffer.length - length, length);
      if (n === 0) break;
      length += n;
      // Grown since its fstat: the buffer's chunk more than maxBytes lets this be seen.
      if (length > maxBytes) return 'unread';
    }
  } catch {
    return 'unread';
  }
  const content = buffer.subarray(0, length);
  hash.update(content);
  const staged = openStaged(stagedPath, mode);
  if (staged === 'taken') return 'taken';
  try {
    for (let written = 0; written < length; ) written += writeSync(staged, content, written, length - written);
    return fstatSync(staged, { bigint: true });
  } finally {
    closeSync(staged);
  }
}

/** A new staged file with the source's mode (less the umask), or 'taken' when the name exists. */
function openStaged(stagedPath: string, mode: number): number | 'taken' {
  try {
    return openSync(stagedPath, CREATE_STAGED, mode & 0o777);
  } catch (e) {
    // Stryker disable next-line ConditionalExpression: an open with O_CREAT | O_EXCL that fails otherwise made no file, so the caller's removal of the name after a throw finds none
    if (errnoOf(e) === 'EEXIST') return 'taken';
    throw e;
  }
}

/**
 * A source of any size copied from its checked descriptor into a new staged file with the source's
 * mode (less the umask), a chunk at a time through one READ_CHUNK_BYTES buffer, each chunk hashed
 * between its read and its write: memory stays flat, and the chunk is still in the CPU's cache when
 * hashed and written (1 MiB and 4 MiB chunks took 1.5–2.5× the CPU: decision 0092).
 * Until its end, whatever the source then holds (the gateway replaces files by rename, never in place).
 * A failure once staged throws (the caller removes the staged file and streams).
 */
function streamedCopy(source: number, mode: number, stagedPath: string, hash: ReturnType<typeof createHash>): Staged {
  const buffer = copyBuffer(0);
  const staged = openStaged(stagedPath, mode);
  if (staged === 'taken') return 'taken';
  try {
    for (let at = 0; ; ) {
      const n = readSync(source, buffer, 0, READ_CHUNK_BYTES, at);
      if (n === 0) break;
      const chunk = buffer.subarray(0, n);
      hash.update(chunk);
      for (let written = 0; written < n; ) written += writeSync(staged, chunk, written, n - written);
      at += n;
    }
    return fstatSync(staged, { bigint: true });
  } finally {
    closeSync(staged);
  }
}

/** Every path is a real folder, not a link to one (lstat): what keeps a path from leaving a connector's root. */
export function allRealFolders(folders: readonly string[], lstat: (folder: string) => Stats = lstatSync): boolean {
  for (const folder of folders) if (!lstat(folder).isDirectory()) return false;
  return true;
}
