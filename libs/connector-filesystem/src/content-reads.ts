import { closeSync, constants, copyFile, createReadStream, fstatSync, open, openSync, read } from 'node:fs';
import { Readable } from 'node:stream';
import { NotFoundError, fileReadOptions, markWholeLocalFile, wholeLocalFileOf, type ByteRange } from '@gateway/connector-api';
import { mapFsError } from './fs-errors';
import { INLINE_READ_MAX_BYTES, InlineFileRead } from './inline-read';
import { unlinkQuietly } from './metadata-store';
import { decodeId, invalid } from './paths';
import type { RepositoryFiles } from './repository-files';

/** openContent: a document's content, or a version's, or a range of it. */
export async function openContent(files: RepositoryFiles, id: string, range?: ByteRange): Promise<Readable> {
  const { rel, version } = decodeId(id, 'id');
  if (range !== undefined) checkRange(range);
  const located = await files.locate(rel, id);
  if (located.stat.isDirectory()) throw invalid('id', `'${id}' names a folder; a document is expected`);
  let file = located.abs;
  if (version !== undefined) file = (await files.versionTarget(located, await files.currentMeta(located), version, id)).file;
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
  if (range === undefined) markWholeLocalFile(stream, file);
  return stream;
}

function checkRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw invalid('range', 'must be an inclusive byte range with 0 <= start <= end');
  }
}

/**
 * Copies `content`'s file to `target` when `content` is an untouched stream marked as reading a
 * whole local file, then closes the stream. A source path that changed since it was opened holds a
 * newer version written whole by a rename (the gateway never rewrites in place), so the copy is
 * never torn; when the copy fails (the path vanished, say) the caller streams from the still-open descriptor.
 */
export async function copyWholeFile(content: Readable, target: string, cloneMode: number): Promise<boolean> {
  // Streams from openContent that cover a whole file (another filesystem connector: a job copying between two
  // of them), and finished tus uploads, are marked with their file (@gateway/connector-api file-reads.ts):
  // copied in the kernel (copy_file_range, or a reflink), cp's speed, a fraction of the calls for small files.
  const source = wholeLocalFileOf(content);
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
