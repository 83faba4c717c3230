import type { Readable } from 'node:stream';
import { InvalidArgumentError } from '@gateway/connector-api';

/**
 * Cuts an upload into chunks of a fixed size, copied into one buffer that is reused for every chunk:
 * memory stays flat whatever the file's size (no per-chunk allocations for the collector to catch up
 * with), and a chunk can be sent again when SharePoint throttles (a stream already sent could not).
 * A chunk is valid until the next call to next(): the caller sends it, and waits for the answer,
 * before asking for the following one. A failure of the client's stream is the client's: 400 on content.
 */
export class ChunkReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private buffer?: Buffer;
  /** The unread rest of the last piece the stream gave. */
  private carry?: Buffer;
  private done = false;

  constructor(stream: Readable) {
    this.iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  private async pull(): Promise<Buffer | undefined> {
    let step: IteratorResult<Buffer>;
    try {
      step = await this.iterator.next();
    } catch (e) {
      throw new InvalidArgumentError('content', `Invalid parameter 'content': the upload was interrupted (${(e as Error).message})`);
    }
    if (step.done) {
      this.done = true;
      return undefined;
    }
    return Buffer.isBuffer(step.value) ? step.value : Buffer.from(step.value as Uint8Array);
  }

  /** Up to `size` bytes; fewer only at the end. `last` is true once nothing follows. */
  async next(size: number): Promise<{ chunk: Buffer; last: boolean }> {
    if (!this.buffer || this.buffer.length < size) this.buffer = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const piece = this.carry ?? (this.done ? undefined : await this.pull());
      this.carry = undefined;
      if (!piece) break;
      const n = Math.min(piece.length, size - filled);
      piece.copy(this.buffer, filled, 0, n);
      filled += n;
      if (n < piece.length) this.carry = piece.subarray(n);
    }
    // Whether this was the last chunk is only known after one more read when the stream ended on a boundary.
    while (!this.carry && !this.done) {
      const piece = await this.pull();
      if (piece && piece.length > 0) this.carry = piece;
    }
    return { chunk: this.buffer.subarray(0, filled), last: this.done && !this.carry };
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
