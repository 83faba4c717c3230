import { PassThrough } from 'node:stream';
import type { JobRunRecord } from '@gateway/persistence';
import { Cancelled, RunWatch, RunWatcher } from './run-watcher';
import { runRecord } from '../../../../test/support/in-memory-job-store';

/** A run source whose answer the test sets. */
function source(initial: JobRunRecord | undefined = runRecord()) {
  const s: { current: JobRunRecord | undefined; reads: number; findRun(id: string): Promise<JobRunRecord | undefined> } = { current: initial, reads: 0, findRun: async (_id: string) => (s.reads++, s.current) };
  return s;
}

describe('RunWatch', () => {
  it('takes documents for its attempt while the run is RUNNING and not failing', () => {
    const w = new RunWatch(runRecord(), 2);
    expect(w.takes(1)).toBe(true);
    expect(w.takes(2)).toBe(false);
    expect(w.halted.aborted).toBe(false);
    expect(w.cancelled).toBe(false);
  });

  it('halts when the run stops taking documents: paused, aborted, failing', () => {
    for (const patch of [{ status: 'PAUSING' as const }, { status: 'ABORTING' as const }, { failed: 2 }, { message: 'task failed' }]) {
      const w = new RunWatch(runRecord(), 2);
      w.update(runRecord(patch));
      expect(w.takes(1)).toBe(false);
      expect(w.halted.aborted).toBe(true);
      expect(w.halted.reason).toBeInstanceOf(Cancelled);
      expect(w.cancelled).toBe(false);
    }
    const below = new RunWatch(runRecord(), 2);
    below.update(runRecord({ failed: 1 }));
    expect(below.takes(1)).toBe(true);
    expect(below.failing).toBe(false);
  });

  it('cuts the streams in flight on kill, and any stream opened after it', () => {
    const w = new RunWatch(runRecord(), 0);
    const inflight = w.track(new PassThrough());
    const finished = new PassThrough();
    w.track(finished);
    finished.end();
    finished.resume();
    expect(w.streams).toBe(2);
    w.update(runRecord({ status: 'ABORTING', cancel: true }));
    expect(inflight.destroyed).toBe(true);
    expect(w.cancelled).toBe(true);
    const late = w.track(new PassThrough());
    expect(late.destroyed).toBe(true);
  });

  it('forgets a stream once it closed', async () => {
    const w = new RunWatch(runRecord(), 0);
    const s = w.track(new PassThrough());
    s.destroy();
    await new Promise((r) => setImmediate(r));
    expect(w.streams).toBe(0);
  });

  it('does not let a cut stream raise an unhandled error', async () => {
    const w = new RunWatch(runRecord(), 0);
    const s = w.track(new PassThrough());
    w.update(runRecord({ cancel: true, status: 'ABORTING' }));
    await new Promise((r) => setImmediate(r));
    expect(s.destroyed).toBe(true);
  });

  it('drops a read of an older attempt, and moves on with a newer one', () => {
    const w = new RunWatch(runRecord({ attempt: 2 }), 0);
    w.update(runRecord({ attempt: 1, status: 'ABORTED', cancel: true }));
    expect(w.takes(2)).toBe(true);
    w.update(runRecord({ attempt: 2, status: 'PAUSING' }));
    expect(w.halted.aborted).toBe(true);
    w.update(runRecord({ attempt: 3 }));
    expect(w.takes(3)).toBe(true);
    expect(w.halted.aborted).toBe(false);
  });

  it('starts a newer attempt from what the lock read, resetting a halt; an older one changes nothing', () => {
    const w = new RunWatch(runRecord(), 0);
    w.update(runRecord({ status: 'ABORTING', cancel: true }));
    w.startAttempt(runRecord({ attempt: 1 }), 5);
    expect(w.cancelled).toBe(true);
    w.startAttempt(runRecord({ attempt: 2 }), 5);
    expect(w).toMatchObject({ attempt: 2, status: 'RUNNING', cancel: false, failing: false, maxErrors: 5 });
    expect(w.takes(2)).toBe(true);
    expect(w.halted.aborted).toBe(false);
  });

  it('stops for good when the process stops, whatever attempt comes next', () => {
    const w = new RunWatch(runRecord(), 0);
    const s = w.track(new PassThrough());
    w.stopProcess();
    expect(s.destroyed).toBe(true);
    expect(w.cancelled).toBe(true);
    expect(w.halted.aborted).toBe(true);
    w.startAttempt(runRecord({ attempt: 2 }), 0);
    w.update(runRecord({ attempt: 3 }));
    expect(w.takes(3)).toBe(false);
    expect(w.halted.aborted).toBe(true);
  });
});

describe('RunWatcher', () => {
  afterEach(() => jest.useRealTimers());

  it('shares one watch per run among its tasks, and forgets it when the last one leaves', async () => {
    const runs = source();
    const watcher = new RunWatcher(runs, 1000);
    const a = watcher.acquire(runRecord(), 0);
    const b = watcher.acquire(runRecord(), 0);
    expect(b).toBe(a);
    expect(a.users).toBe(2);
    watcher.release('1_1');
    expect(watcher.size).toBe(1);
    watcher.release('1_1');
    expect(watcher.size).toBe(0);
    watcher.release('1_1'); // nothing left: no effect
    await watcher.refresh('1_1');
    expect(runs.reads).toBe(0);
  });

  it('refreshes a watched run from the store on notify', async () => {
    const runs = source();
    const watcher = new RunWatcher(runs, 60_000);
    const w = watcher.acquire(runRecord(), 0);
    runs.current = runRecord({ status: 'PAUSING' });
    await watcher.refresh('1_1');
    expect(w.takes(1)).toBe(false);
    runs.current = undefined; // deleted meanwhile: the watch keeps what it knew
    await watcher.refresh('1_1');
    expect(w.status).toBe('PAUSING');
    watcher.release('1_1');
  });

  it('polls the store while a run is watched, and stops polling once it is released', async () => {
    jest.useFakeTimers();
    const runs = source(runRecord({ status: 'ABORTING', cancel: true }));
    const watcher = new RunWatcher(runs, 200);
    const w = watcher.acquire(runRecord(), 0);
    await jest.advanceTimersByTimeAsync(199);
    expect(runs.reads).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs.reads).toBe(1);
    expect(w.cancelled).toBe(true);
    watcher.release('1_1');
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs.reads).toBe(1);
  });

  it('carries a watch over to a newer attempt while tasks of the older one still hold it', () => {
    const watcher = new RunWatcher(source(), 1000);
    const w = watcher.acquire(runRecord(), 0);
    w.update(runRecord({ status: 'PAUSING' }));
    expect(watcher.acquire(runRecord({ attempt: 2 }), 3)).toBe(w);
    expect(w.takes(2)).toBe(true);
    expect(w.maxErrors).toBe(3);
    watcher.release('1_1');
    watcher.release('1_1');
  });

  it('cuts every watched run when the process stops, and hands out stopped watches after that', () => {
    const watcher = new RunWatcher(source(), 1000);
    const w = watcher.acquire(runRecord(), 0);
    const s = w.track(new PassThrough());
    watcher.stopProcess();
    expect(s.destroyed).toBe(true);
    const other = watcher.acquire(runRecord({ id: '2_1' }), 0);
    expect(other.takes(1)).toBe(false);
    watcher.release('1_1');
    watcher.release('2_1');
  });
});
