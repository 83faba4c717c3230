import { StreamableFile } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { eventLoopBudget } from '@gateway/concurrency';

/**
 * A JSON object of `results` written entry by entry: a listing of a big folder
 * must not hold every entry (and then its JSON text) at once. The envelope
 * interceptor turns it into the same `{"success":true,"results":{...}}` text
 * JSON.stringify would give, as a stream with backpressure (the next batch is
 * asked for only when the socket took the previous one).
 *
 * The first batch is read by `StreamedObject.start` before the handler returns,
 * so errors about the request (a missing folder, a bad cursor) still reach the
 * exception filter as ordinary answers. A failure after the first byte destroys
 * the response: the client sees a cut connection (chunked encoding never ends),
 * never a well-formed short JSON.
 */
type Batch = ReadonlyArray<readonly [string, unknown]>;

export class StreamedObject {
  /**
   * The batch to write next. It is kept here, not in the generator's frame, and let go of as soon as
   * it is encoded: the generator then waits (for the socket to take the bytes, for the next batch
   * to be described), and whatever it still referenced at a scavenge during that wait was promoted
   * to the old generation, where it stays until a full collection. A 100,000-item listing promoted
   * ~1 MB per scavenge that way, 70-90 MB in all; now nothing.
   */
  private pending: Batch | undefined;
  private prefix = '{"success":true,"results":{';
  private written = false;

  private constructor(
    first: Batch,
    private readonly rest: AsyncIterator<Batch>,
  ) {
    this.pending = first;
  }

  /** Reads the first batch now (its errors are thrown here), the rest when written. */
  static async start(batches: AsyncIterable<Batch>): Promise<StreamedObject> {
    const iterator = batches[Symbol.asyncIterator]();
    const first = await iterator.next();
    return new StreamedObject(first.done ? [] : first.value, first.done ? emptyIterator() : iterator);
  }

  /** The whole envelope, as StreamableFile so Nest pipes it to the response. */
  toEnvelope(): StreamableFile {
    const stream = Readable.from(this.envelopeText(), { objectMode: false });
    return new StreamableFile(stream, { type: 'application/json; charset=utf-8' }).setErrorHandler((error, response) => {
      const res = response as unknown as ServerResponse;
      if (!res.headersSent) {
        // Not expected (the first batch is read before the answer starts), but an answer is owed.
        res.statusCode = 502;
        res.end();
        return;
      }
      res.destroy(error);
    });
  }

  private async *envelopeText(): AsyncGenerator<Buffer> {
    const iterator = this.rest;
    let ended = false;
    try {
      while (this.pending !== undefined) {
        yield this.encodePending();
        this.pending = await nextBatch(iterator);
        // Encoding a batch (up to 1,000 entries) is milliseconds of JSON.stringify: it runs in a turn
        // with budget left (@gateway/concurrency turn-budget.ts), not at the end of the task that
        // described the batch, where it made that task cross the turn's budget by as much.
        if (this.pending !== undefined) await eventLoopBudget.turn();
      }
      ended = true;
      yield Buffer.from('}}');
    } finally {
      // The client went away (or writing failed): let the source close what it holds open.
      if (!ended) await iterator.return?.();
    }
  }

  /** The pending batch as JSON object members (after the envelope's opening, the first time), encoded. */
  private encodePending(): Buffer {
    const batch = this.pending ?? [];
    this.pending = undefined;
    let text = this.prefix;
    this.prefix = '';
    for (const [key, value] of batch) {
      if (value === undefined) continue; // as JSON.stringify leaves such a property out
      text += (this.written ? ',' : '') + JSON.stringify(key) + ':' + JSON.stringify(value);
      this.written = true;
    }
    return Buffer.from(text);
  }
}

/** The next batch, or undefined at the end (the iterator's result object is not kept by the caller). */
async function nextBatch<T>(iterator: AsyncIterator<T>): Promise<T | undefined> {
  const next = await iterator.next();
  return next.done ? undefined : next.value;
}

function emptyIterator<T>(): AsyncIterator<T> {
  return { next: async () => ({ done: true, value: undefined }) };
}
