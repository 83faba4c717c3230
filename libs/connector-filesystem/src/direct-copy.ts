import { closeSync, constants, copyFileSync, fstatSync, linkSync, lstatSync, openSync, renameSync } from 'node:fs';
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
  /** The target folder, the folders between the target root and it, and the new file's path. */
  targetFolder: string;
  targetFolderParents: readonly string[];
  target: string;
  /** A fresh name in the target's tmp/ for the staged copy. */
  staged: string;
  /** COPYFILE_FICLONE where the target's filesystem has reflinks (probed at start), else 0. */
  cloneMode: number;
  /** Larger sources are left to the streaming path (answer `large`). */
  maxBytes: number;
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
  | { step: 'lost' };

export interface DirectCopied {
  step: 'copied';
  /** The new file's lstat, what its first record keeps (metadata-store's StatFields). */
  stat: { ino: bigint; size: bigint; mtimeNs: bigint; birthtimeNs: bigint };
}

export type DirectCopyResult = DirectCopied | DirectCopyFailure;

const OPEN_FOR_READING = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function copyDocumentSync(req: DirectCopyRequest): DirectCopyResult {
  let fd = -1;
  try {
    // openContent: the item (a file, not a link), no link above it, opened without following a link.
    try {
      const stat = lstatSync(req.source);
      if (stat.isDirectory()) return { step: 'source-folder' };
      if (!stat.isFile() || !allRealFolders(req.sourceFolders)) return { step: 'source-missing' };
      fd = openSync(req.source, OPEN_FOR_READING);
      const opened = fstatSync(fd);
      // Stryker disable next-line ConditionalExpression: reached only when the path changed between the lstat and the open (a FIFO swapped in); defence in depth, as in openContent
      if (!opened.isFile()) return { step: 'source-missing' };
      if (opened.size > req.maxBytes) return { step: 'large' };
    } catch (e) {
      return { step: 'source', code: errnoOf(e) };
    }
    return copyInto(req);
  } finally {
    if (fd !== -1) closeSync(fd);
  }
}

/**
 * createFile's part: locate the folder, stage a kernel copy, link it into place (link() refuses a
 * taken name). Unlike createFile there is no lstat of the name first: createFile makes it to refuse
 * before reading a possibly large upload; here the copy is at most maxBytes, a name taken by the
 * gateway was refused on the event loop already (its record), and a copy per name taken by hand
 * costs less than an lstat per document.
 */
function copyInto(req: DirectCopyRequest): DirectCopyResult {
  try {
    const folder = lstatSync(req.targetFolder);
    if (!folder.isFile() && !folder.isDirectory()) return { step: 'target-folder-missing' };
    if (!allRealFolders(req.targetFolderParents)) return { step: 'target-folder-missing' };
    if (!folder.isDirectory()) return { step: 'target-not-folder' };
  } catch (e) {
    return { step: 'target-folder', code: errnoOf(e) };
  }
  try {
    copyFileSync(req.source, req.staged, constants.COPYFILE_EXCL | req.cloneMode);
  } catch (e) {
    // As createFile does when its kernel copy fails: stream from the source instead (that path
    // reports the error, if there still is one, the usual way). A staged name that was taken is
    // not ours to remove.
    if (errnoOf(e) !== 'EEXIST') unlinkQuietly(req.staged);
    return { step: 'fallback' };
  }
  try {
    try {
      linkSync(req.staged, req.target);
    } catch (e) {
      const code = errnoOf(e);
      if (code === 'EEXIST') return { step: 'exists' };
      if (!LINK_UNSUPPORTED.has(code)) return { step: 'target', code };
      // No hard links here: rename() would replace a file at the name, so look first (as createFile's lstat does).
      if (lstatSync(req.target, { throwIfNoEntry: false }) !== undefined) return { step: 'exists' };
      renameSync(req.staged, req.target);
    }
    const placed = lstatSync(req.target, { bigint: true });
    return { step: 'copied', stat: { ino: placed.ino, size: placed.size, mtimeNs: placed.mtimeNs, birthtimeNs: placed.birthtimeNs } };
  } catch (e) {
    return { step: 'target', code: errnoOf(e) };
  } finally {
    unlinkQuietly(req.staged);
  }
}

/** Every path is a real folder, not a link to one (lstat): what keeps a path from leaving a connector's root. */
export function allRealFolders(folders: readonly string[]): boolean {
  for (const folder of folders) if (!lstatSync(folder).isDirectory()) return false;
  return true;
}
