import { AbortedWhileQueued, Limiter, mapBounded } from './limiter';

/** A promise settled from outside, to hold a task in flight for as long as a test needs. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Lets every settled promise's callbacks run. */
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('Limiter', () => {
  it('refuses a limit that is not a positive integer', () => {
    expect(() => new Limiter(0)).toThrow(RangeError);
    expect(() => new Limiter(-1)).toThrow('limit must be a positive integer (got -1)');
    expect(() => new Limiter(1.5)).toThrow(RangeError);
    expect(new Limiter(1).limit).toBe(1);
  });

  it('never lets more than `limit` tasks run at once, and runs every task', async () => {
    const limiter = new Limiter(3);
    let running = 0;
    let peak = 0;
    const gates = Array.from({ length: 10 }, () => deferred());
    const all = gates.map((g, i) =>
      limiter.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await g.promise;
        running--;
        return i;
      }),
    );
    await tick();
    expect(running).toBe(3);
    expect(limiter.active).toBe(3);
    expect(limiter.pending).toBe(7);
    for (const g of gates) {
      g.resolve();
      await tick();
    }
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(limiter.active).toBe(0);
    expect(limiter.pending).toBe(0);
  });

  it('grants slots in order of arrival', async () => {
    const limiter = new Limiter(1);
    const order: number[] = [];
    const first = deferred();
    const held = limiter.run(() => first.promise);
    const queued = [1, 2, 3].map((n) => limiter.run(async () => void order.push(n)));
    await tick();
    expect(order).toEqual([]);
    first.resolve();
    await Promise.all([held, ...queued]);
    expect(order).toEqual([1, 2, 3]);
  });

  it('lets a task give up its slot before it returns, releasing it once', async () => {
    const limiter = new Limiter(1);
    const done = deferred();
    const order: string[] = [];
    const first = limiter.run(async (release) => {
      release();
      release();
      await done.promise;
      order.push('first returned');
    });
    const second = limiter.run(async () => void order.push('second ran'));
    const third = limiter.run(async () => void order.push('third ran'));
    await second;
    await third;
    // The early release let second take the slot; first's second release and its return freed nothing more.
    expect(order).toEqual(['second ran', 'third ran']);
    expect(limiter.active).toBe(0);
    done.resolve();
    await first;
    expect(limiter.active).toBe(0);
    const held = deferred();
    const holding = limiter.run(() => held.promise);
    let waited = false;
    const after = limiter.run(() => void (waited = true));
    await Promise.resolve();
    expect(waited).toBe(false);
    held.resolve();
    await Promise.all([holding, after]);
  });

  it('frees the slot of a task that throws, and passes the error on', async () => {
    const limiter = new Limiter(1);
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(() => { throw new Error('sync boom'); })).rejects.toThrow('sync boom');
    expect(limiter.active).toBe(0);
    expect(await limiter.run(() => 42)).toBe(42);
  });

  it('rejects at once, taking no slot, when the signal is already aborted', async () => {
    const limiter = new Limiter(2);
    const fn = jest.fn(async () => 1);
    const reason = new Error('stopped');
    await expect(limiter.run(fn, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
    expect(limiter.active).toBe(0);
  });

  it('lets a queued caller give up its place when its signal aborts; the others keep their order', async () => {
    const limiter = new Limiter(1);
    const hold = deferred();
    const held = limiter.run(() => hold.promise);
    const controller = new AbortController();
    const order: string[] = [];
    const quitter = limiter.run(async () => void order.push('quitter'), controller.signal);
    const stayer = limiter.run(async () => void order.push('stayer'));
    await tick();
    expect(limiter.pending).toBe(2);
    controller.abort(new Error('gave up'));
    await expect(quitter).rejects.toThrow('gave up');
    expect(limiter.pending).toBe(1);
    hold.resolve();
    await Promise.all([held, stayer]);
    expect(order).toEqual(['stayer']);
    expect(limiter.active).toBe(0);
  });

  it('rejects with AbortedWhileQueued when the signal aborts without a reason of its own', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire();
    const signal = { aborted: false, reason: undefined, addEventListener: (_: string, f: () => void) => (abort = f), removeEventListener: () => undefined };
    let abort = () => undefined as void;
    const queued = limiter.acquire(signal as unknown as AbortSignal);
    signal.aborted = true;
    abort();
    await expect(queued).rejects.toBeInstanceOf(AbortedWhileQueued);
    release();
    expect(limiter.active).toBe(0);
  });

  it('ignores an abort that comes after the slot was granted', async () => {
    const limiter = new Limiter(1);
    const controller = new AbortController();
    const release = await limiter.acquire(controller.signal);
    controller.abort();
    expect(limiter.active).toBe(1);
    release();
    expect(limiter.active).toBe(0);
  });

  it('counts a release function called twice as one release', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire();
    const second = limiter.acquire();
    const third = limiter.acquire();
    release();
    release();
    const releaseSecond = await second;
    await tick();
    expect(limiter.active).toBe(1);
    expect(limiter.pending).toBe(1);
    releaseSecond();
    (await third)();
    expect(limiter.active).toBe(0);
  });

  it('does not let a newcomer jump the queue while a freed slot passes to a waiter', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire();
    const order: string[] = [];
    const waiter = limiter.acquire().then((r) => (order.push('waiter'), r));
    release();
    const newcomer = limiter.acquire().then((r) => (order.push('newcomer'), r));
    (await waiter)();
    (await newcomer)();
    expect(order).toEqual(['waiter', 'newcomer']);
  });
});

describe('mapBounded', () => {
  it('maps every item in order with at most `limit` calls in flight', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapBounded([5, 1, 4, 2, 3], 2, async (n, i) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n));
      running--;
      return `${i}:${n * 10}`;
    });
    expect(out).toEqual(['0:50', '1:10', '2:40', '3:20', '4:30']);
    expect(peak).toBe(2);
  });

  it('answers an empty list without calling fn, and accepts a limit above the item count', async () => {
    const fn = jest.fn(async (n: number) => n);
    expect(await mapBounded([], 4, fn)).toEqual([]);
    expect(fn).not.toHaveBeenCalled();
    expect(await mapBounded([7], 100, fn)).toEqual([7]);
  });

  it('accepts a synchronous fn', async () => {
    expect(await mapBounded(['a', 'b'], 1, (s) => s.toUpperCase())).toEqual(['A', 'B']);
  });

  it('refuses a limit that is not a positive integer', async () => {
    await expect(mapBounded([1], 0, async (n) => n)).rejects.toThrow(RangeError);
    await expect(mapBounded([1], 2.5, async (n) => n)).rejects.toThrow('limit must be a positive integer (got 2.5)');
  });

  it('starts no more calls after the first failure and rejects with it once the started calls settled', async () => {
    const started: number[] = [];
    const slow = deferred();
    let slowSettled = false;
    const result = mapBounded([0, 1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      if (n === 0) {
        await slow.promise;
        slowSettled = true;
        return n;
      }
      if (n === 1) throw new Error('item 1 failed');
      return n;
    });
    let rejected = false;
    result.catch(() => (rejected = true));
    await tick();
    expect(started).toEqual([0, 1]);
    expect(rejected).toBe(false); // item 0 is still in flight
    slow.resolve();
    await expect(result).rejects.toThrow('item 1 failed');
    expect(slowSettled).toBe(true);
    expect(started).toEqual([0, 1]);
  });

  it('keeps the first failure when several calls fail', async () => {
    await expect(
      mapBounded([1, 2], 2, async (n) => {
        await new Promise((r) => setTimeout(r, n * 5));
        throw new Error(`failed ${n}`);
      }),
    ).rejects.toThrow('failed 1');
  });

  it('starts no more calls once the signal aborts, and rejects with its reason', async () => {
    const controller = new AbortController();
    const started: number[] = [];
    const result = mapBounded(
      [0, 1, 2, 3],
      1,
      async (n) => {
        started.push(n);
        if (n === 1) controller.abort(new Error('killed'));
        return n;
      },
      controller.signal,
    );
    await expect(result).rejects.toThrow('killed');
    expect(started).toEqual([0, 1]);
  });

  it('calls nothing when the signal is already aborted', async () => {
    const fn = jest.fn(async (n: number) => n);
    await expect(mapBounded([1, 2], 2, fn, AbortSignal.abort(new Error('late')))).rejects.toThrow('late');
    expect(fn).not.toHaveBeenCalled();
  });
});

describe('Limiter with many waiters on one signal', () => {
  it('adds one abort listener per signal, removes it once no waiter uses it, and rejects them all on abort', async () => {
    const limiter = new Limiter(1);
    const hold = await limiter.acquire();
    const controller = new AbortController();
    const added = jest.spyOn(controller.signal, 'addEventListener');
    const removed = jest.spyOn(controller.signal, 'removeEventListener');
    const first = limiter.acquire(controller.signal);
    const rest = Array.from({ length: 50 }, () => limiter.acquire(controller.signal));
    expect(added).toHaveBeenCalledTimes(1);
    hold();
    const releaseFirst = await first;
    expect(removed).not.toHaveBeenCalled(); // the 50 others still wait on it
    controller.abort(new Error('all stop'));
    const outcomes = await Promise.allSettled(rest);
    expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as Error).message === 'all stop')).toBe(true);
    expect(limiter.pending).toBe(0);
    releaseFirst();
    expect(limiter.active).toBe(0);

    const again = new AbortController();
    const removedAgain = jest.spyOn(again.signal, 'removeEventListener');
    const holdAgain = await limiter.acquire();
    const only = limiter.acquire(again.signal);
    holdAgain();
    (await only)();
    expect(removedAgain).toHaveBeenCalledTimes(1);
    again.abort();
    expect(limiter.active).toBe(0);
  });
});
