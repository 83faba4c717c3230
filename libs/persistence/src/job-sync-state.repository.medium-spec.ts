import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { JobSyncStateRepository, type SyncStateRecord } from './job-sync-state.repository';
import { JobsRepository } from './jobs.repository';

/** The sync state against a real database: SQLite and PostgreSQL, each case on both. */
describe.each(DATABASE_KINDS)('JobSyncStateRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let repo: JobSyncStateRepository;
  let jobs: JobsRepository;

  beforeEach(async () => {
    repo = new JobSyncStateRepository(database());
    jobs = new JobsRepository(database());
  });

  const state = (docId: string, extra: Partial<SyncStateRecord> = {}): SyncStateRecord => ({
    docId,
    relPath: `in/${docId}`,
    sourceStamp: `etag:${docId}`,
    versionLabel: null,
    size: 1024,
    modified: 1_700_000_000_123,
    checksum: 'ab'.repeat(32),
    targetId: `t-${docId}`,
    targetStamp: `etag:t-${docId}`,
    runId: '1_1',
    ...extra,
  });

  it('saves, replaces and reads states by document, per job', async () => {
    await repo.saveSyncStates(1, [state('a'), state('b', { versionLabel: '1.0', size: null, modified: null, checksum: null, targetStamp: null })], 10);
    await repo.saveSyncStates(2, [state('a', { targetId: 'other job' })], 10);
    await repo.saveSyncStates(1, [state('a', { sourceStamp: 'etag:a2', runId: '1_2' })], 20);
    const got = await repo.syncStates(1, ['a', 'b', 'c']);
    expect([...got.keys()].sort()).toEqual(['a', 'b']);
    expect(got.get('a')).toEqual(state('a', { sourceStamp: 'etag:a2', runId: '1_2' }));
    expect(got.get('b')).toEqual(state('b', { versionLabel: '1.0', size: null, modified: null, checksum: null, targetStamp: null }));
    expect((await repo.syncStates(2, ['a'])).get('a')?.targetId).toBe('other job');
  });

  it('finds rename candidates: the same stamp first, then the same size and time; never the document itself or one the run listed', async () => {
    const jobId = (await jobs.insertJob({ name: 'sync', group: 'g', origin: 'api', definition: {}, now: 1 }))!;
    const run = await jobs.createRun(jobId, { kind: 'start', startedBy: 'alice', now: 1 }, async () => [{ key: 'd', kind: 'docs', payload: '{}' }]);
    await repo.saveSyncStates(jobId, [state('a'), state('b'), state('c', { size: 99 }), state('d', { modified: 5 }), state('e'), state('z', { size: 7, sourceStamp: 'etag:new' })], 10);
    await jobs.claimDocs(jobId, run.id, [{ docId: 'e', relPath: 'e', sourcePath: '/in/e' }], 20);
    const doc = { docId: 'a', stamp: 'etag:new', size: 1024, modified: 1_700_000_000_123 };
    const ids = async (docs: Array<typeof doc>, limit: number, job = jobId) =>
      Object.fromEntries([...(await repo.renameCandidates(job, run.id, docs, limit))].map(([k, v]) => [k, v.map((s) => s.docId)]));
    expect(await ids([doc], 10)).toEqual({ a: ['z', 'b'] });
    expect(await ids([doc], 1)).toEqual({ a: ['z'] });
    expect(await ids([doc], 10, jobId + 1)).toEqual({});
    // Asked together: each document its own candidates (never itself), one without any left out.
    const other = { docId: 'n', stamp: 'etag:c', size: 5, modified: 5 };
    const none = { docId: 'x', stamp: 'etag:none', size: 1, modified: 1 };
    expect(await ids([doc, other, none], 10)).toEqual({ a: ['z', 'b'], n: ['c'] });
    expect(await ids([{ ...doc, docId: 'b' }], 2)).toEqual({ b: ['z', 'a'] });
    expect((await repo.renameCandidates(jobId, run.id, [doc], 10)).get('a')?.[1]).toEqual(state('b'));
  });

  it('moves a state to a new id in one step', async () => {
    await repo.saveSyncStates(1, [state('old')], 10);
    await repo.saveSyncStates(1, [state('new', { relPath: 'in/renamed' })], 20, ['old']);
    const got = await repo.syncStates(1, ['old', 'new']);
    expect([...got.keys()]).toEqual(['new']);
    expect(got.get('new')?.relPath).toBe('in/renamed');
  });

  it('answers the documents a run did not list; a removal recorded by the run forgets them, and the job deleted takes its states', async () => {
    const jobId = (await jobs.insertJob({ name: 'sync', group: 'g', origin: 'api', definition: {}, now: 1 }))!;
    const run = await jobs.createRun(jobId, { kind: 'start', startedBy: 'alice', now: 1 }, async () => [{ key: 'd', kind: 'docs', payload: '{}' }]);
    await repo.saveSyncStates(jobId, [state('a'), state('b'), state('c')], 10);
    await jobs.claimDocs(jobId, run.id, [{ docId: 'b', relPath: 'b', sourcePath: '/in/b' }], 20);
    expect((await repo.goneFromSource(jobId, run.id, 10)).map((s) => s.docId)).toEqual(['a', 'c']);
    expect((await repo.goneFromSource(jobId, run.id, 1)).map((s) => s.docId)).toEqual(['a']);
    await jobs.transition(run.id, (locked) => locked.recordRemoved(jobId, [{ docId: 'a', sourcePath: '/in/a', targetId: 't-a', message: 'deleted' }], 30));
    expect((await repo.goneFromSource(jobId, run.id, 10)).map((s) => s.docId)).toEqual(['c']);
    expect((await jobs.findRun(run.id))?.removed).toBe(1);
    await jobs.deleteJob(jobId);
    expect((await repo.syncStates(jobId, ['b', 'c'])).size).toBe(0);
  });
});
