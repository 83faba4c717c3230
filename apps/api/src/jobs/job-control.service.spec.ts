import { Logger } from '@nestjs/common';
import { ConflictError, InvalidArgumentError, NotFoundError } from '@gateway/connector-api';
import type { JobRunRecord, TaskState } from '@gateway/persistence';
import { JobControlService } from './job-control.service';
import { jobsFixture, RecordingQueue, type JobsFixture } from '../../../../test/support/jobs-fixture';
import { settle } from './run-lifecycle';
import { parseTask, type DocsPayload } from './task-plan';

/** The control service over the in-memory store: what each control call does to the job's latest run. */
describe('JobControlService', () => {
  let fx: JobsFixture;
  let queue: RecordingQueue;
  let notified: string[];
  let service: JobControlService;
  let jobId: number;

  async function setUp(mode: 'embedded' | 'redis' = 'embedded', auditRetentionDays = 0) {
    fx = await jobsFixture({ auditRetentionDays });
    queue = new RecordingQueue(mode);
    notified = [];
    service = new JobControlService(fx.store, fx.registry, { notify: async (runId: string) => void notified.push(runId) }, queue, fx.config);
    jobId = fx.store.addJob(fx.definition()).id;
  }

  beforeEach(() => setUp());
  afterEach(async () => {
    service.onApplicationShutdown();
    await fx.cleanup();
  });

  /** A run of the job in `status`, with tasks (state per key). */
  function runIn(status: JobRunRecord['status'], tasks: Record<string, TaskState> = {}, patch: Partial<JobRunRecord> = {}): JobRunRecord {
    const run = fx.store.addRun(jobId, { status, ...patch });
    for (const [key, state] of Object.entries(tasks)) fx.store.tasks.get(run.id)!.set(key, { runId: run.id, key, kind: 'docs', payload: '{"items":[]}', state });
    return run;
  }

  const conflict = (code: string) => expect.objectContaining({ code, constructor: ConflictError });

  describe('log lines', () => {
    it('start, pause, resume, abort, kill, completion and failure each write one info line with the job, run and counters', async () => {
      const lines: Array<[Record<string, unknown>, string]> = [];
      const spy = jest.spyOn(Logger.prototype, 'log').mockImplementation((fields: unknown, message?: unknown) => void lines.push([fields as Record<string, unknown>, String(message)]));
      try {
        await service.start(jobId, 'admin');
        const runId = `${jobId}_1`;
        await service.pause(jobId); // nothing in flight: PAUSED at once
        await service.resume(jobId);
        await fx.store.transition(runId, async (locked) => locked.change({ status: 'PAUSED' }));
        await service.abort(jobId);
        expect(lines.map(([, m]) => m)).toEqual([
          `Job ${jobId} started: run ${runId}`,
          `Job ${jobId} paused: run ${runId}`,
          `Job ${jobId} resumed: run ${runId}`,
          `Job ${jobId} aborted: run ${runId}`,
        ]);
        expect(lines[0][0]).toEqual({ jobId, runId, status: 'RUNNING', read: 0, written: 0, skipped: 0, failed: 0, removed: 0, total: 0 });

        lines.length = 0;
        runIn('RUNNING', { a: 'active' }, { read: 4, written: 3 });
        await service.kill(jobId);
        await fx.store.transition(`${jobId}_2`, async (locked) => {
          await locked.setTaskState('a', 'done');
          await settle(locked, 10);
        });
        runIn('RUNNING', {}, { read: 2, written: 2 });
        await fx.store.transition(`${jobId}_3`, (locked) => settle(locked, 10));
        runIn('RUNNING', {}, { read: 2, failed: 2, message: 'Source folder gone' });
        await fx.store.transition(`${jobId}_4`, (locked) => settle(locked, 10, 1));
        expect(lines.map(([f, m]) => [m, f.status, f.read])).toEqual([
          [`Job ${jobId} killed: run ${jobId}_2`, 'ABORTING', 4],
          [`Job ${jobId} completed: run ${jobId}_3`, 'COMPLETED', 2],
          [`Job ${jobId} failed: run ${jobId}_4`, 'FAILED', 2],
        ]);
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('status', () => {
    it('shows a job that never ran as NEW, startable only', async () => {
      const answer = await service.status(jobId);
      expect(answer.message).toBeNull();
      expect(answer.results).toMatchObject({ jobId, jobName: 'copy', jobGroup: 'nightly', jobRunId: null, status: 'NEW', statusName: 'Not run yet', canStartJob: true, canKillJob: false, read: 0 });
    });

    it('shows the latest run with its message, and lists jobs by group', async () => {
      runIn('FAILED', {}, { message: 'Source folder gone', failed: 3, read: 5 });
      const answer = await service.status(jobId);
      expect(answer.message).toBe('Source folder gone');
      expect(answer.results).toMatchObject({ status: 'FAILED', failed: 3, read: 5, jobRunId: `${jobId}_1` });
      const other = fx.store.addJob({ ...fx.definition(), jobName: 'other', jobGroup: 'weekly' }).id;
      expect((await service.statusList()).results!.map((s) => [s.jobId, s.status])).toEqual([
        [jobId, 'FAILED'],
        [other, 'NEW'],
      ]);
      expect((await service.statusList('weekly')).results!.map((s) => s.jobId)).toEqual([other]);
    });

    it('answers 404 for a job that does not exist', async () => {
      await expect(service.status(999)).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.start(999, 'admin')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('start', () => {
    it('creates run 1 RUNNING and queues its root task', async () => {
      const answer = await service.start(jobId, 'alice');
      expect(answer.message).toBe(`Job ${jobId} started: run ${jobId}_1`);
      expect(answer.results).toMatchObject({ status: 'RUNNING', jobRunId: `${jobId}_1`, canPauseJob: true });
      expect(queue.queued).toEqual([{ runId: `${jobId}_1`, key: 'e.root', attempt: 1 }]);
      expect(queue.listing).toEqual(['e.root']);
      expect(parseTask((await fx.store.findTask(`${jobId}_1`, 'e.root'))!)).toEqual({ kind: 'enum', payload: { folderPath: '/in', rel: '' } });
      expect((await fx.store.findRun(`${jobId}_1`))?.startedBy).toBe('alice');
    });

    it('refuses while a run is active, naming the allowed actions, and queues nothing', async () => {
      runIn('RUNNING');
      const refused = service.start(jobId, 'admin');
      await expect(refused).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      await expect(refused).rejects.toThrow(`Job ${jobId} cannot start while RUNNING (Running); allowed: pause, abort, kill`);
      expect(queue.queued).toEqual([]);
      expect(fx.store.jobs.get(jobId)!.runCount).toBe(1);
    });

    it('says "none" when a status allows nothing else', async () => {
      runIn('ABORTING');
      await expect(service.resume(jobId)).rejects.toThrow(`Job ${jobId} cannot resume while ABORTING (Aborting); allowed: kill`);
      await expect(service.pause(jobId)).rejects.toThrow(/cannot pause while ABORTING/);
    });

    it('starts a new run after a finished one (restart)', async () => {
      runIn('COMPLETED');
      expect((await service.start(jobId, 'admin')).results?.jobRunId).toBe(`${jobId}_2`);
    });

    it('refuses a job whose connector is gone, before creating a run', async () => {
      fx.store.jobs.get(jobId)!.definition = { ...fx.definition(), target: { connectorId: 'gone', folderPath: '/' } };
      await expect(service.start(jobId, 'admin')).rejects.toBeInstanceOf(NotFoundError);
      expect(fx.store.runs.size).toBe(0);
    });
  });

  describe('runerrors', () => {
    it('starts a run over the failed documents of the previous run, fetched again by id', async () => {
      const previous = runIn('COMPLETED_WITH_ERRORS', {}, { failed: 2 });
      await fx.store.claimDocs(jobId, previous.id, [{ docId: 'b', relPath: 'sub/b', sourcePath: '/in/sub/b' }, { docId: 'a', relPath: 'a', sourcePath: '/in/a' }, { docId: 'ok', relPath: 'ok', sourcePath: '/in/ok' }], 1);
      await fx.store.finishDocs(jobId, previous.id, [{ docId: 'a', outcome: 'e', sourcePath: '/in/a' }, { docId: 'b', outcome: 'e', sourcePath: '/in/sub/b' }, { docId: 'ok', outcome: 'p', sourcePath: '/in/ok' }], 2);
      const answer = await service.runErrors(jobId, 'bob');
      expect(answer.message).toBe(`Job ${jobId} started over the failed documents of the previous run: run ${jobId}_2`);
      expect(queue.queued).toEqual([{ runId: `${jobId}_2`, key: 'r.0', attempt: 1 }]);
      expect(queue.listing).toEqual([]);
      const task = parseTask((await fx.store.findTask(`${jobId}_2`, 'r.0'))!);
      expect(task.payload as DocsPayload).toEqual({ items: [{ id: 'a', rel: 'a' }, { id: 'b', rel: 'sub/b' }], fetch: true });
      expect((await fx.store.findRun(`${jobId}_2`))?.kind).toBe('runerrors');
    });

    it('refuses when the previous run has no failed documents, or its status does not allow it', async () => {
      runIn('FAILED', {}, { failed: 0 });
      await expect(service.runErrors(jobId, 'bob')).rejects.toMatchObject(conflict('JOB_NO_ERRORS'));
      await expect(service.runErrors(jobId, 'bob')).rejects.toThrow(`Run ${jobId}_1 of job ${jobId} has no failed documents`);
      expect(fx.store.jobs.get(jobId)!.runCount).toBe(1);
      const other = fx.store.addJob({ ...fx.definition(), jobName: 'never-ran' }).id;
      await expect(service.runErrors(other, 'bob')).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      runIn('COMPLETED', {}, { failed: 1 });
      await expect(service.runErrors(jobId, 'bob')).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      expect(queue.queued).toEqual([]);
    });
  });

  describe('dry runs', () => {
    it('starts a dry run as a run of its own, flagged, leaving the job\'s last start as it was', async () => {
      fx.store.jobs.get(jobId)!.updatedAt = 1; // saved long ago: a real start would move it to now
      const answer = await service.start(jobId, 'admin', undefined, true);
      expect(answer.message).toBe(`Job ${jobId} started as a dry run (nothing is written): run ${jobId}_1`);
      expect(answer.results).toMatchObject({ jobRunId: `${jobId}_1`, dryRun: true, status: 'RUNNING' });
      expect(fx.store.jobs.get(jobId)!.updatedAt).toBe(1);
      expect(queue.listing).toEqual(['e.root']);
      await service.abort(jobId);
      await service.start(jobId, 'admin');
      expect(fx.store.jobs.get(jobId)!.updatedAt).toBeGreaterThan(1);
      expect((await fx.store.findRun(`${jobId}_2`))?.dryRun).toBe(false);
    });

    it('refuses a dry run of a sync job, naming dryRun: the plan would not follow its sync state', async () => {
      fx.store.jobs.get(jobId)!.definition.options.mode = 'sync';
      await expect(service.start(jobId, 'admin', undefined, true)).rejects.toMatchObject({ parameter: 'dryRun' });
      expect(fx.store.jobs.get(jobId)!.runCount).toBe(0);
    });

    it('refuses run-errors over a dry run: its failures are predictions', async () => {
      runIn('COMPLETED_WITH_ERRORS', {}, { failed: 2, dryRun: true });
      await expect(service.runErrors(jobId, 'bob')).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      await expect(service.runErrors(jobId, 'bob')).rejects.toThrow(`Run ${jobId}_1 of job ${jobId} is a dry run: start a real run instead`);
      expect(fx.store.jobs.get(jobId)!.runCount).toBe(1);
      expect(queue.queued).toEqual([]);
    });
  });

  describe('pause, abort, kill', () => {
    it('pauses a run with a task in flight to PAUSING, and tells the local workers', async () => {
      const run = runIn('RUNNING', { a: 'active', b: 'pending' });
      const answer = await service.pause(jobId);
      expect(answer.message).toBe(`Job ${jobId} paused: run ${run.id}`);
      expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'PAUSING', cancel: false });
      expect(notified).toEqual([run.id]);
    });

    it('pauses a run with nothing in flight straight to PAUSED', async () => {
      const run = runIn('RUNNING', { b: 'pending' });
      expect((await service.pause(jobId)).results?.status).toBe('PAUSED');
      expect(fx.store.runs.get(run.id)!.endTime).toBeNull();
    });

    it('aborts to ABORTING while a task is in flight, without cutting it', async () => {
      const run = runIn('RUNNING', { a: 'active' });
      expect((await service.abort(jobId)).message).toBe(`Job ${jobId} aborted: run ${run.id}`);
      expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'ABORTING', cancel: false });
    });

    it('aborts a paused run at once, with an end time', async () => {
      const run = runIn('PAUSED', { b: 'pending' }, { segmentStart: null });
      await service.abort(jobId);
      expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'ABORTED', endTime: expect.any(Number) });
    });

    it('kills: ABORTING with the cancel flag while a task is in flight; ABORTED, flag cleared, once none is', async () => {
      const run = runIn('PAUSING', { a: 'active' });
      expect((await service.kill(jobId)).message).toBe(`Job ${jobId} killed: run ${run.id}`);
      expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'ABORTING', cancel: true });
      expect(notified).toEqual([run.id]);

      fx.store.tasks.get(run.id)!.get('a')!.state = 'pending';
      const other = fx.store.addJob({ ...fx.definition(), jobName: 'k2' }).id;
      const quiet = fx.store.addRun(other, { status: 'RUNNING' });
      await service.kill(other);
      expect(fx.store.runs.get(quiet.id)).toMatchObject({ status: 'ABORTED', cancel: false });
    });

    it('refuses to pause what is not running', async () => {
      runIn('PAUSED');
      await expect(service.pause(jobId)).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      await expect(service.kill(jobId)).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      expect(notified).toEqual([]);
    });
  });

  describe('resume', () => {
    it('continues the same run in a new attempt: unfinished tasks queued again (listings in their lane), rows left active reset, failure budget from now', async () => {
      const run = runIn('FAILED', { a: 'done', b: 'active', 'e.next': 'pending', c: 'pending' }, { failed: 4, message: 'limit', cancel: true, endTime: 50, attempt: 2, segmentStart: null });
      const answer = await service.resume(jobId);
      expect(answer.message).toBe(`Job ${jobId} resumed: run ${run.id}`);
      expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'RUNNING', attempt: 3, failedBase: 4, cancel: false, message: null, endTime: null, segmentStart: expect.any(Number) });
      expect(fx.store.taskStates(run.id)).toEqual({ a: 'done', b: 'pending', 'e.next': 'pending', c: 'pending' });
      expect(queue.queued).toEqual([
        { runId: run.id, key: 'b', attempt: 3 },
        { runId: run.id, key: 'c', attempt: 3 },
        { runId: run.id, key: 'e.next', attempt: 3 },
      ]);
      expect(queue.listing).toEqual(['e.next']);
      expect(notified).toEqual([run.id]);
    });

    it('completes a resumed run that has nothing left to do', async () => {
      const run = runIn('PAUSED', { a: 'done' });
      expect((await service.resume(jobId)).results?.status).toBe('COMPLETED');
      expect(queue.queued).toEqual([]);
      expect(fx.store.runs.get(run.id)!.endTime).toEqual(expect.any(Number));
    });

    it('refuses to resume a job that never ran, or a completed run', async () => {
      await expect(service.resume(jobId)).rejects.toMatchObject(conflict('JOB_STATE_CONFLICT'));
      runIn('COMPLETED');
      await expect(service.resume(jobId)).rejects.toThrow(/cannot resume while COMPLETED \(Completed\); allowed: start, restart/);
    });
  });

  describe('audit look-up', () => {
    it('answers the latest record of a type for a document as one line', async () => {
      const run = runIn('RUNNING');
      await fx.store.claimDocs(jobId, run.id, [{ docId: 'doc-1', relPath: 'a.txt', sourcePath: '/in/a.txt' }], Date.UTC(2026, 0, 2, 3, 4, 5));
      await fx.store.finishDocs(jobId, run.id, [{ docId: 'doc-1', outcome: 'e', sourcePath: '/in/a.txt', message: 'NOT_FOUND: gone' }], Date.UTC(2026, 0, 2, 3, 4, 6));
      const read = await service.recordStatus(jobId, 'doc-1', 'r');
      expect(read.message).toBeNull();
      expect(read.results).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:05 run ${run.id} READ source=doc-1 path=/in/a.txt$`));
      expect((await service.recordStatus(jobId, 'doc-1', 'e')).results).toMatch(/ERROR source=doc-1 path=\/in\/a.txt: NOT_FOUND: gone$/);
      await fx.store.finishDocs(jobId, run.id, [], 0);
      const other = fx.store.addRun(jobId);
      await fx.store.claimDocs(jobId, other.id, [{ docId: 'doc-1', relPath: 'a.txt', sourcePath: '/in/a.txt' }], 10);
      await fx.store.finishDocs(jobId, other.id, [{ docId: 'doc-1', outcome: 'p', sourcePath: '/in/a.txt', targetId: 'T1' }], 11);
      expect((await service.recordStatus(jobId, 'doc-1', 'p')).results).toMatch(/PROCESSED source=doc-1 path=\/in\/a.txt target=T1$/);
    });

    it('refuses an unknown record type, and answers 404 for a document without such a record', async () => {
      const bad = service.recordStatus(jobId, 'doc-1', 'x');
      await expect(bad).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(bad).rejects.toThrow("Invalid parameter 'recordType': must be one of p, r, e, d, s (got 'x')");
      await expect(service.recordStatus(jobId, 'doc-1', 'd')).rejects.toThrow(`No DUPLICATE record of job ${jobId} for document 'doc-1'`);
      await expect(service.recordStatus(999, 'doc-1', 'p')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('start-up', () => {
    it('embedded: fails a run the stopped process left RUNNING and settles one it left stopping, resetting active rows', async () => {
      const running = runIn('RUNNING', { a: 'active', b: 'pending' });
      const other = fx.store.addJob({ ...fx.definition(), jobName: 'other' }).id;
      const pausing = fx.store.addRun(other, { status: 'PAUSING' });
      fx.store.tasks.get(pausing.id)!.set('x', { runId: pausing.id, key: 'x', kind: 'docs', payload: '{}', state: 'active' });
      const done = fx.store.addRun(fx.store.addJob({ ...fx.definition(), jobName: 'done' }).id, { status: 'COMPLETED', endTime: 7 });
      await service.onApplicationBootstrap();
      expect(fx.store.runs.get(running.id)).toMatchObject({ status: 'FAILED', message: 'The gateway stopped during the run; resume continues it', endTime: expect.any(Number), segmentStart: null });
      expect(fx.store.taskStates(running.id)).toEqual({ a: 'pending', b: 'pending' });
      expect(fx.store.runs.get(pausing.id)).toMatchObject({ status: 'PAUSED' });
      expect(fx.store.runs.get(done.id)).toMatchObject({ status: 'COMPLETED', endTime: 7 });
    });

    it('redis: leaves runs open (other processes may be working on them) and queues their unfinished tasks again', async () => {
      await fx.cleanup();
      await setUp('redis');
      // A start whose process died after the commit and before the enqueue: the root task exists only in the database.
      const running = runIn('RUNNING', { a: 'active', b: 'done', 'e.root': 'pending' }, { attempt: 2 });
      const settled = fx.store.addRun(fx.store.addJob({ ...fx.definition(), jobName: 'all-done' }).id, { status: 'RUNNING' });
      fx.store.tasks.get(settled.id)!.set('x', { runId: settled.id, key: 'x', kind: 'docs', payload: '{}', state: 'done' });
      await service.onApplicationBootstrap();
      expect(fx.store.runs.get(running.id)).toMatchObject({ status: 'RUNNING' });
      expect(fx.store.taskStates(running.id)).toEqual({ a: 'active', b: 'done', 'e.root': 'pending' });
      expect(queue.queued).toEqual([
        { runId: running.id, key: 'a', attempt: 2 },
        { runId: running.id, key: 'e.root', attempt: 2 },
      ]);
      expect(queue.listing).toEqual(['e.root']);
      expect(fx.store.runs.get(settled.id)).toMatchObject({ status: 'COMPLETED' });
    });

    it('prunes audit records older than the retention at start-up, and keeps them all when it is 0', async () => {
      const run = runIn('RUNNING');
      const old = Date.now() - 3 * 24 * 3_600_000;
      await fx.store.claimDocs(jobId, run.id, [{ docId: 'old', relPath: 'o', sourcePath: '/in/o' }], old);
      await fx.store.finishDocs(jobId, run.id, [{ docId: 'old', outcome: 'p', sourcePath: '/in/o' }], old);
      await fx.store.claimDocs(jobId, run.id, [{ docId: 'new', relPath: 'n', sourcePath: '/in/n' }], Date.now());
      await fx.store.finishDocs(jobId, run.id, [{ docId: 'new', outcome: 'p', sourcePath: '/in/n' }], Date.now());
      await service.onApplicationBootstrap();
      expect(fx.store.audit).toHaveLength(2);

      const kept = fx.store;
      await fx.cleanup();
      await setUp('embedded', 2);
      fx.store.audit.push(...kept.audit);
      await service.onApplicationBootstrap();
      expect(fx.store.audit.map((a) => a.docId)).toEqual(['new']);
    });
  });
});
