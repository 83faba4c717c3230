import type { JobRunRecord, TaskState } from '@gateway/persistence';
import { InMemoryJobStore, runRecord } from '../../../../test/support/in-memory-job-store';
import type { JobDefinition } from '../config/job-definition.dto';
import { closeSegment, failingReason, limitReason, settle } from './run-lifecycle';

const DEF: JobDefinition = {
  jobName: 'j',
  jobGroup: 'g',
  source: { connectorId: 'a', folderPath: '/in', recursive: true },
  target: { connectorId: 'b', folderPath: '/out' },
  options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [] },
};

function run(patch: Partial<JobRunRecord> = {}): JobRunRecord {
  return runRecord({ startTime: 1000, segmentStart: 1000, read: 10, written: 5, ...patch });
}

/** A store holding one run (`patch`) whose tasks are in `tasks` (state per key). */
function storeWith(patch: Partial<JobRunRecord>, tasks: Record<string, TaskState>) {
  const store = new InMemoryJobStore();
  const job = store.addJob(DEF);
  const r = store.addRun(job.id, { ...run(patch), id: `${job.id}_1`, jobId: job.id });
  for (const [key, state] of Object.entries(tasks)) store.tasks.get(r.id)!.set(key, { runId: r.id, key, kind: 'docs', payload: '{}', state });
  return { store, runId: r.id, settleAt: (now: number, maxErrors?: number) => store.transition(r.id, (locked) => settle(locked, now, maxErrors)) };
}

describe('run lifecycle', () => {
  it('counts the errors since the start or the last resume against options.maxErrors (0 = unlimited)', () => {
    expect(limitReason(run({ failed: 1 }), 2)).toBeUndefined();
    expect(limitReason(run({ failed: 2 }), 2)).toBe("2 documents failed; the job's limit is 2 (options.maxErrors)");
    expect(limitReason(run({ failed: 3 }), 2)).toBe("3 documents failed; the job's limit is 2 (options.maxErrors)");
    expect(limitReason(run({ failed: 7, failedBase: 6 }), 2)).toBeUndefined();
    expect(limitReason(run({ failed: 8, failedBase: 6 }), 2)).toBe("2 documents failed; the job's limit is 2 (options.maxErrors)");
    expect(limitReason(run({ failed: 100 }), 0)).toBeUndefined();
    expect(limitReason(run({ failed: 100 }), -1)).toBeUndefined();
  });

  it('calls a RUNNING run failing when its errors reached the limit or a task failed (its message); no other status fails', () => {
    expect(failingReason(run({ failed: 3 }), 3)).toMatch(/limit is 3/);
    expect(failingReason(run({ message: 'Source folder gone' }), 0)).toBe('Source folder gone');
    expect(failingReason(run({ message: 'Source folder gone', failed: 3 }), 3)).toBe('Source folder gone');
    expect(failingReason(run(), 3)).toBeUndefined();
    expect(failingReason(run({ status: 'PAUSING', failed: 3 }), 3)).toBeUndefined();
    expect(failingReason(run({ status: 'FAILED', message: 'x' }), 0)).toBeUndefined();
  });

  it('closes the active segment: adds the time since it opened, never a negative time, nothing when none is open', () => {
    expect(closeSegment(run({ activeMs: 500, segmentStart: 1000 }), 4000)).toEqual({ activeMs: 3500, segmentStart: null });
    expect(closeSegment(run({ activeMs: 500, segmentStart: 5000 }), 4000)).toEqual({ activeMs: 500, segmentStart: null });
    expect(closeSegment(run({ activeMs: 500, segmentStart: null }), 4000)).toEqual({ activeMs: 500, segmentStart: null });
  });

  it('keeps a failing run RUNNING while a task is active, recording the reason as its message', async () => {
    const { store, runId, settleAt } = storeWith({ failed: 2 }, { a: 'active', b: 'pending' });
    expect(await settleAt(5000, 2)).toBe('RUNNING');
    expect(store.runs.get(runId)).toMatchObject({ status: 'RUNNING', message: "2 documents failed; the job's limit is 2 (options.maxErrors)", endTime: null });
  });

  it('keeps the message a failing run already has', async () => {
    const { store, runId, settleAt } = storeWith({ message: 'Source folder gone' }, { a: 'active' });
    expect(await settleAt(5000)).toBe('RUNNING');
    expect(store.runs.get(runId)!.message).toBe('Source folder gone');
  });

  it('fails a failing run once no task is active, even with tasks left pending, closing its segment', async () => {
    const { store, runId, settleAt } = storeWith({ failed: 2, message: 'recorded reason' }, { a: 'done', b: 'pending' });
    expect(await settleAt(5000, 2)).toBe('FAILED');
    expect(store.runs.get(runId)).toMatchObject({ status: 'FAILED', message: 'recorded reason', endTime: 5000, activeMs: 4000, segmentStart: null });
  });

  it('completes a RUNNING run that is not failing only when no task is pending or active', async () => {
    const pending = storeWith({ failed: 1 }, { a: 'done', b: 'pending' });
    expect(await pending.settleAt(5000, 2)).toBe('RUNNING');
    expect(pending.store.runs.get(pending.runId)).toMatchObject({ status: 'RUNNING', message: null, endTime: null, segmentStart: 1000 });

    const active = storeWith({}, { a: 'active' });
    expect(await active.settleAt(5000)).toBe('RUNNING');

    const withErrors = storeWith({ failed: 1 }, { a: 'done' });
    expect(await withErrors.settleAt(5000, 2)).toBe('COMPLETED_WITH_ERRORS');
    expect(withErrors.store.runs.get(withErrors.runId)).toMatchObject({ endTime: 5000, activeMs: 4000, segmentStart: null });

    const clean = storeWith({}, {});
    expect(await clean.settleAt(5000)).toBe('COMPLETED');
    expect(clean.store.runs.get(clean.runId)).toMatchObject({ status: 'COMPLETED', endTime: 5000 });
  });

  it('moves PAUSING on to PAUSED once no task is active, clearing a kill, with no end time', async () => {
    const busy = storeWith({ status: 'PAUSING' }, { a: 'active' });
    expect(await busy.settleAt(5000)).toBe('PAUSING');
    expect(busy.store.runs.get(busy.runId)!.status).toBe('PAUSING');

    const quiet = storeWith({ status: 'PAUSING', cancel: true }, { a: 'pending' });
    expect(await quiet.settleAt(5000)).toBe('PAUSED');
    expect(quiet.store.runs.get(quiet.runId)).toMatchObject({ status: 'PAUSED', cancel: false, endTime: null, activeMs: 4000, segmentStart: null });
  });

  it('moves ABORTING on to ABORTED once no task is active, with an end time', async () => {
    const busy = storeWith({ status: 'ABORTING', cancel: true }, { a: 'active' });
    expect(await busy.settleAt(5000)).toBe('ABORTING');
    expect(busy.store.runs.get(busy.runId)).toMatchObject({ status: 'ABORTING', cancel: true });

    const quiet = storeWith({ status: 'ABORTING', cancel: true }, { a: 'pending', b: 'done' });
    expect(await quiet.settleAt(5000)).toBe('ABORTED');
    expect(quiet.store.runs.get(quiet.runId)).toMatchObject({ status: 'ABORTED', cancel: false, endTime: 5000, activeMs: 4000 });
  });

  it('leaves a run that has ended as it is', async () => {
    for (const status of ['PAUSED', 'ABORTED', 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS'] as const) {
      const { store, runId, settleAt } = storeWith({ status, failed: 5, endTime: 3000 }, {});
      expect(await settleAt(5000, 1)).toBe(status);
      expect(store.runs.get(runId)).toMatchObject({ status, endTime: 3000, segmentStart: 1000 });
    }
  });
});
