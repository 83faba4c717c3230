import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream';
import type { CopyGuard } from './document-copier';

/**
 * The guard one document's copy gets: the run's (kill and shutdown still cut the source streams it tracks),
 * and a count of the bytes the copy reads from them, for the run's `bytesRead`. Each stream the copier opens
 * reaches it through a pass-through that counts the chunks as they go by; destroying either end destroys both.
 */
export class CountedReads implements CopyGuard {
  bytes = 0;

  constructor(private readonly run: CopyGuard) {}

  get cancelled(): boolean {
    return this.run.cancelled;
  }

  get halted(): AbortSignal | undefined {
    return this.run.halted;
  }

  track(stream: Readable): Readable {
    const counter = new Transform({
      transform: (chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback) => {
        this.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        done(null, chunk);
      },
    });
    // The error reaches the copier through the counter; the callback only keeps it from being unhandled here.
    pipeline(this.run.track(stream), counter, () => undefined);
    return counter;
  }
}
