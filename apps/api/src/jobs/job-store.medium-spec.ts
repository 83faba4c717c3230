import { JobsRepository, type JobsStore, type TaskSpec } from '@gateway/persistence';
import { DATABASE_KINDS, useDatabase } from '../../../../test/support/databases';
import { InMemoryJobStore } from '../../../../test/support/in-memory-job-store';

interface Def {
  source: string;
  n: number;
}

/**
 * The job store's contract, case by case on each store the job specs use: JobsRepository on a real SQLite and a real
 * PostgreSQL (the SQL of each dialect: PostgreSQL's jsonb_to_recordset batches among them), and the in-memory store of
 * test/support that the unit specs of the job engine run on, which must answer as the repository does.
 */
const STORES = [...DATABASE_KINDS, 'in memory'] as const;

describe.each(STORES)('job store (%s)', (kind) => {
  const database = kind === 'in memory' ? undefined : useDatabase(kind);
  let repo: JobsStore<Def>;

  beforeEach(() => {
    // The in-memory store is typed for the job service's definitions; it keeps whatever definition it is given.
    repo = database ? new JobsRepository<Def>(database()) : (new InMemoryJobStore() as unknown as JobsStore<Def>);
  });

  const task = (key: string, kind: TaskSpec['kind'] = 'docs'): TaskSpec => ({ key, kind, payload: `{"k":"${key}"}` });

  async function jobWithRun(tasks: TaskSpec[] = [task('a'), task('b')]) {
    const jobId = (await repo.insertJob({ name: 'copy', group: 'g', origin: 'api', definition: { source: '/in', n: 1 }, now: 10 }))!;
    const run = await repo.createRun(jobId, { kind: 'start', startedBy: 'alice', now: 1000 }, async () => tasks);
    return { jobId, run };
  }

  describe('definitions', () => {
    it('stores a definition and hands it back parsed, with its camelCase record', async () => {
      const id = await repo.insertJob({ name: 'copy', group: 'nightly', origin: 'config', definition: { source: '/in', n: 1 }, now: 10 });
      expect(id).toEqual(expect.any(Number));
      expect(await repo.findJob(id!)).toEqual({
        id,
        name: 'copy',
        group: 'nightly',
        origin: 'config',
        definition: { source: '/in', n: 1 },
        runCount: 0,
        createdAt: 10,
        updatedAt: 10,
      });
      expect((await repo.findJobByName('copy'))?.id).toBe(id);
      expect(await repo.findJobByName('other')).toBeUndefined();
      expect(await repo.findJob(id! + 100)).toBeUndefined();
    });

    it('refuses a name already taken, on insert and on update', async () => {
      const a = (await repo.insertJob({ name: 'a', group: 'g', origin: 'api', definition: { source: '/a', n: 1 }, now: 1 }))!;
      const b = (await repo.insertJob({ name: 'b', group: 'g', origin: 'api', definition: { source: '/b', n: 2 }, now: 1 }))!;
      expect(await repo.insertJob({ name: 'a', group: 'h', origin: 'api', definition: { source: '/x', n: 3 }, now: 2 })).toBeUndefined();
      expect(await repo.updateJob(b, { name: 'a', group: 'g', definition: { source: '/b', n: 2 }, now: 3 })).toBe(false);
      expect((await repo.findJob(b))?.name).toBe('b');
      expect(await repo.updateJob(a, { name: 'a', group: 'h', definition: { source: '/a2', n: 9 }, now: 4 })).toBe(true);
      expect(await repo.findJob(a)).toMatchObject({ name: 'a', group: 'h', definition: { source: '/a2', n: 9 }, createdAt: 1, updatedAt: 4 });
    });

    it('lists jobs in id order, by group when asked, and changes the origin', async () => {
      const a = (await repo.insertJob({ name: 'a', group: 'one', origin: 'api', definition: { source: '/a', n: 1 }, now: 1 }))!;
      const b = (await repo.insertJob({ name: 'b', group: 'two', origin: 'api', definition: { source: '/b', n: 1 }, now: 1 }))!;
      expect((await repo.listJobs()).map((j) => j.id)).toEqual([a, b]);
      expect((await repo.listJobs('two')).map((j) => j.name)).toEqual(['b']);
      expect(await repo.listJobs('none')).toEqual([]);
      await repo.setOrigin(b, 'config');
      expect((await repo.findJob(b))?.origin).toBe('config');
    });

    it('deletes a job with its runs, tasks, documents and audit records, and nothing of another job', async () => {
      const { jobId, run } = await jobWithRun();
      const other = (await repo.insertJob({ name: 'other', group: 'g', origin: 'api', definition: { source: '/o', n: 1 }, now: 1 }))!;
      const otherRun = await repo.createRun(other, { kind: 'start', startedBy: 'bob', now: 1 }, async () => [task('x')]);
      await repo.claimDocs(jobId, run.id, [{ docId: 'd1', relPath: 'd1', sourcePath: '/in/d1' }], 5);
      await repo.claimDocs(other, otherRun.id, [{ docId: 'd1', relPath: 'd1', sourcePath: '/o/d1' }], 5);
      await repo.deleteJob(jobId);
      expect(await repo.findJob(jobId)).toBeUndefined();
      expect(await repo.findRun(run.id)).toBeUndefined();
      expect(await repo.findTask(run.id, 'a')).toBeUndefined();
      expect(await repo.latestAudit(jobId, 'd1', 'r')).toBeUndefined();
      expect(await repo.findTask(otherRun.id, 'x')).toBeDefined();
      expect(await repo.latestAudit(other, 'd1', 'r')).toMatchObject({ sourcePath: '/o/d1' });
    });
  });

  describe('runs', () => {
    it('creates a dry run flagged, without moving the job\'s last start; its plans are report rows and no record status', async () => {
      const { jobId, run } = await jobWithRun();
      const startedAt = (await repo.findJob(jobId))!.updatedAt;
      const dry = await repo.createRun(jobId, { kind: 'start', startedBy: 'alice', now: startedAt + 5000, dryRun: true }, async (previous) => {
        expect(previous?.id).toBe(run.id);
        return [];
      });
      expect(dry).toMatchObject({ id: `${jobId}_2`, dryRun: true });
      expect((await repo.latestRun(jobId))?.dryRun).toBe(true);
      expect((await repo.findRun(run.id))?.dryRun).toBe(false);
      expect((await repo.findJob(jobId))!.updatedAt).toBe(startedAt);
      await repo.claimDocs(jobId, dry.id, [{ docId: 'd1', relPath: 'd1', sourcePath: '/in/d1' }], 10);
      await repo.finishDocs(jobId, dry.id, [{ docId: 'd1', outcome: 'p', sourcePath: '/in/d1', message: 'as /out/d1', plan: 'create' }], 20);
      expect(await repo.reportRows(jobId, dry.id, { limit: 10 })).toMatchObject([{ docId: 'd1', outcome: 'p', plan: 'create', message: 'as /out/d1' }]);
      expect(await repo.latestAudit(jobId, 'd1', 'p')).toBeUndefined();
    });

    it('counts per run the documents that had each unmapped name, over batches, and only for documents finished by the batch', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, ['a', 'b', 'c'].map((d) => ({ docId: d, relPath: d, sourcePath: `/in/${d}` })), 10);
      const title = { kind: 'property', name: 'cm:title' };
      await repo.finishDocs(jobId, run.id, [{ docId: 'a', outcome: 'p', sourcePath: '/in/a', unmapped: [title, { kind: 'principal', name: 'bob' }] }], 20);
      await repo.finishDocs(
        jobId,
        run.id,
        [
          { docId: 'a', outcome: 'p', sourcePath: '/in/a', unmapped: [title] }, // finished already: not counted again
          { docId: 'b', outcome: 'e', sourcePath: '/in/b', unmapped: [title] },
          { docId: 'c', outcome: 'p', sourcePath: '/in/c' },
        ],
        30,
      );
      expect(await repo.unmappedCounts(run.id)).toEqual([
        { kind: 'principal', name: 'bob', documents: 1 },
        { kind: 'property', name: 'cm:title', documents: 2 },
      ]);
      expect(await repo.unmappedCounts(`${jobId}_9`)).toEqual([]);
      await repo.deleteJob(jobId);
      expect(await repo.unmappedCounts(run.id)).toEqual([]);
    });

    it('creates run n+1 RUNNING at attempt 1 with the planned tasks pending', async () => {
      const { jobId, run } = await jobWithRun([task('e.root', 'enum')]);
      expect(run).toEqual({
        id: `${jobId}_1`,
        jobId,
        runNumber: 1,
        kind: 'start',
        status: 'RUNNING',
        message: null,
        startedBy: 'alice',
        attempt: 1,
        cancel: false,
        startTime: 1000,
        endTime: null,
        activeMs: 0,
        segmentStart: 1000,
        read: 0,
        written: 0,
        skipped: 0,
        failed: 0,
        removed: 0,
        failedBase: 0,
        discovered: 0,
        bytesWritten: 0,
        bytesRead: 0,
        dryRun: false,
      });
      expect(await repo.findTask(run.id, 'e.root')).toEqual({ runId: run.id, key: 'e.root', kind: 'enum', payload: '{"k":"e.root"}', state: 'pending' });
      expect((await repo.findJob(jobId))?.runCount).toBe(1);
      const second = await repo.createRun(jobId, { kind: 'runerrors', startedBy: 'bob', now: 2000 }, async (previous) => {
        expect(previous?.id).toBe(run.id);
        return [];
      });
      expect(second).toMatchObject({ id: `${jobId}_2`, runNumber: 2, kind: 'runerrors' });
      expect((await repo.latestRun(jobId))?.id).toBe(second.id);
    });

    it('writes nothing when the plan refuses', async () => {
      const { jobId, run } = await jobWithRun();
      await expect(
        repo.createRun(jobId, { kind: 'start', startedBy: 'alice', now: 2000 }, async () => {
          throw new Error('not allowed');
        }),
      ).rejects.toThrow('not allowed');
      expect((await repo.findJob(jobId))?.runCount).toBe(1);
      expect((await repo.latestRun(jobId))?.id).toBe(run.id);
      expect(await repo.findRun(`${jobId}_2`)).toBeUndefined();
    });

    it('lets the plan read the previous run\'s failed documents, and forgets the documents of runs older than the previous one', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, [{ docId: 'bad', relPath: 'sub/bad', sourcePath: '/in/sub/bad' }], 5);
      await repo.finishDocs(jobId, run.id, [{ docId: 'bad', outcome: 'e', sourcePath: '/in/sub/bad', message: 'boom' }], 6);
      const second = await repo.createRun(jobId, { kind: 'runerrors', startedBy: 'a', now: 7 }, async (previous, reader) => {
        expect(await reader.failedDocs(previous!.id, undefined, 10)).toEqual([{ docId: 'bad', relPath: 'sub/bad' }]);
        return [task('r.0')];
      });
      await repo.createRun(jobId, { kind: 'start', startedBy: 'a', now: 8 }, async () => []);
      expect(await repo.failedDocs(run.id, undefined, 10)).toEqual([]); // run 1 is older than the previous (2)
      expect(await repo.findTask(run.id, 'a')).toBeUndefined();
      expect(await repo.findTask(second.id, 'r.0')).toBeDefined();
      expect((await repo.findRun(run.id))?.failed).toBe(1); // the run row and its counters stay
      expect(await repo.latestAudit(jobId, 'bad', 'e')).toMatchObject({ message: 'boom' });
    });

    it('finds the latest run of several jobs and runs by status', async () => {
      const { jobId, run } = await jobWithRun();
      const other = (await repo.insertJob({ name: 'other', group: 'g', origin: 'api', definition: { source: '/o', n: 1 }, now: 1 }))!;
      expect(await repo.latestRun(other)).toBeUndefined();
      const runs = await repo.latestRuns([jobId, other]);
      expect([...runs.keys()]).toEqual([jobId]);
      expect(runs.get(jobId)?.id).toBe(run.id);
      expect(await repo.latestRuns([])).toEqual(new Map());
      expect((await repo.runsWithStatus(['RUNNING', 'PAUSING'])).map((r) => r.id)).toEqual([run.id]);
      expect(await repo.runsWithStatus(['PAUSED'])).toEqual([]);
      expect(await repo.runsWithStatus([])).toEqual([]);
    });
  });

  describe('transition', () => {
    it('applies camelCase changes, showing them to the rest of the transition and to later reads', async () => {
      const { run } = await jobWithRun();
      const seen = await repo.transition(run.id, async (locked) => {
        await locked.change({ status: 'PAUSING', cancel: true, message: 'why', attempt: 3, failedBase: 2, endTime: 99, activeMs: 7, segmentStart: null });
        return locked.run;
      });
      const expected = { status: 'PAUSING', cancel: true, message: 'why', attempt: 3, failedBase: 2, endTime: 99, activeMs: 7, segmentStart: null };
      expect(seen).toMatchObject(expected);
      expect(await repo.findRun(run.id)).toMatchObject(expected);
      await repo.transition(run.id, async (locked) => {
        await locked.change({ cancel: false, message: null, endTime: null, segmentStart: 5 });
        await locked.change({});
      });
      expect(await repo.findRun(run.id)).toMatchObject({ cancel: false, message: null, endTime: null, segmentStart: 5, status: 'PAUSING' });
    });

    it('rolls back everything a transition did when it throws', async () => {
      const { run } = await jobWithRun();
      await expect(
        repo.transition(run.id, async (locked) => {
          await locked.change({ status: 'ABORTED' });
          await locked.setTaskState('a', 'done');
          await locked.insertTasks([task('c')]);
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await repo.findRun(run.id))?.status).toBe('RUNNING');
      expect((await repo.findTask(run.id, 'a'))?.state).toBe('pending');
      expect(await repo.findTask(run.id, 'c')).toBeUndefined();
    });

    it('refuses a run that does not exist', async () => {
      await expect(repo.transition('9_9', async () => 1)).rejects.toThrow('Run 9_9 not found');
    });

    it('counts, sets, resets and adds tasks; a key the run has keeps its row', async () => {
      const { run } = await jobWithRun([task('a'), task('b'), task('c')]);
      await repo.transition(run.id, async (locked) => {
        await locked.setTaskState('a', 'active');
        await locked.setTaskState('b', 'done');
        expect(await locked.countTasks(['active'])).toBe(1);
        expect(await locked.countTasks(['pending', 'active'])).toBe(2);
        expect(await locked.countTasks([])).toBe(0);
        await locked.insertTasks([task('b'), task('d')]);
      });
      expect((await repo.findTask(run.id, 'b'))?.state).toBe('done');
      expect(await repo.unfinishedTaskKeys(run.id)).toEqual(['a', 'c', 'd']);
      await repo.transition(run.id, (locked) => locked.resetActiveTasks());
      expect((await repo.findTask(run.id, 'a'))?.state).toBe('pending');
      expect((await repo.findTask(run.id, 'b'))?.state).toBe('done');
    });

    it('counts the documents of new docs tasks as discovered, once; a run with an enum task not done has an open listing', async () => {
      const docs = (key: string, documents: number): TaskSpec => ({ ...task(key), documents });
      const { jobId, run } = await jobWithRun([task('e.root', 'enum'), docs('d.1', 3)]);
      expect((await repo.findRun(run.id))?.discovered).toBe(3);
      await repo.transition(run.id, (locked) => locked.insertTasks([docs('d.1', 3), docs('d.2', 500), task('e.next', 'enum')]));
      expect((await repo.findRun(run.id))?.discovered).toBe(503);
      const other = await repo.insertJob({ name: 'other', group: 'g', origin: 'api', definition: { source: '/o', n: 1 }, now: 10 });
      const quiet = await repo.createRun(other!, { kind: 'start', startedBy: 'alice', now: 1000 }, async () => [docs('d.1', 2)]);
      expect(await repo.openListings([run.id, quiet.id])).toEqual(new Set([run.id]));
      await repo.transition(run.id, async (locked) => {
        await locked.setTaskState('e.root', 'done');
        await locked.setTaskState('e.next', 'active');
      });
      expect(await repo.openListings([run.id])).toEqual(new Set([run.id]));
      await repo.transition(run.id, (locked) => locked.setTaskState('e.next', 'done'));
      expect(await repo.openListings([run.id, quiet.id])).toEqual(new Set());
      expect((await repo.latestRun(jobId))?.discovered).toBe(503);
    });

    it('inserts many tasks at once (more than one statement holds)', async () => {
      const many = Array.from({ length: 450 }, (_, i) => task(`t${String(i).padStart(3, '0')}`));
      const { run } = await jobWithRun(many);
      expect((await repo.unfinishedTaskKeys(run.id)).length).toBe(450);
    });
  });

  describe('documents', () => {
    it('claims a document once: counted as read and audited r the first time only', async () => {
      const { jobId, run } = await jobWithRun();
      const first = await repo.claimDocs(
        jobId,
        run.id,
        [
          { docId: 'd1', relPath: 'd1.txt', sourcePath: '/in/d1.txt' },
          { docId: 'd2', relPath: "it's \"quoted\"/d2", sourcePath: "/in/it's \"quoted\"/d2" },
          { docId: 'd1', relPath: 'd1.txt', sourcePath: '/in/d1.txt' },
        ],
        100,
      );
      expect([...first.values()]).toEqual([
        { docId: 'd1', state: 'claimed', outcome: null, claimedAt: 100, fresh: true },
        { docId: 'd2', state: 'claimed', outcome: null, claimedAt: 100, fresh: true },
      ]);
      expect((await repo.findRun(run.id))?.read).toBe(2);
      expect(await repo.latestAudit(jobId, 'd2', 'r')).toMatchObject({ runId: run.id, recordType: 'r', sourcePath: "/in/it's \"quoted\"/d2", targetId: null, message: null, createdAt: 100 });

      await repo.finishDocs(jobId, run.id, [{ docId: 'd2', outcome: 'p', sourcePath: '/in/d2', targetId: 't2' }], 150);
      const again = await repo.claimDocs(
        jobId,
        run.id,
        [
          { docId: 'd1', relPath: 'd1.txt', sourcePath: '/in/d1.txt' },
          { docId: 'd2', relPath: 'd2', sourcePath: '/in/d2' },
          { docId: 'd3', relPath: 'd3', sourcePath: '/in/d3' },
        ],
        200,
      );
      expect(again.get('d1')).toEqual({ docId: 'd1', state: 'claimed', outcome: null, claimedAt: 100, fresh: false });
      expect(again.get('d2')).toEqual({ docId: 'd2', state: 'done', outcome: 'p', claimedAt: 100, fresh: false });
      expect(again.get('d3')).toEqual({ docId: 'd3', state: 'claimed', outcome: null, claimedAt: 200, fresh: true });
      expect((await repo.findRun(run.id))?.read).toBe(3);
      expect((await repo.latestAudit(jobId, 'd1', 'r'))?.createdAt).toBe(100);
      expect(await repo.claimDocs(jobId, run.id, [], 300)).toEqual(new Map());
    });

    it('claims the same document separately in each run', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, [{ docId: 'd1', relPath: 'd1', sourcePath: '/in/d1' }], 1);
      const second = await repo.createRun(jobId, { kind: 'start', startedBy: 'a', now: 2 }, async () => []);
      expect((await repo.claimDocs(jobId, second.id, [{ docId: 'd1', relPath: 'd1', sourcePath: '/in/d1' }], 3)).get('d1')?.fresh).toBe(true);
    });

    it('finishes a claimed document once: its counter and audit record move with it, and the run comes back', async () => {
      const { jobId, run } = await jobWithRun();
      const ids = ['p1', 'p2', 'e1', 'd1', 's1', 'never'];
      await repo.claimDocs(jobId, run.id, ids.slice(0, 5).map((d) => ({ docId: d, relPath: d, sourcePath: `/in/${d}` })), 10);
      const after = await repo.finishDocs(
        jobId,
        run.id,
        [
          { docId: 'p1', outcome: 'p', sourcePath: '/in/p1', targetId: 't1', removed: true },
          { docId: 'p2', outcome: 'p', sourcePath: '/in/p2', targetId: 't2', message: 'overwritten' },
          { docId: 'e1', outcome: 'e', sourcePath: '/in/e1', message: 'INTERNAL: boom' },
          { docId: 'd1', outcome: 'd', sourcePath: '/in/d1', targetId: 'x' },
          { docId: 's1', outcome: 's', sourcePath: '/in/s1', message: 'Excluded by pattern .*' },
          { docId: 'p1', outcome: 'e', sourcePath: '/in/p1', message: 'listed twice' },
          { docId: 'never', outcome: 'p', sourcePath: '/in/never' },
        ],
        20,
      );
      expect(after).toMatchObject({ id: run.id, read: 5, written: 2, failed: 1, skipped: 2, removed: 1 });
      expect(await repo.latestAudit(jobId, 'p1', 'p')).toMatchObject({ targetId: 't1', message: null, createdAt: 20 });
      expect(await repo.latestAudit(jobId, 'p1', 'e')).toBeUndefined();
      expect(await repo.latestAudit(jobId, 'p2', 'p')).toMatchObject({ message: 'overwritten' });
      expect(await repo.latestAudit(jobId, 'e1', 'e')).toMatchObject({ sourcePath: '/in/e1', targetId: null, message: 'INTERNAL: boom' });
      expect(await repo.latestAudit(jobId, 'never', 'p')).toBeUndefined();

      const again = await repo.finishDocs(jobId, run.id, [{ docId: 'e1', outcome: 'p', sourcePath: '/in/e1' }], 30);
      expect(again).toMatchObject({ written: 2, failed: 1 });
      expect(await repo.latestAudit(jobId, 'e1', 'p')).toBeUndefined();
      expect(await repo.failedDocs(run.id, undefined, 10)).toEqual([{ docId: 'e1', relPath: 'e1' }]);
    });

    it('pages the failed documents in id order', async () => {
      const { jobId, run } = await jobWithRun();
      const ids = ['c', 'a', 'e', 'b', 'd'];
      await repo.claimDocs(jobId, run.id, ids.map((d) => ({ docId: d, relPath: `r/${d}`, sourcePath: d })), 1);
      await repo.finishDocs(jobId, run.id, ids.map((d) => ({ docId: d, outcome: d === 'c' ? 'p' : 'e', sourcePath: d })), 2);
      expect(await repo.failedDocs(run.id, undefined, 2)).toEqual([
        { docId: 'a', relPath: 'r/a' },
        { docId: 'b', relPath: 'r/b' },
      ]);
      expect((await repo.failedDocs(run.id, 'b', 2)).map((d) => d.docId)).toEqual(['d', 'e']);
      expect(await repo.failedDocs(run.id, 'e', 2)).toEqual([]);
    });

    it('handles a batch of a thousand documents', async () => {
      const { jobId, run } = await jobWithRun();
      const docs = Array.from({ length: 1000 }, (_, i) => ({ docId: `doc-${i}`, relPath: `f/${i}`, sourcePath: `/in/f/${i}` }));
      const claims = await repo.claimDocs(jobId, run.id, docs, 1);
      expect([...claims.values()].every((c) => c.fresh)).toBe(true);
      const after = await repo.finishDocs(jobId, run.id, docs.map((d) => ({ docId: d.docId, outcome: 'p', sourcePath: d.sourcePath, targetId: `t-${d.docId}` })), 2);
      expect(after).toMatchObject({ read: 1000, written: 1000 });
      expect(await repo.latestAudit(jobId, 'doc-999', 'p')).toMatchObject({ targetId: 't-doc-999', sourcePath: '/in/f/999' });
    });
  });

  describe('documents inside a transition', () => {
    it('claims and finishes with the run lock held, showing the new counters to the transition', async () => {
      const { jobId, run } = await jobWithRun();
      const seen = await repo.transition(run.id, async (locked) => {
        const claims = await locked.claimDocs(jobId, [{ docId: 'a', relPath: 'a', sourcePath: '/in/a' }, { docId: 'b', relPath: 'b', sourcePath: '/in/b' }], 5);
        expect([...claims.keys()]).toEqual(['a', 'b']);
        expect(locked.run.read).toBe(2);
        expect(await locked.claimDocs(jobId, [], 6)).toEqual(new Map());
        await locked.finishDocs(jobId, [{ docId: 'a', outcome: 'e', sourcePath: '/in/a' }, { docId: 'zz', outcome: 'p', sourcePath: '/in/zz' }], 7);
        await locked.finishDocs(jobId, [{ docId: 'a', outcome: 'p', sourcePath: '/in/a' }], 8);
        return locked.run;
      });
      expect(seen).toMatchObject({ read: 2, failed: 1, written: 0 });
      expect(await repo.findRun(run.id)).toMatchObject({ read: 2, failed: 1, written: 0 });
      expect(await repo.latestAudit(jobId, 'a', 'e')).toMatchObject({ createdAt: 7 });
    });

    it('leaves no claim, outcome or counter behind when the transition throws', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, [{ docId: 'a', relPath: 'a', sourcePath: '/in/a' }], 1);
      await expect(
        repo.transition(run.id, async (locked) => {
          await locked.claimDocs(jobId, [{ docId: 'b', relPath: 'b', sourcePath: '/in/b' }], 2);
          await locked.finishDocs(jobId, [{ docId: 'a', outcome: 'p', sourcePath: '/in/a' }], 3);
          throw new Error('no');
        }),
      ).rejects.toThrow('no');
      expect(await repo.findRun(run.id)).toMatchObject({ read: 1, written: 0 });
      expect(await repo.latestAudit(jobId, 'b', 'r')).toBeUndefined();
      expect((await repo.claimDocs(jobId, run.id, [{ docId: 'a', relPath: 'a', sourcePath: '/in/a' }], 4)).get('a')).toMatchObject({ state: 'claimed' });
    });
  });

  describe('audit', () => {
    it('answers the latest record of a type for a document, and prunes records older than a cut-off', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, [{ docId: 'd', relPath: 'd', sourcePath: '/in/d' }], 100);
      await repo.finishDocs(jobId, run.id, [{ docId: 'd', outcome: 'e', sourcePath: '/in/d', message: 'first' }], 200);
      const second = await repo.createRun(jobId, { kind: 'runerrors', startedBy: 'a', now: 300 }, async () => []);
      await repo.claimDocs(jobId, second.id, [{ docId: 'd', relPath: 'd', sourcePath: '/in/d' }], 300);
      await repo.finishDocs(jobId, second.id, [{ docId: 'd', outcome: 'e', sourcePath: '/in/d', message: 'second' }], 400);
      expect(await repo.latestAudit(jobId, 'd', 'e')).toMatchObject({ runId: second.id, message: 'second', jobId, docId: 'd', recordType: 'e' });
      // One record per document and run: the first run's outcome, which carries its read.
      expect(await repo.pruneAudit(250)).toBe(1);
      expect(await repo.latestAudit(jobId, 'd', 'r')).toMatchObject({ runId: second.id, createdAt: 300, sourcePath: '/in/d' });
      expect(await repo.pruneAudit(250)).toBe(0);
    });

    it('answers reads from the claim while unfinished, then from the outcome, the latest first', async () => {
      const { jobId, run } = await jobWithRun();
      await repo.claimDocs(jobId, run.id, [{ docId: 'new', relPath: 'new', sourcePath: '/in/new' }], 100);
      expect(await repo.latestAudit(jobId, 'new', 'r')).toMatchObject({ runId: run.id, sourcePath: '/in/new', createdAt: 100 });
      await repo.finishDocs(jobId, run.id, [{ docId: 'new', outcome: 'p', sourcePath: '/in/new', targetId: 't' }], 150);
      expect(await repo.latestAudit(jobId, 'new', 'r')).toMatchObject({ runId: run.id, sourcePath: '/in/new', createdAt: 100, targetId: null, message: null });
      expect(await repo.latestAudit(jobId, 'new', 'p')).toMatchObject({ createdAt: 150, targetId: 't' });
      // A later run's claim is the latest read, before and after its outcome; another job's reads are not this one's.
      const second = await repo.createRun(jobId, { kind: 'runerrors', startedBy: 'a', now: 200 }, async () => []);
      await repo.claimDocs(jobId, second.id, [{ docId: 'new', relPath: 'new', sourcePath: '/in/new-2' }], 200);
      expect(await repo.latestAudit(jobId, 'new', 'r')).toMatchObject({ runId: second.id, sourcePath: '/in/new-2', createdAt: 200 });
      await repo.finishDocs(jobId, second.id, [{ docId: 'new', outcome: 's', sourcePath: '/in/new-2' }], 250);
      expect(await repo.latestAudit(jobId, 'new', 'r')).toMatchObject({ runId: second.id, sourcePath: '/in/new-2', createdAt: 200 });
      const other = (await repo.insertJob({ name: 'other', group: 'g', origin: 'api', definition: { source: '/in', n: 1 }, now: 10 }))!;
      expect(await repo.latestAudit(other, 'new', 'r')).toBeUndefined();
    });

    // Only the repository has databases written by earlier builds.
    if (database) {
      it('answers the reads that runs before migration 0180 recorded on their own, until a later read', async () => {
        const { jobId, run } = await jobWithRun();
        await database()
          .db.insertInto('job_audit')
          .values({ job_id: jobId, run_id: run.id, doc_id: 'old', record_type: 'r', source_path: '/in/old', target_id: null, message: null, created_at: 50, checksum: null, verified: null, plan: null, read_at: null })
          .execute();
        expect(await repo.latestAudit(jobId, 'old', 'r')).toMatchObject({ runId: run.id, recordType: 'r', sourcePath: '/in/old', createdAt: 50, targetId: null });
        await repo.claimDocs(jobId, run.id, [{ docId: 'old', relPath: 'old', sourcePath: '/in/old-2' }], 60);
        await repo.finishDocs(jobId, run.id, [{ docId: 'old', outcome: 'p', sourcePath: '/in/old-2' }], 70);
        expect(await repo.latestAudit(jobId, 'old', 'r')).toMatchObject({ sourcePath: '/in/old-2', createdAt: 60 });
      });
    }
  });

  describe('index state (indexing jobs)', () => {
    it('saves, replaces and reads what was indexed; finds what a run did not list; records removals once', async () => {
      const { jobId, run } = await jobWithRun();
      expect((await repo.indexStates(jobId, ['a', 'b'])).size).toBe(0);
      await repo.saveIndexStates(jobId, run.id, [
        { docId: 'a', sourcePath: '/in/a', stamp: 's1' },
        { docId: 'b', sourcePath: '/in/b', stamp: 's1' },
        { docId: 'c', sourcePath: '/in/c', stamp: 's1' },
      ], 100);
      await repo.saveIndexStates(jobId, run.id, [{ docId: 'a', sourcePath: '/in/a', stamp: 's2' }], 200);
      const states = await repo.indexStates(jobId, ['a', 'b', 'zz']);
      expect([...states.keys()].sort()).toEqual(['a', 'b']);
      expect(states.get('a')).toEqual({ docId: 'a', sourcePath: '/in/a', stamp: 's2', runId: run.id });

      // The run listed a and b only: c is gone.
      await repo.claimDocs(jobId, run.id, ['a', 'b'].map((d) => ({ docId: d, relPath: d, sourcePath: `/in/${d}` })), 300);
      expect((await repo.goneFromSource(jobId, run.id, 10)).map((g) => g.docId)).toEqual(['c']);
      const removed = [{ docId: 'c', sourcePath: '/in/c', targetId: 'src:c', message: 'removed from the index: gone from the source' }];
      await repo.transition(run.id, (locked) => locked.recordRemoved(jobId, removed, 400));
      await repo.transition(run.id, (locked) => locked.recordRemoved(jobId, removed, 500)); // a retried sweep counts it once
      expect(await repo.findRun(run.id)).toMatchObject({ read: 2, written: 0, removed: 1 });
      expect(await repo.latestAudit(jobId, 'c', 'p')).toMatchObject({ targetId: 'src:c', message: 'removed from the index: gone from the source' });
      expect(await repo.goneFromSource(jobId, run.id, 10)).toEqual([]);
      expect((await repo.indexStates(jobId, ['c'])).size).toBe(0);

      await repo.deleteJob(jobId);
      expect((await repo.indexStates(jobId, ['a', 'b'])).size).toBe(0);
    });
  });

  describe('reports', () => {
    it('lists a run\'s documents with their outcome records, filtered and paged by id, and counts them as the counters do', async () => {
      const { jobId, run } = await jobWithRun();
      const ids = ['a-p', 'b-e', 'c-d', 'd-s', 'e-open', "f-it's, \"quoted\""];
      await repo.claimDocs(jobId, run.id, ids.map((d) => ({ docId: d, relPath: `rel/${d}`, sourcePath: `/in/${d}` })), 10);
      const after = await repo.finishDocs(
        jobId,
        run.id,
        [
          { docId: 'a-p', outcome: 'p', sourcePath: '/in/a-p', targetId: 't1', bytes: 7, bytesRead: 7, checksum: 'c0ffee', verified: 'read-back' },
          // Bytes written count only with a written document; bytes read with any outcome.
          { docId: 'b-e', outcome: 'e', sourcePath: '/in/b-e', message: 'INTERNAL: boom', bytes: 1000, bytesRead: 300 },
          { docId: 'c-d', outcome: 'd', sourcePath: '/in/c-d', targetId: 't3' },
          { docId: 'd-s', outcome: 's', sourcePath: '/in/d-s', message: 'Excluded' },
          { docId: ids[5], outcome: 'p', sourcePath: `/in/${ids[5]}`, targetId: 't6', bytes: 5 },
        ],
        20,
      );
      expect(after.bytesWritten).toBe(12);
      expect(after.bytesRead).toBe(307);
      // Another run of the same job with the same documents stays out of this report.
      const second = await repo.createRun(jobId, { kind: 'start', startedBy: 'alice', now: 2000 }, async () => []);
      await repo.claimDocs(jobId, second.id, [{ docId: 'a-p', relPath: 'rel/a-p', sourcePath: '/in/a-p' }], 30);
      await repo.finishDocs(jobId, second.id, [{ docId: 'a-p', outcome: 'e', sourcePath: '/in/a-p', message: 'later' }], 40);

      const all = await repo.reportRows(jobId, run.id, { limit: 100 });
      expect(all.map((r) => r.docId)).toEqual(ids);
      expect(all[0]).toEqual({ docId: 'a-p', relPath: 'rel/a-p', outcome: 'p', sourcePath: '/in/a-p', targetId: 't1', message: null, checksum: 'c0ffee', verified: 'read-back', plan: null, readAt: 10, finishedAt: 20 });
      expect(await repo.latestAudit(jobId, 'a-p', 'p')).toMatchObject({ checksum: 'c0ffee', verified: 'read-back' });
      expect(all[1]).toMatchObject({ outcome: 'e', message: 'INTERNAL: boom', finishedAt: 20 });
      expect(all[4]).toEqual({ docId: 'e-open', relPath: 'rel/e-open', outcome: 'r', sourcePath: '/in/e-open', targetId: null, message: null, checksum: null, verified: null, plan: null, readAt: 10, finishedAt: null });

      expect((await repo.reportRows(jobId, run.id, { outcomes: ['e', 'r'], limit: 100 })).map((r) => r.docId)).toEqual(['b-e', 'e-open']);
      expect((await repo.reportRows(jobId, run.id, { outcomes: ['r'], limit: 100 })).map((r) => r.docId)).toEqual(['e-open']);
      const page1 = await repo.reportRows(jobId, run.id, { limit: 2 });
      const page2 = await repo.reportRows(jobId, run.id, { limit: 2, after: page1[1].docId });
      expect([...page1, ...page2].map((r) => r.docId)).toEqual(ids.slice(0, 4));

      const counts = await repo.reportCounts(run.id);
      expect(counts).toEqual({ p: 2, e: 1, d: 1, s: 1, r: 1 });
      expect(counts.p + counts.e + counts.d + counts.s + counts.r).toBe(after.read);
      expect([counts.p, counts.e, counts.d + counts.s]).toEqual([after.written, after.failed, after.skipped]);
      expect(await repo.reportCounts(second.id)).toEqual({ p: 0, e: 1, d: 0, s: 0, r: 0 });
    });
  });
});
