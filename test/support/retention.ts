import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// For specs of code that streams batches: whether a batch already written is still referenced
// while the stream waits (what is, at a scavenge then, is promoted to the old generation and stays
// until a full collection).

/**
 * A source of `count` batches made by `make(i)`; those after the first wait until `release(i)`. The
 * object `make` says to track is watched by a WeakRef (`refs[i]`).
 */
export function gatedBatches<B>(count: number, make: (i: number) => { batch: B; tracked: object }) {
  const refs: Array<WeakRef<object>> = [];
  const gates: Array<() => void> = [];
  const opened: Array<Promise<void>> = Array.from({ length: count }, (_, i) => (i === 0 ? Promise.resolve() : new Promise<void>((r) => (gates[i] = r))));
  // A plain iterator, not a generator: a generator's suspended frame would itself hold the last value.
  let next = 0;
  const iterator: AsyncIterator<B> = {
    async next() {
      const i = next++;
      if (i >= count) return { done: true, value: undefined };
      await opened[i];
      const { batch, tracked } = make(i);
      refs.push(new WeakRef(tracked));
      return { done: false, value: batch };
    },
  };
  const batches = (): AsyncIterable<B> => ({ [Symbol.asyncIterator]: () => iterator });
  return { batches, refs, release: (i: number) => gates[i]() };
}

/** Whether nothing references the object any more: a full collection, after the turn that made the WeakRef. */
export async function collectable(ref: WeakRef<object>): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  // gc() without options: with { type: 'major' } V8 (11.3, Node 20) collects without clearing a
  // WeakRef whose target only the stack could still reach, and the test could not tell.
  fullCollection();
  return ref.deref() === undefined;
}

/** The next chunk the response would get, as text. */
export async function nextText(reader: AsyncIterator<Buffer>): Promise<string> {
  const next = await reader.next();
  return next.done ? '' : next.value.toString();
}


let collect: (() => void) | undefined;

/**
 * V8's gc(), for these specs only (the gateway never forces a collection): jest starts its workers
 * without --expose-gc, so the flag is set here and the function read from a fresh context.
 */
function fullCollection(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}
