import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { JobSchedulesRepository, ScheduledStartTaken } from './job-schedules.repository';
import { JobsRepository } from './jobs.repository';

/** The claims of scheduled starts against a real database (SQLite and PostgreSQL, each case on both). */
describe.each(DATABASE_KINDS)('JobSchedulesRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let jobs: JobsRepository<{ n: number }>;
  let starts: JobSchedulesRepository;
  let jobId: number;

  beforeEach(async () => {
    jobs = new JobsRepository(database());
    starts = new JobSchedulesRepository(database());
    jobId = (await jobs.insertJob({ name: 'nightly', group: 'g', origin: 'api', definition: { n: 1 }, now: 1 }))!;
  });

  const scheduledRun = (dueAt: number, nodeId: string, queued = false) =>
    jobs.createRun(jobId, { kind: 'start', startedBy: 'scheduler', now: dueAt + 5, scheduled: { dueAt, nodeId, queued } }, async () => []);

  it('creates the run of a due start once: the node that lost the claim creates nothing, its run number is not used', async () => {
    const run = await scheduledRun(60_000, 'a');
    await expect(scheduledRun(60_000, 'b')).rejects.toBeInstanceOf(ScheduledStartTaken);
    // A start that runs nothing cannot take a start already handled either.
    expect(await starts.record({ jobId, dueAt: 60_000, state: 'skipped', nodeId: 'c', message: 'late' }, 70_000)).toBe(false);
    expect((await jobs.findJob(jobId))!.runCount).toBe(1);
    expect(await jobs.findRun(`${jobId}_2`)).toBeUndefined();
    expect(await starts.starts(jobId)).toEqual([{ jobId, dueAt: 60_000, state: 'started', runId: run.id, nodeId: 'a', message: null }]);
  });

  it('rolls the claim back with a run its plan refused (a run still active)', async () => {
    await expect(jobs.createRun(jobId, { kind: 'start', startedBy: 'scheduler', now: 5, scheduled: { dueAt: 0, nodeId: 'a', queued: false } }, () => Promise.reject(new Error('busy')))).rejects.toThrow('busy');
    expect(await starts.starts(jobId)).toEqual([]);
    expect(await starts.record({ jobId, dueAt: 0, state: 'skipped', nodeId: 'a', message: 'busy' }, 6)).toBe(true);
  });

  it('starts a queued start once, and keeps per job the last due, last skipped and queued one', async () => {
    await scheduledRun(60_000, 'a');
    expect(await starts.record({ jobId, dueAt: 120_000, state: 'queued', nodeId: 'a', message: null }, 120_001)).toBe(true);
    expect(await starts.record({ jobId, dueAt: 180_000, state: 'skipped', nodeId: 'b', message: null }, 180_001)).toBe(true);
    expect((await starts.states([jobId])).get(jobId)).toEqual({ lastDue: 180_000, lastSkipped: 180_000, queued: 120_000 });
    const run = await scheduledRun(120_000, 'b', true);
    await expect(scheduledRun(120_000, 'c', true)).rejects.toBeInstanceOf(ScheduledStartTaken);
    expect((await starts.states([jobId])).get(jobId)).toEqual({ lastDue: 180_000, lastSkipped: 180_000 });
    expect((await starts.starts(jobId))[1]).toMatchObject({ dueAt: 120_000, state: 'started', runId: run.id, nodeId: 'b' });
  });

  it('prunes old starts but each job\'s latest and its queued one; deleting the job deletes its starts', async () => {
    for (const dueAt of [1000, 2000, 3000]) await starts.record({ jobId, dueAt, state: 'missed', nodeId: 'a', message: null }, dueAt);
    await starts.record({ jobId, dueAt: 500, state: 'queued', nodeId: 'a', message: null }, 500);
    await starts.prune(10_000);
    expect((await starts.starts(jobId)).map((s) => s.dueAt)).toEqual([3000, 500]);
    await jobs.deleteJob(jobId);
    expect(await starts.starts(jobId)).toEqual([]);
  });
});
