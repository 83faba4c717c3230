import type { Readable } from 'node:stream';
import { InvalidArgumentError } from '@gateway/connector-api';

/**
 * Cuts an upload into buffers of a fixed size, one at a time: at most one chunk is held, so memory
 * stays flat whatever the file's size, and each chunk can be sent again when SharePoint throttles
 * (a stream already sent could not). A failure of the client's stream is the client's: 400 on content.
 */
export class ChunkReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private done = false;

  constructor(stream: Readable) {
    this.iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  /** Up to `size` bytes; fewer only at the end (then `last` is true). */
  async next(size: number): Promise<{ chunk: Buffer; last: boolean }> {
    while (!this.done && this.pendingBytes < size) {
      let step: IteratorResult<Buffer>;
      try {
        step = await this.iterator.next();
      } catch (e) {
        throw new InvalidArgumentError('content', `Invalid parameter 'content': the upload was interrupted (${(e as Error).message})`);
      }
      if (step.done) this.done = true;
      else {
        const b = Buffer.isBuffer(step.value) ? step.value : Buffer.from(step.value as Uint8Array);
        this.pending.push(b);
        this.pendingBytes += b.length;
      }
    }
    const all = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    const chunk = all.length > size ? Buffer.from(all.subarray(0, size)) : all;
    const rest = all.length > size ? all.subarray(size) : undefined;
    this.pending = rest ? [rest] : [];
    this.pendingBytes = rest ? rest.length : 0;
    // `last` only once we know nothing follows: a stream ending exactly at a boundary needs one more read.
    if (this.pendingBytes === 0 && !this.done) {
      const step = await this.iterator.next().catch((e: Error) => {
        throw new InvalidArgumentError('content', `Invalid parameter 'content': the upload was interrupted (${e.message})`);
      });
      if (step.done) this.done = true;
      else {
        this.pending = [step.value];
        this.pendingBytes = step.value.length;
      }
    }
    return { chunk, last: this.done && this.pendingBytes === 0 };
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
