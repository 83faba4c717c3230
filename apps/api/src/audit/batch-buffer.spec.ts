import { BatchBuffer } from './batch-buffer';

describe('BatchBuffer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function buffer(overrides: { maxRows?: number; maxPending?: number; fail?: () => boolean } = {}) {
    const writes: number[][] = [];
    const errors: Array<{ dropped: number }> = [];
    const b = new BatchBuffer<number>({
      intervalMs: 1000,
      maxRows: overrides.maxRows ?? 3,
      maxPending: overrides.maxPending ?? 100,
      write: async (rows) => {
        if (overrides.fail?.()) throw new Error('database away');
        writes.push(rows);
      },
      onError: (_e, dropped) => errors.push({ dropped }),
    });
    return { b, writes, errors };
  }

  it('push only appends: nothing is written until the interval has passed, then one write takes them all', async () => {
    const { b, writes } = buffer({ maxRows: 10 });
    b.push(1);
    b.push(2);
    await jest.advanceTimersByTimeAsync(999);
    expect(writes).toEqual([]);
    expect(b.pending).toBe(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([[1, 2]]);
    expect(b.pending).toBe(0);
  });

  it('a full batch is written at once, without waiting for the interval, in batches of maxRows and in order', async () => {
    const { b, writes } = buffer({ maxRows: 3 });
    for (let i = 1; i <= 7; i++) b.push(i);
    await jest.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('fewer rows than a batch wait for the interval', async () => {
    const { b, writes } = buffer({ maxRows: 3 });
    b.push(1);
    b.push(2);
    await jest.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(writes).toEqual([[1, 2]]);
  });

  it('writes one batch at a time: a flush during a write waits for it', async () => {
    let release!: () => void;
    const started: number[][] = [];
    const b = new BatchBuffer<number>({
      intervalMs: 1000,
      maxRows: 10,
      maxPending: 100,
      write: (rows) => {
        started.push(rows);
        return new Promise<void>((r) => (release = r));
      },
      onError: () => undefined,
    });
    b.push(1);
    const first = b.flush();
    await jest.advanceTimersByTimeAsync(0);
    b.push(2);
    const second = b.flush();
    await jest.advanceTimersByTimeAsync(0);
    expect(started).toEqual([[1]]);
    release();
    await jest.advanceTimersByTimeAsync(0);
    expect(started).toEqual([[1], [2]]);
    release();
    await Promise.all([first, second]);
    expect(b.pending).toBe(0);
  });

  it('a failed write keeps its rows for the next attempt, in order, and drops the oldest beyond maxPending', async () => {
    let failing = true;
    const { b, writes, errors } = buffer({ maxRows: 10, maxPending: 4, fail: () => failing });
    b.push(1);
    b.push(2);
    b.push(3);
    await b.flush();
    expect(errors).toEqual([{ dropped: 0 }]);
    expect(b.pending).toBe(3);
    b.push(4);
    b.push(5);
    await jest.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual([{ dropped: 0 }, { dropped: 1 }]);
    failing = false;
    await jest.advanceTimersByTimeAsync(1000);
    expect(writes).toEqual([[2, 3, 4, 5]]);
  });

  it('close() writes what is left; rows pushed after it are written at once', async () => {
    const { b, writes } = buffer({ maxRows: 10 });
    b.push(1);
    await b.close();
    expect(writes).toEqual([[1]]);
    b.push(2);
    await jest.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([[1], [2]]);
  });

  it('leaves no timer behind once everything is written', async () => {
    const { b } = buffer();
    b.push(1);
    await b.flush();
    expect(jest.getTimerCount()).toBe(0);
  });
});
