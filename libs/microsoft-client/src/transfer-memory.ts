import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Content bytes through the Microsoft connectors between two young-generation collections asked for
 * here. Why (README: memory): every TLS read of a download is a fresh 16 KiB Buffer, and every piece
 * of an upload one the HTTP parser allocated; each is memory outside V8's heap that only a collection
 * frees. The heap objects of a transfer are tiny, so V8's own young-generation collections come
 * rarely, and what collects these buffers in practice is its external-memory trigger: 64 MB of new
 * Buffers since the last full collection, plus what is allocated while its marking runs on a busy
 * machine. That was the gateway's RSS growth during a 1 GiB transfer (+65 to +80 MiB). A minor
 * collection every 4 MiB of content frees them young: it costs well under a millisecond (256 per GiB),
 * whatever the size of the gateway's heap, since only live young objects are copied.
 */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;
/**
 * Every 16th collection (64 MiB) is a full one: a chunk still in flight at a minor collection (in a
 * socket's queue, a stream's buffer) is kept, and one kept twice moves to the old generation, where
 * only a full collection frees it — and V8's own trigger for that counts from the last full collection,
 * so such chunks could pile up to 64 MB. A full collection of the gateway's heap takes tens of
 * milliseconds: 16 per GiB.
 */
const FULL_EVERY = 16;

type Collect = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;
let collect: Collect | null | undefined;
let since = 0;
let collections = 0;

/**
 * V8's gc() without starting the process with --expose-gc: the flag is set at run time and the
 * function read from a fresh context (the main context stays without a global `gc`). Null if the
 * runtime refuses, and transfers then go on without it.
 */
function collector(): Collect | null {
  if (collect !== undefined) return collect;
  const existing = (globalThis as { gc?: Collect }).gc;
  if (typeof existing === 'function') return (collect = existing);
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    collect = typeof fn === 'function' ? (fn as Collect) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/** Counts content bytes sent or received (process-wide); every COLLECT_EVERY_BYTES, a collection. */
export function noteTransferred(bytes: number): void {
  since += bytes;
  if (since < COLLECT_EVERY_BYTES) return;
  since = 0;
  const gc = collector();
  if (!gc) return;
  collections++;
  gc({ type: collections % FULL_EVERY === 0 ? 'major' : 'minor' });
}

/** Collections asked for so far (for tests). */
export function transferCollections(): number {
  return collections;
}
