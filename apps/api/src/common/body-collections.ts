import type { Readable } from 'node:stream';
import { v8Collector } from './v8-collector';

/**
 * Request bodies make garbage no code of ours can avoid: node's HTTP server copies every piece of a
 * body into a fresh Buffer (up to 64 KiB, one per socket read) before anything reads it, and V8
 * collects such young ArrayBuffers only once ~32 MiB of them are young, whatever
 * `--max-semi-space-size` says (measured: libs/microsoft-client README, "Memory"). During an upload
 * that sawtooth was the gateway's RSS growth, for every connector, the filesystem one included
 * (1 GiB through SharePoint: +45 MiB; a filesystem upload after it 190–213 MiB).
 *
 * So the body's bytes are counted as the HTTP parser pushes them, and every BODY_COLLECT_BYTES a
 * young-generation collection is asked for. It copies only the live young objects, well under a
 * millisecond, 128 times per GiB received; no full collection is ever forced. Measured (one run each,
 * load 7–9): 1 GiB through SharePoint 166.3 MiB uploading (189–193 without), a filesystem upload after
 * it 174.4 MiB; 128 MiB 167–168 MiB (189–192 without). Downloads need nothing of the kind: where the
 * gateway reads content itself it reads into reused memory (libs/microsoft-client `lent-get.ts`,
 * libs/raw-http `lent-reads.ts`).
 */
export const BODY_COLLECT_BYTES = 8 * 1024 * 1024;

let since = 0;
let collections = 0;
const METERED = Symbol('body bytes metered');

function noteBodyBytes(bytes: number): void {
  since += bytes;
  if (since < BODY_COLLECT_BYTES) return;
  since = 0;
  const gc = v8Collector();
  if (!gc) return;
  collections++;
  gc({ type: 'minor' });
}

/**
 * Counts what the HTTP parser pushes into `body` (the request), without a stream in between: a
 * listener would start the flow before a consumer reads, a Transform costs a hop per chunk.
 */
export function meterBody(body: Readable): void {
  const metered = body as Readable & { [METERED]?: true };
  if (metered[METERED]) return;
  metered[METERED] = true;
  const push = body.push;
  body.push = function (this: Readable, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk) noteBodyBytes((chunk as { length: number }).length);
    return push.call(this, chunk, encoding);
  };
}

/** Young-generation collections asked for so far (for tests). */
export function bodyCollections(): number {
  return collections;
}
