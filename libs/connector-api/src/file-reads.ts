import type { ByteRange } from './connector';

const LARGEST_READ = 1024 * 1024;
const SMALLEST_READ = 16 * 1024;

/** What fs.createReadStream needs to read a whole file, or a range of it, the fast way. */
export interface FileReadOptions {
  start: number;
  end: number;
  highWaterMark: number;
}

/**
 * Read-stream options for `size` bytes on disk (whole, or `range`); undefined when
 * nothing is to be read (an empty file). For every reader of local files: the
 * filesystem driver and the user-file store.
 *
 * - Up to 1 MiB per read: the 64 KiB default roughly halves large-file throughput
 *   (bench/download-vs-nginx, bench/public-download-vs-nginx).
 * - No larger than what is asked for: every read allocates a whole chunk, and a 1 MiB
 *   buffer per 1 KiB document made many-small-file jobs spend their time in GC.
 * - The end is always given, so the stream reads exactly the announced bytes: no extra
 *   read to find the end, and no copy of a short read into a smaller buffer.
 */
export function fileReadOptions(size: number, range?: ByteRange): FileReadOptions | undefined {
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  if (end < start) return undefined;
  return { start, end, highWaterMark: Math.min(LARGEST_READ, Math.max(SMALLEST_READ, end - start + 1)) };
}

/**
 * Content streams that read one whole local file, untouched so far, with that file: a driver that keeps
 * content as local files (the filesystem connector) then copies the file in the kernel (copy_file_range, or a
 * reflink) instead of through JavaScript buffers. Marked by whoever opens such a stream (the filesystem
 * driver's own whole-document reads, a finished tus upload); any other driver just reads the stream.
 */
const wholeLocalFiles = new WeakMap<object, string>();

/** Marks `stream` as reading the whole of `file` from its first byte; returns the stream. */
export function markWholeLocalFile<S extends object>(stream: S, file: string): S {
  wholeLocalFiles.set(stream, file);
  return stream;
}

/** The file `stream` was marked as reading whole, if it was. */
export function wholeLocalFileOf(stream: object): string | undefined {
  return wholeLocalFiles.get(stream);
}
