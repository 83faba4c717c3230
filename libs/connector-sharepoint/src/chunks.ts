import type { Readable } from 'node:stream';
import { InvalidArgumentError } from '@gateway/connector-api';

/** Up to `size` bytes of the upload: a view of the reader's buffer, valid until the next chunk is asked for. */
export interface Chunk {
  chunk: Buffer;
  /** Nothing follows this chunk. */
  last: boolean;
}

/**
 * Cuts an upload into chunks of a fixed size, copied into one buffer that is allocated once, at the
 * size of the largest chunk the upload will ask for (`capacity`: the first read of threshold + 1 bytes
 * that decides between a simple and a chunked upload, and the chunks after it), and reused for every
 * chunk. The stream's own pieces are let go as soon as they are copied, so they die young and V8's
 * young-generation collections free them; a list of them held for a whole chunk (10 MiB) would
 * outlive those collections and linger as old garbage until V8's next full collection (README:
 * memory). A chunk can be sent again when SharePoint throttles (a stream already sent could not).
 * A chunk is valid until the next call to next(): the caller sends it, and waits for the answer,
 * before asking for the following one. A failure of the client's stream is the client's: 400 on content.
 */
export class ChunkReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private buffer?: Buffer;
  /** The unread rest of the last piece the stream gave. */
  private carry?: Buffer;
  private done = false;

  constructor(
    stream: Readable,
    private readonly capacity = 0,
  ) {
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
    return Buffer.isBuffer(step.value) ? step.value : Buffer.from(step.value);
  }

  /** Up to `size` bytes; fewer only at the end. `last` is true once nothing follows. */
  async next(size: number): Promise<Chunk> {
    if (!this.buffer || this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(Math.max(size, this.capacity));
    let length = 0;
    while (length < size) {
      const piece = this.carry ?? (this.done ? undefined : await this.pull());
      this.carry = undefined;
      if (!piece) break;
      const n = Math.min(piece.length, size - length);
      piece.copy(this.buffer, length, 0, n);
      length += n;
      if (n < piece.length) this.carry = piece.subarray(n);
    }
    // Whether this was the last chunk is only known after one more read when the stream ended on a boundary.
    while (!this.carry && !this.done) {
      const piece = await this.pull();
      if (piece && piece.length > 0) this.carry = piece;
    }
    return { chunk: this.buffer.subarray(0, length), last: this.done && !this.carry };
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
