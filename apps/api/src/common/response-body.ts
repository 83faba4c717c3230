import type { ServerResponse } from 'node:http';
import { finished, type Readable } from 'node:stream';

/**
 * A source whose chunks are lent: once a chunk is written, it is handed back
 * and its memory is read into again (@gateway/content-transport, lent-body.ts).
 * Fresh read buffers for every chunk cost the gateway, with its ~40 MB heap,
 * about half its CPU in garbage collection on a large download. Structural:
 * any source with this method takes part; others are unaffected.
 */
export interface ChunkLender {
  returnChunk(chunk: Uint8Array): void;
}

function isChunkLender(source: Readable): source is Readable & ChunkLender {
  return typeof (source as Partial<ChunkLender>).returnChunk === 'function';
}

/**
 * Writes `source` to `res` and ends it, with backpressure (the source is paused
 * while the client's socket is full) and, when `length` is given, a check that
 * there are exactly that many bytes: content that changed size since it was
 * described must not go out under the old Content-Length (surplus bytes would
 * be read as the next response on a kept-alive connection; a short body would
 * wait for bytes that never come).
 *
 * - The source fails, or has too many or too few bytes: the response is
 *   destroyed (the client sees a cut connection, never a silently short body)
 *   and the promise rejects with the reason.
 * - The client goes away: the source is destroyed and the promise resolves
 *   false (there is nobody to tell); true once every byte went out.
 * - `tally`, when given, gets the bytes the response took and sent on (for the access audit).
 *
 * Written out rather than stream.pipeline(source, check, res): the write
 * callbacks are what tell when a lent chunk can be handed back, and one layer
 * fewer means less work per chunk.
 */
/** The most written in one tick before the source is paused (and the writes go out at the end of the tick). */
const MAX_CORKED_BYTES = 256 * 1024;

export function sendBody(source: Readable, res: ServerResponse, length: number | undefined, tally?: { bytes: number }): Promise<boolean> {
  const lender = isChunkLender(source) ? source : undefined;
  const written = lender ? (chunk: Uint8Array) => (error: Error | null | undefined) => (error ? undefined : lender.returnChunk(chunk)) : undefined;
  return new Promise<boolean>((resolve, reject) => {
    let seen = 0;
    let settled = false;

    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      source.off('data', onData);
      res.off('drain', onDrain);
      stopWatchingSource();
      stopWatchingResponse();
      return true;
    };
    // The bytes the response took and no longer holds (no write callback per chunk: they cost 15-20 % more CPU
    // per GiB, bench/audit-overhead); what a destroyed response still held never left.
    const count = (): void => {
      if (tally) tally.bytes = Math.max(0, seen - res.writableLength);
    };
    const fail = (error: Error): void => {
      if (!settle()) return;
      count();
      source.destroy();
      res.destroy(error);
      reject(error);
    };
    const onData = (data: Buffer | string): void => {
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      seen += chunk.length;
      if (length !== undefined && seen > length) {
        return fail(new Error(`Content is longer than the ${length} bytes announced; it changed while being served`));
      }
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      // Backpressure within the tick too: a source that hands on synchronously must not flood memory.
      const more = written ? res.write(chunk, written(chunk)) : res.write(chunk);
      if (!more && res.writableLength >= MAX_CORKED_BYTES) source.pause();
    };
    // The chunks a source hands on in one tick (one socket read: 16 KiB TLS records, a servlet's 8 KiB
    // chunks) go to the client as one write (writev) instead of a syscall each; backpressure is checked
    // once they are out, or at MAX_CORKED_BYTES.
    let corked = false;
    const uncork = (): void => {
      corked = false;
      res.uncork();
      if (res.writableNeedDrain && !settled) source.pause();
    };
    const onDrain = (): void => {
      source.resume();
    };

    const stopWatchingSource = finished(source, { writable: false }, (error) => {
      if (error) return fail(error);
      if (length !== undefined && seen !== length) {
        return fail(new Error(`Content ended after ${seen} of the ${length} bytes announced; it changed while being served`));
      }
      res.end();
    });
    const stopWatchingResponse = finished(res, (error) => {
      if (!settle()) return;
      // Finished: every byte went out. Otherwise the client went away or its connection failed.
      if (error) source.destroy();
      count();
      resolve(!error);
    });

    res.on('drain', onDrain);
    source.on('data', onData);
    source.resume();
  });
}
