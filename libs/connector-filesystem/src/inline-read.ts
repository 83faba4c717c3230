import { closeSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';

/**
 * Reads of at most this many bytes are made inline, in one pread, when the stream is first read.
 * Like the lookups (see the README, "Which calls block"), a read this small from the page cache
 * costs a few microseconds; through the thread pool each read, and the read that finds the end,
 * cost a round trip several times dearer (an indexing job of 10,000 small documents spent a
 * tenth of its main-thread time there). Larger reads stream through the thread pool. The memory
 * is bounded by this size, like one chunk of a read stream, whatever the file.
 */
export const INLINE_READ_MAX_BYTES = 16 * 1024;

/**
 * `length` bytes of an open descriptor from `start`, read in one go when first asked for, then
 * the descriptor closed; fewer when the file is shorter by then. Closes the descriptor when
 * destroyed unread. Like a read stream given the descriptor, so callers cannot tell them apart.
 */
export class InlineFileRead extends Readable {
  private fd: number | undefined;

  constructor(
    fd: number,
    private readonly start: number,
    private readonly length: number,
  ) {
    super();
    this.fd = fd;
  }

  override _read(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    const buffer = Buffer.allocUnsafe(this.length);
    let filled = 0;
    try {
      while (filled < this.length) {
        const read = readSync(fd, buffer, filled, this.length - filled, this.start + filled);
        if (read === 0) break;
        filled += read;
      }
      this.release();
    } catch (e) {
      this.destroy(e as Error);
      return;
    }
    if (filled > 0) this.push(filled === this.length ? buffer : buffer.subarray(0, filled));
    this.push(null);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    try {
      this.release();
    } catch (e) {
      error ??= e as Error;
    }
    callback(error);
  }

  private release(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    closeSync(fd);
  }
}
