import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { Limiter } from '@gateway/concurrency';
import { GatewayError } from '@gateway/connector-api';
import { TEXT_EXTRACTOR, type TextExtractor } from '@gateway/text-extraction';
import { JobSyncFeedRepository, JobSyncStateRepository, JobsRepository, type ClaimedDoc, type DocOutcome, type DocToClaim, type TaskSpec, type TaskState } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { CountedReads } from './counted-reads';
import { DocumentCopier, resolveFolderId } from './document-copier';
import { DocumentIndexer, SWEEP_TASK_KEY, type IndexTarget } from './document-indexer';
import { planSteps } from './plan-steps';
import { DocumentPlanner, withPlan } from './document-planner';
import { syncContext, type FeedEnumeration, type SyncCopier } from './sync/sync-context';
import { isIndexingJob } from '../config/job-definition.dto';
import type { JobStore } from './job-store';
import { failingReason, settle } from './run-lifecycle';
import { Cancelled, RunWatcher, type RunWatch } from './run-watcher';
import { DOCS_PER_TASK, LIST_PAGE, ROOT_TASK_KEY, folderPageTasks, isListingKey, parseTask, type DocsPayload, type EnumPayload } from './task-plan';
import { TASK_QUEUE, TaskInterrupted, type TaskQueue, type TaskRef, type TaskSlot } from './task-queue';

/**
 * Outcomes are written in batches: when a batch reaches this many documents, every
 * FLUSH_EVERY_MS, and when the task ends (in the transition that ends it). One batch is a
 * few statements whatever its size (see JobsRepository.finishDocs), so the batch is a whole
 * docs task: a task's documents finish with the task unless it runs longer than FLUSH_EVERY_MS.
 */
export const FLUSH_EVERY_DOCS = DOCS_PER_TASK;
const FLUSH_EVERY_MS = 250;
const WATCH_EVERY_MS = 200;
/** Run contexts kept (definition, connectors, the target folders made). */
const CONTEXTS_KEPT = 100;

interface RunContext {
  jobId: number;
  /** Where its documents wait for a slot: the process's local slots when both connectors hold local files, else the common ones. */
  slots: Limiter;
  /** The indexer too on an indexing job, the planner on a dry run, the sync copier on a sync job: all take a document the same way. */
  copier: DocumentCopier | DocumentIndexer | DocumentPlanner | SyncCopier;
  /** An indexing real run's indexer (writes, commits); a dry run has none. */
  indexer?: DocumentIndexer;
  dryRun: boolean;
  /** Writes what a batch of outcomes says before they are recorded (the index documents, a sync job's states). */
  beforeOutcomes?: (batch: DocOutcome[]) => Promise<DocOutcome[]>;
  /** Loads what earlier runs wrote of a task's documents (indexing and sync jobs; an indexing dry run reads its stamps too). */
  prefetch?: (docIds: readonly string[]) => Promise<void>;
  /** The task that ends a complete real run: the indexer's sweep, or a sync job's deletions (sync/sync-sweep.ts). */
  sweeper?: { sweep(halted: () => boolean): Promise<boolean> };
  /** A sync job whose source has a change feed: its root task reads the feed when it can (sync/change-feed-enumeration.ts). */
  feed?: FeedEnumeration;
}

/**
 * Executes tasks, whichever queue delivers them. Every document goes through
 * claim (read, counted once) → copy → finish (outcome, counted once), so a
 * task run twice — after a crash, a stall or a resume — neither loses nor
 * double-counts a document. The parts: the task plan (task-plan.ts) cuts the
 * work, the copier (document-copier.ts) copies one document, the watcher
 * (run-watcher.ts) tells workers when their run stops taking documents.
 */
@Injectable()
export class JobExecutor implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobExecutor.name);
  private readonly watcher: RunWatcher;
  private readonly contexts = new Map<string, RunContext>();
  /** The bounded concurrency of document copies in this process (GATEWAY_JOB_CONCURRENCY). */
  private readonly docSlots: Limiter;
  /** The same for jobs between two connectors of local files (GATEWAY_JOB_LOCAL_CONCURRENCY). */
  private readonly localSlots: Limiter;
  /** Where copy jobs read their mapping files (`<dataDir>/mappings/`). */
  private readonly dataDir: string;
  private shuttingDown = false;

  constructor(
    @Inject(JobsRepository) private readonly repo: JobStore,
    private readonly registry: ConnectorRegistry,
    @Inject(TASK_QUEUE) private readonly queue: TaskQueue,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Optional() private readonly metrics?: GatewayMetrics,
    // Indexing jobs without it index metadata only, saying why in each document's audit record.
    @Optional() @Inject(TEXT_EXTRACTOR) private readonly extractor?: TextExtractor,
    // Sync jobs' state (sync/); a test module without it cannot run sync jobs (their runs fail saying so).
    @Optional() private readonly syncStates?: JobSyncStateRepository,
    @Optional() private readonly syncFeeds?: JobSyncFeedRepository,
  ) {
    this.dataDir = config.dataDir;
    this.docSlots = new Limiter(config.jobs.concurrency);
    this.localSlots = new Limiter(config.jobs.localConcurrency);
    this.watcher = new RunWatcher(repo, WATCH_EVERY_MS);
  }

  onModuleInit(): void {
    this.queue.setHandler((ref, slot) => this.runTask(ref, slot));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    this.watcher.stopProcess();
    await this.queue.drain();
  }

  /** Tells local workers about a status change made by a control call in this process. */
  async notify(runId: string): Promise<void> {
    await this.watcher.refresh(runId);
  }

  /**
   * One task of one attempt of a run. The task row belongs to the attempt that
   * queued it: a task of an older attempt (queued before a resume) neither starts
   * nor writes its row, since the resume reset that row and queued it again.
   */
  async runTask(ref: TaskRef, slot?: TaskSlot): Promise<void> {
    if (this.shuttingDown) throw new TaskInterrupted();
    const task = await this.repo.findTask(ref.runId, ref.key);
    if (!task || task.state === 'done') return;
    // Loaded before the lock for options.maxErrors; a failure to load fails the task below.
    let loadFailure: unknown;
    const ctx = await this.context(ref.runId).catch((e: unknown) => void (loadFailure = e ?? new Error('The run could not be loaded')));
    const maxErrors = ctx?.copier.def.options.maxErrors ?? 0;
    const planned = parseTask(task);
    const toClaim = planned.kind === 'docs' && ctx ? { jobId: ctx.jobId, docs: this.docsToClaim(ctx, planned.payload) } : undefined;
    // The batch is claimed in the transition that starts the task (one transaction less per
    // task); should that fail, the task starts without it and claims on its own, as before.
    const start = await this.start(ref, task.state, maxErrors, toClaim).catch((e: unknown) => {
      if (toClaim === undefined) throw e;
      return this.start(ref, task.state, maxErrors, undefined);
    });
    if (!start) return;

    const watch = this.watcher.acquire(start.run, maxErrors);
    let finished = false;
    let failure: string | undefined;
    let rest: DocOutcome[] = [];
    // A listed page's tasks, inserted by the transition that ends this task (one transaction less per page).
    let listed: TaskSpec[] = [];
    try {
      if (!ctx) throw loadFailure;
      if (planned.kind === 'enum') {
        // An indexing run makes sure of its collection as it starts (a kill before the first write leaves it there, empty).
        if (ctx.indexer && ref.key === ROOT_TASK_KEY) await ctx.indexer.ensureCollection();
        listed = await this.enumerate(ref, ctx, planned.payload);
        finished = true;
      } else if (planned.kind === 'sweep') {
        finished = await ctx.sweeper!.sweep(() => !watch.takes(ref.attempt));
      } else {
        const claims = start.claims ?? (await this.repo.claimDocs(ctx.jobId, ref.runId, toClaim!.docs, Date.now()));
        ({ finished, rest } = await this.copyDocs(ref, ctx, watch, planned.payload, claims, slot));
      }
    } catch (e) {
      if (!(e instanceof Cancelled)) failure = this.describeFailure(e, ref);
    } finally {
      this.watcher.release(ref.runId);
    }
    // What this task wrote is visible before the run can settle on it (a status of COMPLETED, PAUSED or
    // ABORTED is then true of the index too): after the sweep (a complete run's last task), when the run
    // stops taking documents (pause, abort, kill, failing), and on run-errors runs (they have no sweep).
    if (ctx?.indexer && (planned.kind === 'sweep' || !watch.takes(ref.attempt) || start.run.kind === 'runerrors')) {
      await ctx.indexer.commit().catch((e: unknown) => this.logger.warn({ err: e, run: ref.runId }, 'Index commit failed'));
    }

    const jobId = ctx?.jobId ?? 0;
    // The task's last outcomes are written in the transition that ends it (one transaction less
    // per task); should that fail, they are written on their own first, as before.
    const ended = await this.end(ref, jobId, rest, finished, failure, maxErrors, listed).catch(async (e: unknown) => {
      if (rest.length === 0) throw e;
      try {
        await this.repo.finishDocs(jobId, ref.runId, rest, Date.now());
      } catch (writeError) {
        finished = false;
        failure ??= this.describeFailure(writeError, ref);
      }
      return this.end(ref, jobId, [], finished, failure, maxErrors, listed);
    });
    if (listed.length > 0) await this.enqueueTasks(ref, listed);
    if (ended.failing) await this.notify(ref.runId);
    if (ended.sweep) await this.queue.enqueue([{ runId: ref.runId, key: SWEEP_TASK_KEY, attempt: ref.attempt }]);
    // The run settled by this task without a commit above (it turned failing as the task ended): commit now.
    if (ctx?.indexer && ended.status !== undefined && ended.status !== 'RUNNING' && planned.kind !== 'sweep') {
      await ctx.indexer.commit().catch((e: unknown) => this.logger.warn({ err: e, run: ref.runId }, 'Index commit at the end of a run failed'));
    }
    if (!finished && this.shuttingDown && this.queue.mode === 'redis') throw new TaskInterrupted();
  }

  /** The transition that starts a task: undefined when the task is not to run (another attempt's, or its run stopped taking work). */
  private start(ref: TaskRef, taskState: TaskState, maxErrors: number, toClaim: { jobId: number; docs: DocToClaim[] } | undefined) {
    return this.repo.transition(ref.runId, async (locked) => {
      const run = locked.run;
      if (run.attempt !== ref.attempt) return undefined;
      if (run.status !== 'RUNNING' || failingReason(run, maxErrors) !== undefined) {
        // BullMQ hands a task out again only when the worker that had it lost its lock (a
        // killed process): its row still says active and would hold PAUSING, ABORTING or a
        // failing run forever. The row goes back to pending; resume queues it again.
        if (this.queue.mode === 'redis' && taskState === 'active') await locked.setTaskState(ref.key, 'pending');
        await settle(locked, Date.now(), maxErrors);
        return undefined;
      }
      await locked.setTaskState(ref.key, 'active');
      const claims = toClaim ? await locked.claimDocs(toClaim.jobId, toClaim.docs, Date.now()) : undefined;
      return { run, claims };
    });
  }

  /** The transition that ends a task: its last outcomes, its row, and the run moved on (settle). */
  private end(ref: TaskRef, jobId: number, rest: DocOutcome[], finished: boolean, failure: string | undefined, maxErrors: number, listed: TaskSpec[] = []) {
    const sweeps = this.contexts.get(ref.runId)?.sweeper !== undefined;
    return this.repo.transition(ref.runId, async (locked): Promise<{ failing: boolean; sweep?: boolean; status?: string }> => {
      // What the task listed, as its own transition inserted it before (whatever happened to the run meanwhile).
      if (listed.length > 0) await locked.insertTasks(listed);
      // Outcomes count whatever happened to the run meanwhile: their documents were claimed by it.
      if (rest.length > 0) await locked.finishDocs(jobId, rest, Date.now());
      const failing = rest.length > 0 && locked.run.attempt === ref.attempt && failingReason(locked.run, maxErrors) !== undefined;
      // A resume since this task started: the row is the newer attempt's (reset and queued again).
      if (locked.run.attempt !== ref.attempt) return { failing };
      await locked.setTaskState(ref.key, finished ? 'done' : 'pending');
      if (failure !== undefined && locked.run.status === 'RUNNING' && locked.run.message === null) {
        // The run is failing now: it takes no new work and turns FAILED once no task is active (settle).
        await locked.change({ message: failure });
      }
      // An indexing (or deleting sync) run's last task: what the run did not list is gone from the source (the sweep task).
      const sweep =
        sweeps && finished && ref.key !== SWEEP_TASK_KEY && locked.run.kind === 'start' && failingReason(locked.run, maxErrors) === undefined &&
        locked.run.status === 'RUNNING' && (await locked.countTasks(['pending', 'active'])) === 0;
      if (sweep) await locked.insertTasks([{ key: SWEEP_TASK_KEY, kind: 'sweep', payload: '{}' }]);
      const status = await settle(locked, Date.now(), maxErrors);
      return { failing, sweep, status };
    });
  }

  private describeFailure(e: unknown, ref: TaskRef): string {
    if (e instanceof GatewayError) return e.message;
    this.logger.error({ err: e, task: ref }, 'Job task failed');
    return `Internal error: ${(e as Error)?.message ?? String(e)}`;
  }

  private docsToClaim(ctx: RunContext, p: DocsPayload): DocToClaim[] {
    return p.items.map((i) => ({ docId: i.id, relPath: i.rel, sourcePath: ctx.copier.sourcePath(i) }));
  }

  /** Lists one page of a folder and answers what it found (task-plan.ts), for the transition ending the task to insert. */
  private async enumerate(ref: TaskRef, ctx: RunContext, p: EnumPayload): Promise<TaskSpec[]> {
    if (ref.key === ROOT_TASK_KEY && ctx.feed && (await ctx.feed.enumerate((tasks) => this.queueTasks(ref, tasks)))) return [];
    const source = ctx.copier.source;
    const folderId =
      p.folderId ??
      (await resolveFolderId(source, p.folderPath).catch((e: unknown) => {
        throw new FolderError(`Source folder '${p.folderPath}' cannot be listed: ${(e as Error).message}`);
      }));
    const page = await source.listFolder(folderId, { limit: LIST_PAGE, cursor: p.cursor });
    const tasks = folderPageTasks(ref.key, p, folderId, page, ctx.copier.def.source.recursive, ctx.copier.def.options.mode === 'sync');
    await ctx.feed?.listed(p, page);
    return tasks;
  }

  private async queueTasks(ref: TaskRef, tasks: TaskSpec[]): Promise<void> {
    await this.repo.transition(ref.runId, (locked) => locked.insertTasks(tasks));
    await this.enqueueTasks(ref, tasks);
  }

  private async enqueueTasks(ref: TaskRef, tasks: TaskSpec[]): Promise<void> {
    const refs = (listing: boolean) => tasks.filter((t) => isListingKey(t.key) === listing).map((t) => ({ runId: ref.runId, key: t.key, attempt: ref.attempt }));
    // The page's documents first: the copies start with the first page listed, while listing goes on in its own lane.
    await this.queue.enqueue(refs(false));
    await this.queue.enqueue(refs(true), { listing: true });
  }

  /**
   * Copies a batch of claimed documents; `finished` when every document of it is. Outcomes
   * are written in batches (FLUSH_EVERY_DOCS, FLUSH_EVERY_MS) while it runs; `rest` are those
   * still to write, which the transition ending the task writes before it sets the row, so a
   * task never ends with outcomes unwritten: the run settles only once they are counted.
   */
  private async copyDocs(
    ref: TaskRef,
    ctx: RunContext,
    watch: RunWatch,
    p: DocsPayload,
    claims: Map<string, ClaimedDoc>,
    slot: TaskSlot | undefined,
  ): Promise<{ finished: boolean; rest: DocOutcome[] }> {
    const { copier, jobId } = ctx;
    // An indexer writes the batch's index documents before the outcomes that say so are recorded.
    const prepare = (batch: DocOutcome[]) => (ctx.beforeOutcomes ? ctx.beforeOutcomes(batch) : Promise.resolve(batch));
    const outcomes = new OutcomeBatch(async (batch) => this.repo.finishDocs(jobId, ref.runId, await prepare(batch), Date.now()), async (run) => {
      if (run.attempt === ref.attempt && failingReason(run, copier.def.options.maxErrors) !== undefined) {
        await this.markFailing(ref, copier.def.options.maxErrors);
        return true;
      }
      return false;
    });
    const timer = setInterval(() => void outcomes.flush().catch(() => undefined), FLUSH_EVERY_MS);
    let unfinished = 0;
    const todo = p.items.filter((item) => claims.get(item.id)!.state !== 'done');
    let toCopy = todo.length;
    await ctx.prefetch?.(todo.map((item) => item.id));
    const copyOne = async (claim: ClaimedDoc, item: DocsPayload['items'][number]) => {
      if (!watch.takes(ref.attempt) || outcomes.limitReached) {
        unfinished++;
        return;
      }
      const reads = new CountedReads(watch);
      const outcome = await copier.copy(item, claim, p.fetch === true, reads);
      if (!outcome) {
        unfinished++;
        return;
      }
      if (reads.bytes > 0) outcome.bytesRead = reads.bytes;
      if (ctx.dryRun) withPlan(outcome);
      else this.metrics?.jobDocument(outcome.outcome);
      // The task's last outcomes are left to the transition that ends it (one transaction less per task).
      if (outcomes.add(outcome) >= FLUSH_EVERY_DOCS && toCopy > 0) void outcomes.flush().catch(() => undefined);
    };
    // Documents are taken one slot at a time, not all queued for a slot at once: a task then waits
    // with one caller, not one per document, and what stays alive across garbage collections is
    // the copies in flight. Queued all at once, the waiting documents of the tasks running (up to
    // TASK_SLOTS x DOCS_PER_TASK) survived every young collection, were copied by each and
    // promoted: most of a 10,000-document job's GC time (decision 0014).
    const inFlight = new Set<Promise<void>>();
    let failed: { error: unknown } | undefined;
    try {
      for (const [i, item] of todo.entries()) {
        let release: () => void;
        try {
          release = await ctx.slots.acquire(watch.halted);
        } catch (e) {
          // Halted while waiting for a slot: this document and the rest were not started.
          if (!(e instanceof Cancelled)) failed ??= { error: e };
          unfinished += todo.length - i;
          break;
        }
        if (failed) {
          release();
          unfinished += todo.length - i;
          break;
        }
        toCopy--;
        const copying = copyOne(claims.get(item.id)!, item)
          .catch((error: unknown) => {
            failed ??= { error };
          })
          .finally(() => {
            release();
            inFlight.delete(copying);
          });
        inFlight.add(copying);
      }
      // Every document is handed out: the next task may start while these finish.
      slot?.release();
      await Promise.all(inFlight);
    } finally {
      clearInterval(timer);
    }
    if (failed) throw failed.error;
    return { finished: unfinished === 0, rest: await prepare(await outcomes.takeRest()) };
  }

  /**
   * The errors reached options.maxErrors: the run is failing (its reason becomes its message) and every
   * worker of this process stops taking documents; it turns FAILED once its in-flight tasks ended (settle).
   */
  private async markFailing(ref: TaskRef, maxErrors: number): Promise<void> {
    await this.repo.transition(ref.runId, async (locked) => {
      if (locked.run.attempt === ref.attempt) await settle(locked, Date.now(), maxErrors);
    });
    await this.notify(ref.runId);
  }

  private async context(runId: string): Promise<RunContext> {
    const cached = this.contexts.get(runId);
    if (cached) return cached;
    const run = await this.repo.findRun(runId);
    if (!run) throw new Error(`Run ${runId} not found`);
    const job = await this.repo.findJob(run.jobId);
    if (!job) throw new Error(`Job ${run.jobId} not found`);
    const def = job.definition;
    let ctx: RunContext;
    if (isIndexingJob(def)) {
      const target = this.registry.any(def.target.connectorId);
      if (!target.index) throw new Error(`Connector ${target.id} has no index group`);
      const indexer = new DocumentIndexer(def, this.registry.get(def.source.connectorId), target as IndexTarget, this.repo, this.extractor, job.id, runId, run.dryRun);
      const prefetch = (ids: readonly string[]) => indexer.prefetch(ids);
      // A dry run plans from the stamps (prefetch) and writes, commits and sweeps nothing.
      ctx = run.dryRun
        ? { jobId: job.id, slots: this.docSlots, copier: indexer, dryRun: true, prefetch }
        : { jobId: job.id, slots: this.docSlots, copier: indexer, indexer, dryRun: false, beforeOutcomes: (b) => indexer.beforeOutcomes(b), prefetch, sweeper: indexer };
    } else {
      const source = this.registry.get(def.source.connectorId);
      const target = this.registry.get(def.target.connectorId);
      const local = source.localFiles !== undefined && target.localFiles !== undefined;
      const actor = { username: run.startedBy };
      if (run.dryRun) {
        ctx = { jobId: job.id, slots: local ? this.localSlots : this.docSlots, copier: new DocumentPlanner(def, source, target, planSteps(def, source, target, this.dataDir)), dryRun: true };
      } else {
        const copier = new DocumentCopier(def, source, target, actor, this.dataDir);
        ctx = { jobId: job.id, slots: local ? this.localSlots : this.docSlots, copier, dryRun: false };
        if (def.options.mode === 'sync') ctx = { ...ctx, ...syncContext(copier, target, this.syncStates, this.repo, job.id, runId, actor, this.syncFeeds) };
      }
    }
    if (this.contexts.size >= CONTEXTS_KEPT) this.contexts.clear();
    this.contexts.set(runId, ctx);
    return ctx;
  }
}

/**
 * A task's outcomes waiting to be written. Flushes run one after another; a batch whose
 * write failed is kept for the next flush, and the task's last flush reports the error.
 */
export class OutcomeBatch<R> {
  private buffer: DocOutcome[] = [];
  private flushing: Promise<unknown> = Promise.resolve();
  /** The run's errors reached options.maxErrors (said by `afterWrite`): take no more documents. */
  limitReached = false;

  constructor(
    private readonly write: (batch: DocOutcome[]) => Promise<R>,
    private readonly afterWrite: (result: R) => Promise<boolean>,
  ) {}

  /** Adds an outcome; returns how many wait. */
  add(outcome: DocOutcome): number {
    this.buffer.push(outcome);
    return this.buffer.length;
  }

  /** Waits for the write in progress, then hands over what still waits (the caller writes it). */
  async takeRest(): Promise<DocOutcome[]> {
    await this.flushing.catch(() => undefined);
    const rest = this.buffer;
    this.buffer = [];
    return rest;
  }

  flush(): Promise<unknown> {
    this.flushing = this.flushing
      .catch(() => undefined)
      .then(async () => {
        const batch = this.buffer;
        if (batch.length === 0) return;
        this.buffer = [];
        let result: R;
        try {
          result = await this.write(batch);
        } catch (e) {
          this.buffer = batch.concat(this.buffer);
          throw e;
        }
        if (!this.limitReached && (await this.afterWrite(result))) this.limitReached = true;
      });
    return this.flushing;
  }
}

class FolderError extends GatewayError {
  readonly kind = 'not_found' as const;
  constructor(message: string) {
    super('SOURCE_FOLDER_UNAVAILABLE', message);
  }
}
