/**
 * Serialises tasks per key. Metadata updates are read-modify-write on a JSON
 * file, so two writers on one document must not interleave; different
 * documents still proceed in parallel. The chain holds no rejected promises,
 * so one failing task never poisons the next.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      // Forget the key once nobody queued behind us, so the map does not grow with every document ever touched.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** Like Promise.all over a map, but with at most `limit` calls in flight (libuv has few threads; a 10,000-entry folder must not queue 10,000 stats at once). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
