/**
 * Serialises tasks per key, in order of arrival; tasks of different keys run in parallel. The
 * filesystem connector's document lock: a change to a document is read-modify-write of its
 * file and record, so two on one document must not interleave. The chain holds no rejected
 * promises, so one failing task never poisons the next.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    // Uncontended (a job's documents, each locked once): no chain to wait on, no turn spent waiting.
    const tail = previous ? previous.then(() => done) : done;
    this.tails.set(key, tail);
    if (previous) await previous;
    try {
      return await task();
    } finally {
      release();
      // Forget the key once nobody queued behind us, so the map does not grow with every document ever touched.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
