import { Logger } from '@nestjs/common';
import type { ContentConnector } from '@gateway/connector-api';
import { JobsRepository, type JobRunRecord } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { DATABASE_KINDS, useDatabase } from '../../../../test/support/databases';
import { jobsFixture, RecordingQueue, type JobsFixture } from '../../../../test/support/jobs-fixture';
import { EmbeddedTaskQueue } from './embedded-task-queue';
import { JobControlService } from './job-control.service';
import { isActive } from './job-states';
import { JobExecutor } from './job-executor';
import { DOCS_PER_TASK } from './task-plan';
import type { TaskQueue } from './task-queue';

/**
 * The job engine (executor, embedded queue, control service) on the real JobsRepository, each case on a real SQLite
 * and a real PostgreSQL, copying between real filesystem connectors: the unit specs run the same services on the
 * in-memory store, which job-store.medium-spec.ts holds to the repository's answers.
 */
describe.each(DATABASE_KINDS)('job engine on JobsRepository (%s)', (kind) => {
  beforeAll(() => Logger.overrideLogger(false)); // a failed document is logged; the run's counters are what the tests read
  const database = useDatabase(kind);
  let fx: JobsFixture;
  let repo: JobsRepository<JobDefinition>;
  let executor: JobExecutor;
  let control: JobControlService;

  async function setUp(options: { queue?: TaskQueue; source?: (src: ContentConnector) => ContentConnector } = {}) {
    fx = await jobsFixture({ concurrency: 4, localConcurrency: 4 });
    repo = new JobsRepository<JobDefinition>(database());
    let registry = fx.registry;
    if (options.source) {
      const wrapped = options.source(fx.src);
      registry = Object.assign(Object.create(fx.registry) as ConnectorRegistry, { get: (id: string) => (id === 'src' ? wrapped : fx.registry.get(id)) });
    }
    const queue = options.queue ?? new EmbeddedTaskQueue(4, 1);
    executor = new JobExecutor(repo, registry, queue, fx.config);
    executor.onModuleInit();
    control = new JobControlService(repo, registry, executor, queue, fx.config);
  }

  afterEach(async () => {
    await executor.beforeApplicationShutdown();
    await fx.cleanup();
  });

  const addJob = async (definition: JobDefinition) => (await repo.insertJob({ name: definition.jobName, group: definition.jobGroup, origin: 'api', definition, now: 1 }))!;
  const settled = async (jobId: number): Promise<JobRunRecord> => {
    for (;;) {
      const run = await repo.latestRun(jobId);
      if (run && !isActive(run.status)) return run;
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const tree = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`in/${i % 2 ? 'sub/' : ''}doc-${String(i).padStart(3, '0')}.txt`, `document ${i}`]));

  it('copies a tree over several tasks, counting every document once; the report adds up to the counters', async () => {
    await setUp();
    const n = 2 * DOCS_PER_TASK + 10;
    await fx.writeSource(tree(n));
    const jobId = await addJob(fx.definition());
    await control.start(jobId, 'alice');
    const run = await settled(jobId);
    expect(run).toMatchObject({ status: 'COMPLETED', read: n, written: n, failed: 0, skipped: 0, message: null, discovered: n });
    expect(await repo.reportCounts(run.id)).toEqual({ p: n, e: 0, d: 0, s: 0, r: 0 });
    expect(await repo.unfinishedTaskKeys(run.id)).toEqual([]);
    expect(await fx.readTarget('/out/sub', `doc-${String(n - 1).padStart(3, '0')}.txt`)).toBe(`document ${n - 1}`);
  });

  it('completes with errors, then a runerrors run reads the failed documents back and copies only them', async () => {
    let failing = true;
    const bad = new Set<string>();
    await setUp({
      source: (src) =>
        Object.assign(Object.create(src) as ContentConnector, {
          openContent: async (id: string) => {
            if (failing && bad.has(id)) throw new Error('disk read error');
            return src.openContent(id);
          },
          localFiles: undefined, // through openContent: no direct copy between the two filesystems
        }),
    });
    await fx.writeSource({ 'in/a.txt': 'a', 'in/bad-1.txt': 'b1', 'in/c.txt': 'c', 'in/sub/bad-2.txt': 'b2' });
    bad.add(await fx.src.idByPath('/in', 'bad-1.txt')).add(await fx.src.idByPath('/in/sub', 'bad-2.txt'));
    const jobId = await addJob(fx.definition());
    await control.start(jobId, 'alice');
    const first = await settled(jobId);
    expect(first).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', read: 4, written: 2, failed: 2 });
    expect((await repo.failedDocs(first.id, undefined, 10)).map((d) => d.relPath).sort()).toEqual(['bad-1.txt', 'sub/bad-2.txt']);

    failing = false;
    await control.runErrors(jobId, 'alice');
    const second = await settled(jobId);
    expect(second).toMatchObject({ id: `${jobId}_2`, kind: 'runerrors', status: 'COMPLETED', read: 2, written: 2, failed: 0 });
    expect(await fx.readTarget('/out/sub', 'bad-2.txt')).toBe('b2');
  });

  it('fails at start-up a run a dead process left running, and resume finishes it with exact counters', async () => {
    // A process that committed the start and died before any task ran: its queue recorded them and ran nothing.
    await setUp({ queue: new RecordingQueue() });
    await fx.writeSource(tree(30));
    const jobId = await addJob(fx.definition());
    await control.start(jobId, 'alice');
    expect(await repo.latestRun(jobId)).toMatchObject({ status: 'RUNNING', read: 0 });
    await executor.beforeApplicationShutdown();

    // The next process: start-up recovery, then the operator's resume.
    const queue = new EmbeddedTaskQueue(4, 1);
    executor = new JobExecutor(repo, fx.registry, queue, fx.config);
    executor.onModuleInit();
    control = new JobControlService(repo, fx.registry, executor, queue, fx.config);
    await control.onApplicationBootstrap();
    expect(await repo.latestRun(jobId)).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/\w/) });
    await control.resume(jobId);
    expect(await settled(jobId)).toMatchObject({ id: `${jobId}_1`, status: 'COMPLETED', read: 30, written: 30, failed: 0, attempt: 2 });
  });
});
