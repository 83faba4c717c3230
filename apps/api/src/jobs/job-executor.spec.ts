import { PassThrough } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { ContentConnector } from '@gateway/connector-api';
import type { DocOutcome, JobRunRecord } from '@gateway/persistence';
import { Limiter } from '@gateway/concurrency';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { EmbeddedTaskQueue } from './embedded-task-queue';
import { JobControlService } from './job-control.service';
import { FLUSH_EVERY_DOCS, JobExecutor, OutcomeBatch } from './job-executor';
import { jobsFixture, RecordingQueue, type JobsFixture } from '../../../../test/support/jobs-fixture';
import { DOCS_PER_TASK, docsTask } from './task-plan';
import { TaskInterrupted, type TaskQueue } from './task-queue';

/**
 * The engine in one process: the executor, the embedded queue and the control service over
 * the in-memory store, copying between real filesystem connectors.
 */
describe('JobExecutor', () => {
  beforeAll(() => Logger.overrideLogger(false)); // an internal error is logged; the run's message is what the tests read
  let fx: JobsFixture;
  let queue: TaskQueue;
  let executor: JobExecutor;
  let control: JobControlService;
  let registry: ConnectorRegistry;

  async function setUp(
    options: { queue?: TaskQueue; concurrency?: number; localConcurrency?: number; metrics?: GatewayMetrics; source?: (src: ContentConnector) => ContentConnector } = {},
  ) {
    fx = await jobsFixture({ concurrency: options.concurrency ?? 4, localConcurrency: options.localConcurrency ?? 4 });
    registry = fx.registry;
    if (options.source) {
      const wrapped = options.source(fx.src);
      registry = Object.assign(Object.create(fx.registry) as ConnectorRegistry, { get: (id: string) => (id === 'src' ? wrapped : fx.registry.get(id)) });
    }
    queue = options.queue ?? new EmbeddedTaskQueue(4, 1);
    executor = new JobExecutor(fx.store, registry, queue, fx.config, options.metrics);
    executor.onModuleInit();
    control = new JobControlService(fx.store, registry, executor, queue, fx.config);
  }

  afterEach(async () => {
    await executor.beforeApplicationShutdown();
    await fx.cleanup();
  });

  function tree(n: number, folder = 'in'): Record<string, string> {
    const files: Record<string, string> = {};
    for (let i = 0; i < n; i++) files[`${folder}/${i % 2 ? 'sub/' : ''}doc-${String(i).padStart(3, '0')}.txt`] = `document ${i}`;
    return files;
  }

  // A read (`r`) is kept with the document's outcome record (readAt), once per document and run.
  const audits = (type: string) => fx.store.audit.filter((a) => (type === 'r' ? a.readAt !== null : a.recordType === type)).length;

  it('copies a tree, counting and auditing every document once, and completes', async () => {
    await setUp();
    const n = 2 * DOCS_PER_TASK + 10;
    await fx.writeSource(tree(n));
    const jobId = fx.store.addJob(fx.definition()).id;
    await control.start(jobId, 'alice');
    const run = await fx.settled(jobId);
    expect(run).toMatchObject({ status: 'COMPLETED', read: n, written: n, failed: 0, skipped: 0, message: null });
    expect(audits('r')).toBe(n);
    expect(audits('p')).toBe(n);
    expect(await fx.readTarget('/out/sub', `doc-${n - 1}.txt`)).toBe(`document ${n - 1}`);
    expect(await fx.readTarget('/out', 'doc-000.txt')).toBe('document 0');
    expect(Object.values(fx.store.taskStates(run.id)).every((s) => s === 'done')).toBe(true);
  });

  it('queues listing tasks in the listing lane and copying tasks in the other, a page\'s documents first', async () => {
    const calls: Array<{ kinds: string[]; listing: boolean }> = [];
    const inner = new EmbeddedTaskQueue(1, 1);
    const recording: TaskQueue = {
      mode: 'embedded',
      setHandler: (h) => inner.setHandler(h),
      drain: () => inner.drain(),
      enqueue: async (refs, options) => {
        const kinds = await Promise.all(refs.map(async (r) => (await fx.store.findTask(r.runId, r.key))?.kind ?? r.key));
        calls.push({ kinds, listing: options?.listing === true });
        return inner.enqueue(refs, options);
      },
    };
    await setUp({ queue: recording });
    await fx.writeSource({ 'in/a.txt': 'a', 'in/one/b.txt': 'b', 'in/two/c.txt': 'c', 'in/two/d.txt': 'd' });
    const jobId = fx.store.addJob(fx.definition()).id;
    await control.start(jobId, 'alice');
    expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', written: 4 });
    const found = calls.filter((c) => c.kinds.length > 0);
    // The root's enum task (queued by start), then its two subfolders' (queued by the root's listing) in the listing lane; every docs task (one per folder) in the other.
    expect(found.filter((c) => c.listing).flatMap((c) => c.kinds)).toEqual(['enum', 'enum', 'enum']);
    expect(found.filter((c) => !c.listing).flatMap((c) => c.kinds)).toEqual(['docs', 'docs', 'docs']);
    // The root's page: its documents queued before its subfolders.
    const rootPage = found.findIndex((c) => c.kinds.includes('docs'));
    expect(found[rootPage + 1]).toEqual({ kinds: ['enum', 'enum'], listing: true });
  });

  it('keeps one document per running task waiting for a slot, not the whole task', async () => {
    // Queued all at once, a task's documents each held a waiting caller (and what it keeps alive) until its turn.
    await setUp({ localConcurrency: 2 });
    const n = 2 * DOCS_PER_TASK + 10;
    await fx.writeSource(tree(n));
    let mostWaiting = 0;
    const original = Limiter.prototype.acquire;
    const acquire = jest.spyOn(Limiter.prototype, 'acquire').mockImplementation(function (this: Limiter, ...args) {
      // The local slots (2): what waits once this caller queues too, if no slot is free.
      if (this.limit === 2 && this.active === this.limit) mostWaiting = Math.max(mostWaiting, this.pending + 1);
      return original.apply(this, args);
    });
    try {
      const jobId = fx.store.addJob(fx.definition()).id;
      await control.start(jobId, 'alice');
      expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', read: n, written: n });
    } finally {
      acquire.mockRestore();
    }
    // The embedded queue runs 4 tasks at a time: at most one waiting document each.
    expect(mostWaiting).toBeGreaterThan(0);
    expect(mostWaiting).toBeLessThanOrEqual(4);
  });

  it('fails a task whose bookkeeping throws, and starts no document after it', async () => {
    let counted = 0;
    const metrics = {
      jobDocument: () => {
        if (++counted === 3) throw new Error('metrics registry broken');
      },
    } as unknown as GatewayMetrics;
    await setUp({ localConcurrency: 1, metrics });
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.txt': 'b', 'in/c.txt': 'c', 'in/d.txt': 'd', 'in/e.txt': 'e' });
    const jobId = fx.store.addJob(fx.definition()).id;
    await control.start(jobId, 'alice');
    const run = await fx.settled(jobId);
    expect(run).toMatchObject({ status: 'FAILED', message: 'Internal error: metrics registry broken' });
    // One slot: a, b and c were copied (c's count threw), d and e never started.
    expect(counted).toBe(3);
    expect(await fx.readTarget('/out', 'c.txt')).toBe('c');
    await expect(fx.dst.idByPath('/out', 'd.txt')).rejects.toThrow();
    await expect(fx.dst.idByPath('/out', 'e.txt')).rejects.toThrow();
  });

  it('copies only the source folder itself when the job is not recursive', async () => {
    await setUp();
    await fx.writeSource(tree(6));
    const jobId = fx.store.addJob(fx.definition({}, { recursive: false })).id;
    await control.start(jobId, 'alice');
    expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', read: 3, written: 3 });
  });

  it('completes with errors, skips and duplicates counted apart', async () => {
    await setUp();
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.tmp': 'b', 'in/c.txt': 'new c' });
    await fx.dst.folders!.createFolder('/out', { username: 'x' });
    const outId = await fx.dst.idByPath('/', 'out');
    await fx.dst.createFile({ folderId: outId, fileName: 'c.txt', content: new PassThrough().end('old c') }, { username: 'x' });
    const jobId = fx.store.addJob(fx.definition({ exclude: ['*.tmp'] })).id;
    await control.start(jobId, 'alice');
    expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', read: 3, written: 1, skipped: 2, failed: 0 });
    expect(audits('s')).toBe(1);
    expect(audits('d')).toBe(1);
  });

  it('fails a run whose source folder cannot be listed, with the reason as its message', async () => {
    await setUp();
    const jobId = fx.store.addJob(fx.definition({}, { folderPath: '/missing' })).id;
    await control.start(jobId, 'alice');
    const run = await fx.settled(jobId);
    expect(run.status).toBe('FAILED');
    expect(run.message).toMatch(/^Source folder '\/missing' cannot be listed: /);
    expect(fx.store.taskStates(run.id)).toEqual({ 'e.root': 'pending' });
  });

  it('stops taking documents once the errors reach options.maxErrors, and ends FAILED', async () => {
    // The documented bound (jobs README): once the run has recorded maxErrors failures it takes no new
    // documents; only those already in flight finish. The test holds the documents after the first
    // maxErrors until the executor has told its workers (notify), so "in flight" is exactly what the
    // document slots hold and the bound is maxErrors + DOC_SLOTS whatever the machine's speed.
    const MAX_ERRORS = 5;
    const DOC_SLOTS = 2;
    let opened = 0;
    let told!: () => void;
    const workersTold = new Promise<void>((resolve) => (told = resolve));
    const failing = (src: ContentConnector) =>
      Object.assign(Object.create(src) as ContentConnector, {
        openContent: async () => {
          if (++opened > MAX_ERRORS) await workersTold;
          throw new Error('disk read error');
        },
        localFiles: undefined,
      });
    await setUp({ source: failing, concurrency: DOC_SLOTS, localConcurrency: DOC_SLOTS });
    const notify = executor.notify.bind(executor);
    executor.notify = async (runId: string) => {
      await notify(runId);
      if (fx.store.runs.get(runId)?.message !== undefined) told();
    };
    await fx.writeSource(tree(3 * DOCS_PER_TASK, 'in'));
    const jobId = fx.store.addJob(fx.definition({ maxErrors: MAX_ERRORS })).id;
    await control.start(jobId, 'alice');
    const run = await fx.settled(jobId);
    expect(run.status).toBe('FAILED');
    expect(run.message).toMatch(/documents failed; the job's limit is 5 \(options.maxErrors\)$/);
    expect(run.failed).toBeGreaterThanOrEqual(MAX_ERRORS);
    expect(run.failed).toBeLessThanOrEqual(MAX_ERRORS + DOC_SLOTS);
    expect(opened).toBe(run.failed);
    expect(run.written).toBe(0);
    expect(audits('e')).toBe(run.failed);
  });

  it('redoes only the documents a resumed task has not finished', async () => {
    await setUp();
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.txt': 'b', 'in/c.txt': 'c' });
    const job = fx.store.addJob(fx.definition());
    const ids = await Promise.all(['a', 'b', 'c'].map((n) => fx.src.idByPath('/in', `${n}.txt`)));
    const run = fx.store.addRun(job.id, { attempt: 2 });
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: ids.map((id, i) => ({ id, rel: `${'abc'[i]}.txt`, path: `/in/${'abc'[i]}.txt` })) }), runId: run.id, state: 'pending' });
    await fx.store.claimDocs(job.id, run.id, ids.map((id) => ({ docId: id, relPath: 'x', sourcePath: 'x' })), Date.now());
    await fx.store.finishDocs(job.id, run.id, [{ docId: ids[0], outcome: 'e', sourcePath: '/in/a.txt', message: 'earlier' }], Date.now());
    await executor.runTask({ runId: run.id, key: 'd.1', attempt: 2 });
    expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', read: 3, written: 2, failed: 1 });
    await expect(fx.dst.idByPath('/out', 'a.txt')).rejects.toThrow();
    expect(await fx.readTarget('/out', 'c.txt')).toBe('c');
  });

  it('ignores a task queued for an older attempt, and a task already done', async () => {
    await setUp({ queue: new RecordingQueue() });
    const job = fx.store.addJob(fx.definition());
    const run = fx.store.addRun(job.id, { attempt: 2 });
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: [] }), runId: run.id, state: 'pending' });
    fx.store.tasks.get(run.id)!.set('d.2', { ...docsTask('d.2', { items: [] }), runId: run.id, state: 'done' });
    fx.store.transitions = 0;
    await executor.runTask({ runId: run.id, key: 'd.1', attempt: 1 });
    expect(fx.store.taskStates(run.id)).toEqual({ 'd.1': 'pending', 'd.2': 'done' });
    await executor.runTask({ runId: run.id, key: 'd.2', attempt: 2 });
    await executor.runTask({ runId: run.id, key: 'nope', attempt: 2 });
    expect(fx.store.transitions).toBe(1);
    expect(fx.store.runs.get(run.id)!.status).toBe('RUNNING');
  });

  it('does not start a task of a run that stopped taking work, and settles the run instead', async () => {
    await setUp({ queue: new RecordingQueue() });
    const job = fx.store.addJob(fx.definition());
    const run = fx.store.addRun(job.id, { status: 'PAUSING' });
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: [] }), runId: run.id, state: 'pending' });
    await executor.runTask({ runId: run.id, key: 'd.1', attempt: 1 });
    expect(fx.store.runs.get(run.id)!.status).toBe('PAUSED');
    expect(fx.store.taskStates(run.id)).toEqual({ 'd.1': 'pending' });
  });

  it('redis: puts back to pending a task handed out again after its worker died, so that the run can settle', async () => {
    await setUp({ queue: new RecordingQueue('redis') });
    const job = fx.store.addJob(fx.definition());
    const run = fx.store.addRun(job.id, { status: 'ABORTING' });
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: [] }), runId: run.id, state: 'active' });
    await executor.runTask({ runId: run.id, key: 'd.1', attempt: 1 });
    expect(fx.store.taskStates(run.id)).toEqual({ 'd.1': 'pending' });
    expect(fx.store.runs.get(run.id)!.status).toBe('ABORTED');
  });

  it('kill cuts the documents in flight: nothing is written, they stay claimed, and resume copies them', async () => {
    const { gate, slow } = heldSource();
    await setUp({ source: slow });
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.txt': 'b' });
    const jobId = fx.store.addJob(fx.definition()).id;
    await control.start(jobId, 'alice');
    while (gate.opened < 2) await new Promise((r) => setTimeout(r, 5));
    await control.kill(jobId);
    const killed = await fx.settled(jobId);
    expect(killed).toMatchObject({ status: 'ABORTED', read: 2, written: 0, failed: 0, cancel: false });
    await expect(fx.dst.idByPath('/out', 'a.txt')).rejects.toThrow();
    gate.release!();
    await control.resume(jobId);
    const resumed = await fx.settled(jobId);
    expect(resumed).toMatchObject({ status: 'COMPLETED', read: 2, written: 2, failed: 0, attempt: 2 });
    expect(await fx.readTarget('/out', 'b.txt')).toBe('b');
    expect(audits('r')).toBe(2);
  });

  it('gives up its task slot once every document is handed out, while they are still in flight', async () => {
    const { gate, slow } = heldSource();
    await setUp({ source: slow, queue: new RecordingQueue() });
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.txt': 'b' });
    const job = fx.store.addJob(fx.definition());
    const ids = await Promise.all(['a', 'b'].map((n) => fx.src.idByPath('/in', `${n}.txt`)));
    const run = fx.store.addRun(job.id);
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: ids.map((id, i) => ({ id, rel: `${'ab'[i]}.txt`, path: `/in/${'ab'[i]}.txt` })) }), runId: run.id, state: 'pending' });
    // What had been written when the slot was given up.
    const releasedWith: number[] = [];
    let returned = false;
    const task = executor
      .runTask({ runId: run.id, key: 'd.1', attempt: 1 }, { release: () => releasedWith.push(fx.store.runs.get(run.id)!.written) })
      .then(() => (returned = true));
    while (gate.opened < 2) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
    // Both documents are open and held: the slot was given up with nothing written, and the task has not returned.
    expect(releasedWith).toEqual([0]);
    expect(returned).toBe(false);
    gate.release!();
    await task;
    expect(releasedWith).toEqual([0]);
    expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'COMPLETED', written: 2 });
  });

  it('claims on its own when claiming in the starting transition fails, and still copies the batch', async () => {
    await setUp();
    await fx.writeSource({ 'in/a.txt': 'a', 'in/b.txt': 'b' });
    const jobId = fx.store.addJob(fx.definition()).id;
    const transition = fx.store.transition.bind(fx.store);
    let refused = 0;
    fx.store.transition = (runId, fn) =>
      transition(runId, (locked) =>
        fn(
          Object.assign(locked, {
            claimDocs: async () => {
              refused++;
              throw new Error('database busy');
            },
          }),
        ),
      );
    await control.start(jobId, 'alice');
    expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', read: 2, written: 2 });
    expect(refused).toBe(1);
    expect(audits('r')).toBe(2);
  });

  it('writes the last outcomes on their own when the ending transition fails, and fails the run when they cannot be written', async () => {
    await setUp();
    await fx.writeSource({ 'in/a.txt': 'a' });
    const jobId = fx.store.addJob(fx.definition()).id;
    const transition = fx.store.transition.bind(fx.store);
    fx.store.transition = (runId, fn) =>
      transition(runId, (locked) =>
        fn(Object.assign(locked, { finishDocs: async () => Promise.reject(new Error('disk full')) })),
      );
    await control.start(jobId, 'alice');
    expect(await fx.settled(jobId)).toMatchObject({ status: 'COMPLETED', read: 1, written: 1 });

    await executor.beforeApplicationShutdown();
    await fx.cleanup();
    await setUp();
    await fx.writeSource({ 'in/a.txt': 'a' });
    const second = fx.store.addJob(fx.definition()).id;
    fx.store.finishDocs = async () => Promise.reject(new Error('disk full'));
    const inner = fx.store.transition.bind(fx.store);
    fx.store.transition = (runId, fn) =>
      inner(runId, (locked) =>
        fn(Object.assign(locked, { finishDocs: async () => Promise.reject(new Error('disk full')) })),
      );
    await control.start(second, 'alice');
    const failed = await fx.settled(second);
    expect(failed).toMatchObject({ status: 'FAILED', message: 'Internal error: disk full', read: 1, written: 0 });
  });

  it('refuses new tasks once the process stops (the queue hands them out again later)', async () => {
    await setUp({ queue: new RecordingQueue() });
    await executor.beforeApplicationShutdown();
    await expect(executor.runTask({ runId: '1_1', key: 'e.root', attempt: 1 })).rejects.toBeInstanceOf(TaskInterrupted);
  });

  it('fails a run whose job definition is gone', async () => {
    await setUp({ queue: new RecordingQueue() });
    const job = fx.store.addJob(fx.definition());
    const run = fx.store.addRun(job.id);
    fx.store.tasks.get(run.id)!.set('d.1', { ...docsTask('d.1', { items: [] }), runId: run.id, state: 'pending' });
    fx.store.jobs.delete(job.id);
    await executor.runTask({ runId: run.id, key: 'd.1', attempt: 1 });
    expect(fx.store.runs.get(run.id)).toMatchObject({ status: 'FAILED', message: `Internal error: Job ${job.id} not found` });
  });
});

/**
 * A source whose documents open at once but send nothing until `gate.release()`: copies stay in
 * flight (read through openContent: the wrapper withdraws the localFiles group, so no direct copy).
 */
function heldSource() {
  const gate: { release?: () => void; opened: number } = { opened: 0 };
  const held = new Promise<void>((r) => (gate.release = r));
  const slow = (src: ContentConnector) =>
    Object.assign(Object.create(src) as ContentConnector, {
      localFiles: undefined,
      openContent: async (id: string) => {
        const real = await src.openContent(id);
        gate.opened++;
        const out = new PassThrough();
        void held.then(() => real.pipe(out));
        return out;
      },
    });
  return { gate, slow };
}

describe('OutcomeBatch', () => {
  const outcome = (docId: string): DocOutcome => ({ docId, outcome: 'p', sourcePath: `/in/${docId}` });

  it('writes what waits in one batch, and nothing when nothing waits', async () => {
    const written: string[][] = [];
    const batch = new OutcomeBatch(async (b) => void written.push(b.map((o) => o.docId)), async () => false);
    expect(batch.add(outcome('a'))).toBe(1);
    expect(batch.add(outcome('b'))).toBe(2);
    await batch.flush();
    await batch.flush();
    expect(written).toEqual([['a', 'b']]);
    expect(FLUSH_EVERY_DOCS).toBe(DOCS_PER_TASK);
  });

  it('keeps a batch whose write failed for the next flush, ahead of newer outcomes', async () => {
    const written: string[][] = [];
    let fail = true;
    const batch = new OutcomeBatch(
      async (b) => {
        if (fail) throw new Error('database busy');
        written.push(b.map((o) => o.docId));
      },
      async () => false,
    );
    batch.add(outcome('a'));
    await expect(batch.flush()).rejects.toThrow('database busy');
    batch.add(outcome('b'));
    fail = false;
    await batch.flush();
    expect(written).toEqual([['a', 'b']]);
  });

  it('runs flushes one after another, each with what waited when it started', async () => {
    const order: string[] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => (release = r));
    const batch = new OutcomeBatch(
      async (b) => {
        order.push(`start ${b.map((o) => o.docId).join(',')}`);
        if (b[0].docId === 'a') await first;
        order.push(`end ${b.map((o) => o.docId).join(',')}`);
      },
      async () => false,
    );
    batch.add(outcome('a'));
    const one = batch.flush();
    await new Promise((r) => setImmediate(r));
    batch.add(outcome('b'));
    const two = batch.flush();
    release();
    await Promise.all([one, two]);
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('hands over what still waits once the write in progress ended, failed writes included', async () => {
    let fail = true;
    const batch = new OutcomeBatch(async () => {
      if (fail) throw new Error('busy');
    }, async () => false);
    batch.add(outcome('a'));
    const failing = batch.flush();
    batch.add(outcome('b'));
    await expect(failing).rejects.toThrow('busy');
    fail = false;
    expect((await batch.takeRest()).map((o) => o.docId)).toEqual(['a', 'b']);
    expect(await batch.takeRest()).toEqual([]);
  });

  it('remembers that the run reached its error limit once a write says so', async () => {
    const runs: Array<Partial<JobRunRecord>> = [];
    const batch = new OutcomeBatch(async () => ({ failed: runs.length }), async (run) => (runs.push(run), run.failed >= 1));
    batch.add(outcome('a'));
    await batch.flush();
    expect(batch.limitReached).toBe(false);
    batch.add(outcome('b'));
    await batch.flush();
    expect(batch.limitReached).toBe(true);
    batch.add(outcome('c'));
    await batch.flush();
    expect(runs).toHaveLength(2); // once reached, not asked again
  });
});
