/**
 * Bounded, abortable concurrency for the whole gateway: document copies of a job, exports,
 * embedded job tasks, the filesystem connector's stats.
 *
 * Written here rather than taken from npm: p-limit and p-queue (the well-kept ones) are
 * ESM-only since their v4/v7 and this project compiles to CommonJS on Node 20, and neither
 * lets a queued caller give up its place with an AbortSignal — which an export stopped while
 * queued, and a job killed while documents wait for a slot, both need.
 */

/** Rejects queued callers whose signal aborted: the signal's reason, or this when it has none. */
export class AbortedWhileQueued extends Error {
  constructor() {
    super('Aborted while waiting for a slot');
    this.name = 'AbortedWhileQueued';
  }
}

interface Waiter {
  grant: () => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
}

/**
 * A FIFO counting semaphore: at most `limit` holders at once; callers beyond wait in order
 * of arrival, and a waiter whose signal aborts leaves the queue (rejecting) without ever
 * taking a slot. Waiters sharing a signal (every task of a stopping queue, every document
 * of a killed run) share one abort listener: thousands of them raise no listener-leak warning.
 */
export class Limiter {
  private readonly waiters: Waiter[] = [];
  private readonly bySignal = new Map<AbortSignal, { waiters: Set<Waiter>; onAbort: () => void }>();
  private holders = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer (got ${limit})`);
  }

  /** Holders now. */
  get active(): number {
    return this.holders;
  }

  /** Callers waiting for a slot. */
  get pending(): number {
    return this.waiters.length;
  }

  /**
   * Waits for a slot; resolves with its release function (calling it twice releases once).
   * Rejects, taking no slot, when `signal` is or becomes aborted before the slot is granted.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(reasonOf(signal));
    if (this.holders < this.limit && this.waiters.length === 0) {
      this.holders++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { grant: () => resolve(this.releaser()), reject, signal };
      this.waiters.push(waiter);
      if (signal) this.watch(signal, waiter);
    });
  }

  /**
   * Runs `fn` once a slot is free, releasing it when `fn` settles. `fn` gets the release function:
   * a caller done with the slot before it returns (an embedded job task whose documents are all
   * handed out) gives it up early; the release when `fn` settles then changes nothing.
   */
  async run<T>(fn: (release: () => void) => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn(release);
    } finally {
      release();
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (!next) {
        this.holders--;
        return;
      }
      // The slot passes straight to the next waiter: holders stays the same.
      if (next.signal) this.unwatch(next.signal, next);
      next.grant();
    };
  }

  private watch(signal: AbortSignal, waiter: Waiter): void {
    let entry = this.bySignal.get(signal);
    if (!entry) {
      const waiters = new Set<Waiter>();
      const onAbort = () => {
        this.bySignal.delete(signal);
        for (const w of waiters) {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          w.reject(reasonOf(signal));
        }
      };
      entry = { waiters, onAbort };
      this.bySignal.set(signal, entry);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    entry.waiters.add(waiter);
  }

  private unwatch(signal: AbortSignal, waiter: Waiter): void {
    const entry = this.bySignal.get(signal);
    if (!entry) return;
    entry.waiters.delete(waiter);
    if (entry.waiters.size === 0) {
      signal.removeEventListener('abort', entry.onAbort);
      this.bySignal.delete(signal);
    }
  }
}

/**
 * Like Promise.all over items.map(fn), with at most `limit` calls in flight, results in the
 * order of `items`. The first failure (or an abort of `signal`) stops it from starting more
 * calls; it rejects with that failure once the calls already started have settled, so
 * nothing of it is still running when the caller hears of the failure.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R> | R,
  signal?: AbortSignal,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer (got ${limit})`);
  if (signal?.aborted) throw reasonOf(signal);
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      if (signal?.aborted) {
        failed = true;
        failure = reasonOf(signal);
        return;
      }
      const index = next++;
      try {
        results[index] = await fn(items[index], index);
      } catch (e) {
        if (!failed) {
          failed = true;
          failure = e;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failure;
  return results;
}

function reasonOf(signal: AbortSignal): unknown {
  return signal.reason ?? new AbortedWhileQueued();
}
