import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { IdleHeapTrim, IDLE_TRIM_NEW_SPACE_BYTES } from './idle-heap-trim';

const MiB = 1024 * 1024;

function setUp(newSpace = 32 * MiB) {
  const calls: unknown[] = [];
  let size = newSpace;
  const trim = new IdleHeapTrim({ collect: (o) => calls.push(o), newSpaceBytes: () => size });
  const request = () => {
    const res = new EventEmitter();
    trim.middleware()({} as Request, res as unknown as Response, () => undefined);
    return { end: () => res.emit('close') };
  };
  return { trim, calls, request, setSize: (n: number) => (size = n) };
}

describe('IdleHeapTrim', () => {
  it('asks for one minor collection when nothing happened since the last look and new space is large', () => {
    const { trim, calls } = setUp();
    trim.look();
    expect(calls).toEqual([{ type: 'minor' }]);
  });

  it('leaves a busy gateway alone: a request in flight, or one since the last look', () => {
    const { trim, calls, request } = setUp();
    const download = request();
    trim.look();
    trim.look();
    expect(calls).toEqual([]);
    download.end();
    trim.look(); // the request ended since the last look: still not quiet
    expect(calls).toEqual([]);
    trim.look();
    expect(calls).toEqual([{ type: 'minor' }, { type: 'major' }]);
  });

  it('after traffic, the first quiet look also asks for one full collection (downloads leave old Buffers behind)', () => {
    const { trim, calls, request, setSize } = setUp(1024 * 1024);
    request().end();
    trim.look(); // busy since the last look
    expect(calls).toEqual([]);
    trim.look();
    expect(calls).toEqual([{ type: 'major' }]);
    trim.look(); // still quiet: nothing more to give back
    expect(calls).toEqual([{ type: 'major' }]);
    setSize(16 * 1024 * 1024);
    request().end();
    trim.look();
    trim.look();
    expect(calls).toEqual([{ type: 'major' }, { type: 'minor' }, { type: 'major' }]);
  });

  it('does not collect once new space is small again', () => {
    const { trim, calls, setSize } = setUp();
    setSize(IDLE_TRIM_NEW_SPACE_BYTES);
    trim.look();
    expect(calls).toEqual([]);
    setSize(16 * MiB); // traffic grew it back
    trim.look();
    expect(calls).toEqual([{ type: 'minor' }]);
  });

  it('does nothing when the runtime offers no collector', () => {
    const trim = new IdleHeapTrim({ collect: null, newSpaceBytes: () => 32 * MiB });
    trim.start();
    trim.look();
    expect(trim.collected).toBe(0);
    trim.stop();
  });

  it('gets V8 to shrink its new space when quiet (the real collector)', async () => {
    const trim = new IdleHeapTrim({ intervalMs: 200 });
    const { getHeapSpaceStatistics } = await import('node:v8');
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
    // Grow new space as start-up does: a fast allocation of objects that survive a while.
    let keep: unknown[] = [];
    for (let i = 0; i < 3_000_000; i++) {
      keep.push({ i, s: 'x' + i });
      if (keep.length > 200_000) keep = [];
    }
    keep = [];
    expect(newSpace()).toBeGreaterThan(IDLE_TRIM_NEW_SPACE_BYTES);
    trim.start();
    try {
      const deadline = Date.now() + 30_000;
      while (newSpace() > IDLE_TRIM_NEW_SPACE_BYTES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(newSpace()).toBeLessThanOrEqual(IDLE_TRIM_NEW_SPACE_BYTES);
      expect(trim.collected).toBeGreaterThan(0);
    } finally {
      trim.stop();
    }
  });
});
