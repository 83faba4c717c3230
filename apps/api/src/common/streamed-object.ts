import { StreamableFile } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

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
    private first: ReadonlyArray<readonly [string, unknown]> | undefined,
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

  /** The first batch, held by this object only until the text takes it. */
  private takeFirst(): ReadonlyArray<readonly [string, unknown]> | undefined {
    const first = this.first;
    this.first = undefined;
    return first;
  }

  private async *envelopeText(): AsyncGenerator<Buffer | string> {
    const iterator = this.rest;
    let ended = false;
    try {
      let first = true;
      let text = '{"success":true,"results":{';
      let batch: ReadonlyArray<readonly [string, unknown]> | undefined = this.takeFirst();
      while (batch !== undefined) {
        for (const [key, value] of batch) {
          if (value === undefined) continue; // as JSON.stringify leaves such a property out
          text += (first ? '' : ',') + JSON.stringify(key) + ':' + JSON.stringify(value);
          first = false;
        }
        // The batch and its text are let go of before the generator waits (for the socket to take
        // the bytes, then for the next batch to be described): anything still referenced at a
        // scavenge during that wait is promoted to the old generation, where it stays until a
        // full collection. Holding them made a 100,000-item listing promote ~1 MB per scavenge,
        // 70-90 MB in all (a batch's text is ~470 KB for a thousand folder items).
        batch = undefined;
        const bytes = Buffer.from(text);
        text = '';
        yield bytes;
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
