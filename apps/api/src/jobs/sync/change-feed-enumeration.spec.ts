import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChangeTokenExpiredError, NotFoundError, type ChangeFeedCapability, type ChangePage, type ContentConnector, type ItemChange, type ItemInfo } from '@gateway/connector-api';
import { JobSyncFeedRepository, JobSyncStateRepository, JobsRepository, openDatabase, type Database, type RunStatus, type SyncStateRecord, type TaskSpec } from '@gateway/persistence';
import { createTestDatabaseUrl, dropTestDatabase } from '../../../../../test/support/database';
import type { JobDefinition } from '../../config/job-definition.dto';
import type { JobStore } from '../job-store';
import { parseTask } from '../task-plan';
import { FEED_FALLBACK_DOC, FeedEnumeration } from './change-feed-enumeration';

/** A change feed as a test writes it: the tokens it hands out, the pages of each pass, the tokens it refuses. */
class FakeFeed implements ChangeFeedCapability {
  latest = 0;
  latestCalls = 0;
  readonly passes = new Map<string, ItemChange[][]>();
  readonly expired = new Set<string>();
  readonly read: string[] = [];

  latestToken(): Promise<string> {
    this.latestCalls++;
    return Promise.resolve(`t${++this.latest}`);
  }

  async *changesSince(token: string): AsyncIterable<ChangePage> {
    this.read.push(token);
    if (this.expired.has(token)) throw new ChangeTokenExpiredError('Fake repository', 'resyncRequired');
    const pages = this.passes.get(token) ?? [[]];
    for (const [i, changes] of pages.entries()) {
      await Promise.resolve();
      yield { changes, nextToken: `${token}.${i}` };
    }
  }
}

const doc = (id: string, itemPath: string, etag = `e-${id}`): ItemChange => ({ kind: 'current', id, item: { id, name: path.posix.basename(itemPath), path: itemPath, baseType: 'document', size: 3, modified: new Date(1_700_000_000_000), etag } satisfies ItemInfo });
const folder = (id: string, itemPath: string): ItemChange => ({ kind: 'current', id, item: { id, name: path.posix.basename(itemPath), path: itemPath, baseType: 'folder' } });
const deleted = (id: string): ItemChange => ({ kind: 'deleted', id });

/** A source whose folders match paths without case, as Graph and SharePoint do: `/in` is spelled `/In` there. */
const source = {
  rootFolder: () => Promise.resolve({ folderId: 'root', folderName: '', folderPath: '/' }),
  idByPath: (parent: string, name: string) => (parent === '/' && ['in', 'elsewhere'].includes(name.toLowerCase()) ? Promise.resolve(`id-${name.toLowerCase()}`) : Promise.reject(new NotFoundError('folder', `${parent}/${name}`))),
  getItem: (id: string) => Promise.resolve({ id, name: id.slice(3), path: id === 'id-in' ? '/In' : '/elsewhere', baseType: 'folder' }),
} as unknown as ContentConnector;

/** The feed enumeration against a real job database (SQLite, or PostgreSQL with GATEWAY_TEST_POSTGRES_URL) and a fake feed. */
describe('FeedEnumeration', () => {
  let dir: string;
  let databaseUrl: string | undefined;
  let database: Database;
  let jobs: JobsRepository;
  let states: JobSyncStateRepository;
  let feeds: JobSyncFeedRepository;
  let feed: FakeFeed;
  let jobId: number;
  const def = { jobName: 'sync', source: { connectorId: 'src', folderPath: '/in', recursive: true }, target: { connectorId: 'dst', folderPath: '/out' }, options: { mode: 'sync', deletions: 'delete' } } as unknown as JobDefinition;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'feed-enum-'));
    databaseUrl = await createTestDatabaseUrl();
    database = await openDatabase({ databaseUrl, sqliteFile: path.join(dir, 'gateway.sqlite') });
    jobs = new JobsRepository(database);
    states = new JobSyncStateRepository(database);
    feeds = new JobSyncFeedRepository(database);
    feed = new FakeFeed();
    jobId = (await jobs.insertJob({ name: 'sync', group: 'g', origin: 'api', definition: def, now: 1 }))!;
  });

  afterEach(async () => {
    await database.close();
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const newRun = async () => (await jobs.createRun(jobId, { kind: 'start', startedBy: 'alice', now: Date.now() }, async () => [{ key: 'e.root', kind: 'enum', payload: '{}' }])).id;
  const settleRun = (runId: string, status: RunStatus) => jobs.transition(runId, (locked) => locked.change({ status, endTime: Date.now() }));
  const enumeration = (runId: string, options: Partial<JobDefinition['source']> = {}) =>
    new FeedEnumeration({ ...def, source: { ...def.source, ...options } }, source, feed, feeds, jobs as unknown as JobStore, jobId, runId, true);
  /** Runs the root task's enumeration; answers whether the feed did it, and the docs tasks it queued. */
  const enumerate = async (runId: string, options: Partial<JobDefinition['source']> = {}) => {
    const queued: TaskSpec[] = [];
    const byFeed = await enumeration(runId, options).enumerate(async (tasks) => void queued.push(...tasks));
    const items = queued.flatMap((t) => {
      const planned = parseTask(t);
      return planned.kind === 'docs' ? planned.payload.items.map((i) => ({ ...i, fetch: planned.payload.fetch === true })) : [];
    });
    return { byFeed, queued, items };
  };
  const state = (docId: string, relPath: string, runId: string): SyncStateRecord => ({
    docId, relPath, sourceStamp: `etag:e-${docId}`, versionLabel: null, size: 3, modified: 1_700_000_000_000, checksum: null, targetId: `t-${docId}`, targetStamp: null, runId,
  });

  /** A first run that listed everything (token t1) and wrote these documents and saw these folders, COMPLETED. */
  async function completedFirstRun(docs: Array<[string, string]>, folders: Array<[string, string]>): Promise<string> {
    const run1 = await newRun();
    expect(await enumerate(run1)).toMatchObject({ byFeed: false, queued: [] });
    for (const [id, rel] of folders) await enumeration(run1).listed({ folderPath: '/in', rel: path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel) }, { items: [{ id, name: path.posix.basename(rel), path: `/in/${rel}`, baseType: 'folder' }] });
    await states.saveSyncStates(jobId, docs.map(([id, rel]) => state(id, rel, run1)), 1);
    await settleRun(run1, 'COMPLETED');
    return run1;
  }

  it('follows the job folder as the source spells it (paths matched without case); a job folder gone fails the run instead of taking everything for gone', async () => {
    await completedFirstRun([['a', 'a.txt']], []);
    feed.passes.set('t1', [[doc('a', '/In/a.txt', 'e-a-2')]]);
    const run2 = await newRun();
    // Configured as /in, spelled /In at the source: the change is inside the folder, nothing is gone.
    expect((await enumerate(run2)).items.map((i) => [i.id, i.rel])).toEqual([['a', 'a.txt']]);
    expect(await feeds.goneStates(jobId, run2, 10)).toEqual([]);
    await expect(enumerate(run2, { folderPath: '/missing' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a first run takes a token before it lists, and lists everything', async () => {
    const run1 = await newRun();
    const { byFeed } = await enumerate(run1);
    expect(byFeed).toBe(false);
    expect(feed.latestCalls).toBe(1);
    expect(feed.read).toEqual([]);
    expect(await feeds.runFeed(run1)).toEqual({ source: 'src:/in', token: 't1', mode: 'full', since: null });
    // Resumed, its root task lists again, keeping the token it took first.
    expect((await enumerate(run1)).byFeed).toBe(false);
    expect(feed.latestCalls).toBe(1);
    expect(await feeds.runFeed(run1)).toMatchObject({ token: 't1', mode: 'full' });
  });

  it('the next run reads the changes since that token: created, changed, renamed, moved and deleted documents each once; unchanged ones not at all', async () => {
    await completedFirstRun(
      [['changed', 'a.txt'], ['renamed', 'b.txt'], ['moved', 'sub/c.txt'], ['gone', 'd.txt'], ['out', 'e.txt'], ['same', 'f.txt']],
      [['sub', 'sub'], ['other', 'other']],
    );
    feed.passes.set('t1', [
      [doc('created', '/In/new.txt'), doc('changed', '/In/a.txt', 'e-changed-2'), folder('sub', '/In/sub')],
      [doc('renamed', '/In/b2.txt'), doc('moved', '/In/other/c.txt'), deleted('gone'), doc('out', '/elsewhere/e.txt'), doc('stranger', '/elsewhere/x.txt'), deleted('never-written')],
    ]);
    const run2 = await newRun();
    const { byFeed, items } = await enumerate(run2);
    expect(byFeed).toBe(true);
    expect(feed.read).toEqual(['t1']);
    expect(await feeds.runFeed(run2)).toEqual({ source: 'src:/in', token: 't2', mode: 'feed', since: 't1' });
    expect(items.map((i) => [i.id, i.rel, i.fetch]).sort()).toEqual([
      ['changed', 'a.txt', false],
      ['created', 'new.txt', false],
      ['moved', 'other/c.txt', false],
      ['renamed', 'b2.txt', false],
    ]);
    expect(items.find((i) => i.id === 'changed')).toMatchObject({ etag: 'e-changed-2', size: 3, path: '/In/a.txt' });
    expect((await feeds.goneStates(jobId, run2, 10)).map((s) => s.docId)).toEqual(['gone', 'out']);
    expect(await enumeration(run2).readsFeed()).toBe(true);
    // The deletions task records a removal and forgets its state at once: redone after a kill, it finds only the rest, and counts once.
    const removed = (docId: string) => jobs.transition(run2, (locked) => locked.recordRemoved(jobId, [{ docId, sourcePath: `/in/${docId}`, targetId: `t-${docId}`, message: 'deleted' }], Date.now()));
    await removed('gone');
    expect((await feeds.goneStates(jobId, run2, 10)).map((s) => s.docId)).toEqual(['out']);
    await removed('gone');
    expect(await jobs.findRun(run2)).toMatchObject({ removed: 1 });
  });

  it('a folder renamed at the source moves what the job wrote below it (fetched by id), subfolders included; a deleted folder takes its documents; a new one is listed', async () => {
    const run1 = await completedFirstRun(
      [['x', 'docs/x.txt'], ['y', 'docs/deep/y.txt'], ['z', 'old/z.txt'], ['w', 'docs/w.txt']],
      [['docs', 'docs'], ['deep', 'docs/deep'], ['old', 'old']],
    );
    feed.passes.set('t1', [[folder('docs', '/In/papers'), doc('w', '/In/papers/w.txt', 'e-w-2'), deleted('old'), deleted('z'), folder('incoming', '/In/incoming'), folder('far', '/elsewhere/far')]]);
    const run2 = await newRun();
    const { items, queued } = await enumerate(run2);
    // A folder new to the job (moved in from outside: the feed reports it alone) is listed once; one outside is not.
    expect(queued.filter((t) => t.kind === 'enum').map((t) => JSON.parse(t.payload) as unknown)).toEqual([{ folderId: 'incoming', folderPath: '/In/incoming', rel: 'incoming' }]);
    expect(items.map((i) => [i.id, i.rel, i.fetch]).sort()).toEqual([
      ['w', 'papers/w.txt', false],
      ['x', 'papers/x.txt', true],
      ['y', 'papers/deep/y.txt', true],
    ]);
    expect((await feeds.goneStates(jobId, run2, 10)).map((s) => s.docId)).toEqual(['z']);
    expect(await feeds.folders(jobId, run2, ['docs', 'deep', 'old'])).toEqual(new Map([['docs', 'papers'], ['deep', 'papers/deep'], ['old', null]]));
    // The first run's view stays what later runs see until this one completes.
    expect(await feeds.folders(jobId, run1, ['docs'])).toEqual(new Map([['docs', 'docs']]));
  });

  it('a resumed run reads its pass again: the same tasks, nothing new; a failed run leaves the older token for the next', async () => {
    await completedFirstRun([['a', 'a.txt'], ['d', 'dir/d.txt']], [['dir', 'dir']]);
    feed.passes.set('t1', [[doc('a', '/In/a2.txt'), folder('dir', '/In/dir2')]]);
    const run2 = await newRun();
    const first = await enumerate(run2);
    const again = await enumerate(run2);
    expect(first.items.map((i) => [i.id, i.rel]).sort()).toEqual([['a', 'a2.txt'], ['d', 'dir2/d.txt']]);
    // The pages read again give the same keys (the run has those tasks: nothing added); the folder's move was queued before
    // the run saved the folder's new path, so the run has its task and reads the folder as renamed already.
    expect(again.queued.map((t) => t.key)).toEqual(first.queued.filter((t) => t.key.startsWith('fd.')).map((t) => t.key));
    expect(feed.latestCalls).toBe(2);
    await settleRun(run2, 'FAILED');
    const run3 = await newRun();
    const third = await enumerate(run3);
    expect(feed.read).toEqual(['t1', 't1', 't1']);
    // The failed run's folder rename is not trusted: run 3 moves the documents again from the old path.
    expect(third.items.map((i) => [i.id, i.rel]).sort()).toEqual([['a', 'a2.txt'], ['d', 'dir2/d.txt']]);
    await settleRun(run3, 'COMPLETED');
    const run4 = await newRun();
    feed.passes.set('t3', [[]]);
    expect(await enumerate(run4)).toMatchObject({ byFeed: true, items: [] });
    expect(feed.read.at(-1)).toBe('t3');
  });

  it('a job that is not recursive follows only the documents directly in its folder', async () => {
    await completedFirstRun([['top', 'top.txt']], []);
    feed.passes.set('t1', [[doc('top', '/In/sub/top.txt'), doc('n', '/In/n.txt'), doc('deep', '/In/sub/deep.txt')]]);
    const run2 = await newRun();
    const { items } = await enumerate(run2, { recursive: false });
    expect(items.map((i) => i.id)).toEqual(['n']);
    expect((await feeds.goneStates(jobId, run2, 10)).map((s) => s.docId)).toEqual(['top']);
  });

  it('a token the source refuses falls back to listing everything, recorded as a p record, keeping the token taken first', async () => {
    await completedFirstRun([['a', 'a.txt']], []);
    feed.expired.add('t1');
    const run2 = await newRun();
    const { byFeed, queued } = await enumerate(run2);
    expect(byFeed).toBe(false);
    expect(queued).toEqual([]);
    expect(await feeds.runFeed(run2)).toEqual({ source: 'src:/in', token: 't2', mode: 'full', since: null });
    expect(await enumeration(run2).readsFeed()).toBe(false);
    const run = (await jobs.findRun(run2))!;
    expect(run).toMatchObject({ written: 1, failed: 0 });
    const report = await jobs.transition(run2, async (locked) => locked.claimDocs(jobId, [{ docId: FEED_FALLBACK_DOC, relPath: '', sourcePath: '/in' }], Date.now()));
    expect(report.get(FEED_FALLBACK_DOC)).toMatchObject({ state: 'done', outcome: 'p' });
    // Resumed, the run lists again without asking the feed.
    expect((await enumerate(run2)).byFeed).toBe(false);
    expect(feed.read).toEqual(['t1']);
    await settleRun(run2, 'COMPLETED');
    const run3 = await newRun();
    await enumerate(run3);
    expect(feed.read).toEqual(['t1', 't2']);
  });

  it('a job whose source changed lists again (a token is of one source)', async () => {
    await completedFirstRun([['a', 'a.txt']], []);
    const run2 = await newRun();
    const queued: TaskSpec[] = [];
    const other = new FeedEnumeration({ ...def, source: { ...def.source, folderPath: '/elsewhere' } }, source, feed, feeds, jobs as unknown as JobStore, jobId, run2, true);
    expect(await other.enumerate(async (tasks) => void queued.push(...tasks))).toBe(false);
    expect(feed.read).toEqual([]);
  });
});
