import type { JobRunRecord, JobsRepository } from '@gateway/persistence';
import { failingReason, limitReason, settle } from './run-lifecycle';

function run(patch: Partial<JobRunRecord> = {}): JobRunRecord {
  return {
    id: '1_1',
    jobId: 1,
    runNumber: 1,
    kind: 'start',
    status: 'RUNNING',
    message: null,
    startedBy: 'admin',
    attempt: 1,
    cancel: false,
    startTime: 1000,
    endTime: null,
    activeMs: 0,
    segmentStart: 1000,
    read: 10,
    written: 5,
    skipped: 0,
    failed: 0,
    removed: 0,
    failedBase: 0,
    ...patch,
  };
}

/** A repository with `tasks` (state per key); records the run updates settle makes. */
function fakeRepo(tasks: Record<string, string>) {
  const updates: Array<Record<string, unknown>> = [];
  const repo = {
    countTasks: async (_trx: unknown, _runId: string, states: string[]) => Object.values(tasks).filter((s) => states.includes(s)).length,
    updateRun: async (_trx: unknown, _runId: string, patch: Record<string, unknown>) => void updates.push(patch),
  } as unknown as JobsRepository;
  return { repo, updates, trx: {} as Parameters<typeof settle>[1] };
}

describe('run lifecycle', () => {
  it('counts the errors since the start or the last resume against options.maxErrors (0 = unlimited)', () => {
    expect(limitReason(run({ failed: 1 }), 2)).toBeUndefined();
    expect(limitReason(run({ failed: 2 }), 2)).toBe("2 documents failed; the job's limit is 2 (options.maxErrors)");
    expect(limitReason(run({ failed: 7, failedBase: 6 }), 2)).toBeUndefined();
    expect(limitReason(run({ failed: 100 }), 0)).toBeUndefined();
  });

  it('calls a RUNNING run failing when its errors reached the limit or a task failed (its message); no other status fails', () => {
    expect(failingReason(run({ failed: 3 }), 3)).toMatch(/limit is 3/);
    expect(failingReason(run({ message: 'Source folder gone' }), 0)).toBe('Source folder gone');
    expect(failingReason(run(), 3)).toBeUndefined();
    expect(failingReason(run({ status: 'PAUSING', failed: 3 }), 3)).toBeUndefined();
    expect(failingReason(run({ status: 'FAILED', message: 'x' }), 0)).toBeUndefined();
  });

  it('keeps a failing run RUNNING while a task is active (recording the reason), then FAILED even with tasks left pending', async () => {
    const busy = fakeRepo({ a: 'active', b: 'pending' });
    expect(await settle(busy.repo, busy.trx, run({ failed: 2 }), 5000, 2)).toBe('RUNNING');
    expect(busy.updates).toEqual([{ message: "2 documents failed; the job's limit is 2 (options.maxErrors)" }]);

    const quiet = fakeRepo({ a: 'done', b: 'pending' });
    expect(await settle(quiet.repo, quiet.trx, run({ failed: 2, message: 'recorded reason' }), 5000, 2)).toBe('FAILED');
    expect(quiet.updates).toEqual([{ status: 'FAILED', message: 'recorded reason', end_time: 5000, active_ms: 4000, segment_start: null }]);
  });

  it('completes a RUNNING run that is not failing only when no task is pending or active', async () => {
    const pending = fakeRepo({ a: 'done', b: 'pending' });
    expect(await settle(pending.repo, pending.trx, run({ failed: 1 }), 5000, 2)).toBe('RUNNING');
    expect(pending.updates).toEqual([]);

    const done = fakeRepo({ a: 'done' });
    expect(await settle(done.repo, done.trx, run({ failed: 1 }), 5000, 2)).toBe('COMPLETED_WITH_ERRORS');
    const clean = fakeRepo({ a: 'done' });
    expect(await settle(clean.repo, clean.trx, run(), 5000)).toBe('COMPLETED');
  });

  it('moves PAUSING and ABORTING on once no task is active', async () => {
    const busy = fakeRepo({ a: 'active' });
    expect(await settle(busy.repo, busy.trx, run({ status: 'ABORTING' }), 5000)).toBe('ABORTING');
    const quiet = fakeRepo({ a: 'pending' });
    expect(await settle(quiet.repo, quiet.trx, run({ status: 'PAUSING' }), 5000)).toBe('PAUSED');
    expect(quiet.updates[0]).toMatchObject({ status: 'PAUSED', cancel: 0 });
  });
});
