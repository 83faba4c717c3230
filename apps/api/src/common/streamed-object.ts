import { StreamableFile } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { eventLoopBudget } from '@gateway/concurrency';

/** Entries serialised before the listing waits for a turn with budget left (@gateway/concurrency turn-budget.ts). */
const ENTRIES_PER_SLICE = 256;

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
export class StreamedObject {
  private constructor(
    private readonly first: ReadonlyArray<readonly [string, unknown]>,
    private readonly rest: AsyncIterator<ReadonlyArray<readonly [string, unknown]>>,
  ) {}

  /** Reads the first batch now (its errors are thrown here), the rest when written. */
  static async start(batches: AsyncIterable<ReadonlyArray<readonly [string, unknown]>>): Promise<StreamedObject> {
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

  private async *envelopeText(): AsyncGenerator<string> {
    const iterator = this.rest;
    let ended = false;
    try {
      let first = true;
      let text = '{"success":true,"results":{';
      for (let batch: ReadonlyArray<readonly [string, unknown]> | undefined = this.first; batch !== undefined; ) {
        let inSlice = 0;
        for (const [key, value] of batch) {
          if (value === undefined) continue; // as JSON.stringify leaves such a property out
          text += (first ? '' : ',') + JSON.stringify(key) + ':' + JSON.stringify(value);
          first = false;
          if (++inSlice === ENTRIES_PER_SLICE) {
            // A batch is up to 1,000 entries: written in slices, each in a turn with budget left.
            inSlice = 0;
            yield text;
            text = '';
            await eventLoopBudget.turn();
          }
        }
        yield text;
        text = '';
        const next = await iterator.next();
        batch = next.done ? undefined : next.value;
      }
      ended = true;
      yield '}}';
    } finally {
      // The client went away (or writing failed): let the source close what it holds open.
      if (!ended) await iterator.return?.();
    }
  }
}

function emptyIterator<T>(): AsyncIterator<T> {
  return { next: async () => ({ done: true, value: undefined }) };
}
