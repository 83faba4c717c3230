import { createHash } from 'node:crypto';
import * as path from 'node:path/posix';
import type { Readable } from 'node:stream';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConflictError, GatewayError, NotFoundError, type Actor, type ContentConnector } from '@gateway/connector-api';
import { JobsRepository, type ClaimedDoc, type DocOutcome, type JobRunRecord } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { JobDefinition } from './job-definition.dto';
import { failingReason, settle } from './run-lifecycle';
import { TASK_QUEUE, TaskInterrupted, type TaskQueue, type TaskRef } from './task-queue';

/** Documents listed per folder page, and per docs task. */
export const LIST_PAGE = 1000;
export const DOCS_PER_TASK = 100;
const FLUSH_EVERY_DOCS = 50;
const FLUSH_EVERY_MS = 250;
const WATCH_EVERY_MS = 200;
/** Timestamps of coarse filesystems: a target modified this close before the claim still counts as ours. */
const CLOCK_TOLERANCE_MS = 1000;

export interface EnumPayload {
  /** Resolved from folderPath when absent (the root task). */
  folderId?: string;
  folderPath: string;
  /** Path of the folder relative to the job's source folder ('' for the folder itself). */
  rel: string;
  cursor?: string;
}

export interface DocItem {
  id: string;
  /** Relative to the job's source folder, '/' separated, e.g. 'sub/a.txt'. */
  rel: string;
  path?: string;
  mimeType?: string;
  size?: number;
}

export interface DocsPayload {
  items: DocItem[];
  /** Run-errors: the items carry only id and rel; the rest is fetched by id. */
  fetch?: boolean;
}

export function rootTask(def: JobDefinition): { key: string; kind: string; payload: string } {
  return { key: 'e.root', kind: 'enum', payload: JSON.stringify({ folderPath: def.source.folderPath, rel: '' } satisfies EnumPayload) };
}

export function docsTask(key: string, payload: DocsPayload): { key: string; kind: string; payload: string } {
  return { key, kind: 'docs', payload: JSON.stringify(payload) };
}

function hashKey(prefix: string, ...parts: string[]): string {
  return `${prefix}.${createHash('sha1').update(parts.join('\n')).digest('hex')}`;
}

/**
 * What this process knows about a run it works on (refreshed from the database).
 * It only moves forward: a task of attempt n brings it to n (the run lock said so
 * when the task started), and a refresh read before that is dropped.
 */
interface RunWatch {
  status: string;
  attempt: number;
  cancel: boolean;
  /** RUNNING but bound to end FAILED (failingReason): take no new documents. */
  failing: boolean;
  maxErrors: number;
  users: number;
  inflight: Set<Readable>;
  timer?: NodeJS.Timeout;
}

interface RunContext {
  jobId: number;
  def: JobDefinition;
  source: ContentConnector;
  target: ContentConnector;
  actor: Actor;
  folders: Map<string, Promise<string>>;
  exclude: RegExp[];
}

/** A FIFO counting semaphore: the bounded concurrency of document copies in this process. */
class Semaphore {
  private waiters: Array<() => void> = [];
  constructor(private free: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiters.push(r));
    try {
      return await fn();
    } finally {
      const next = this.waiters.shift();
      if (next) next();
      else this.free++;
    }
  }
}

class Cancelled extends Error {}

/**
 * Executes tasks, whichever queue delivers them. Every document goes through
 * claim (read, counted once) → copy → finish (outcome, counted once), so a
 * task run twice — after a crash, a stall or a resume — neither loses nor
 * double-counts a document.
 */
@Injectable()
export class JobExecutor implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobExecutor.name);
  private readonly watches = new Map<string, RunWatch>();
  private readonly contexts = new Map<string, RunContext>();
  private readonly docSlots: Semaphore;
  private shuttingDown = false;

  constructor(
    private readonly repo: JobsRepository,
    private readonly registry: ConnectorRegistry,
    @Inject(TASK_QUEUE) private readonly queue: TaskQueue,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.docSlots = new Semaphore(config.jobs.concurrency);
  }

  onModuleInit(): void {
    this.queue.setHandler((ref) => this.runTask(ref));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    for (const w of this.watches.values()) for (const s of w.inflight) s.destroy(new Cancelled('shutdown'));
    await this.queue.drain();
    for (const w of this.watches.values()) clearInterval(w.timer);
  }

  /** Tells local workers about a status change made by a control call in this process. */
  async notify(runId: string): Promise<void> {
    const w = this.watches.get(runId);
    if (w) await this.refresh(runId, w);
  }

  // ---- tasks --------------------------------------------------------------

  /**
   * One task of one attempt of a run. The task row belongs to the attempt that
   * queued it: a task of an older attempt (queued before a resume) neither starts
   * nor writes its row, since the resume reset that row and queued it again.
   */
  async runTask(ref: TaskRef): Promise<void> {
    if (this.shuttingDown) throw new TaskInterrupted();
    const task = await this.repo.findTask(ref.runId, ref.key);
    if (!task || task.state === 'done') return;
    // Loaded before the lock for options.maxErrors; a failure to load fails the task below.
    const loaded = await this.context(ref.runId).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    const maxErrors = loaded instanceof Error ? 0 : loaded.def.options.maxErrors;
    const started = await this.repo.withRunLock(ref.runId, async (run, trx) => {
      if (run.attempt !== ref.attempt) return undefined;
      if (run.status !== 'RUNNING' || failingReason(run, maxErrors) !== undefined) {
        // BullMQ hands a task out again only when the worker that had it lost its lock (a
        // killed process): its row still says active and would hold PAUSING, ABORTING or a
        // failing run forever. The row goes back to pending; resume queues it again.
        if (this.queue.mode === 'redis' && task.state === 'active') await this.repo.setTaskState(trx, ref.runId, ref.key, 'pending');
        await settle(this.repo, trx, run, Date.now(), maxErrors);
        return undefined;
      }
      await this.repo.setTaskState(trx, ref.runId, ref.key, 'active');
      return run;
    });
    if (!started) return;

    const watch = this.acquireWatch(started, maxErrors);
    let finished = false;
    let failure: string | undefined;
    try {
      if (loaded instanceof Error) throw loaded;
      const ctx = loaded;
      if (task.kind === 'enum') {
        await this.enumerate(ref, ctx, JSON.parse(task.payload) as EnumPayload);
        finished = true;
      } else {
        finished = await this.copyDocs(ref, ctx, watch, JSON.parse(task.payload) as DocsPayload);
      }
    } catch (e) {
      if (!(e instanceof Cancelled)) {
        failure = e instanceof GatewayError ? e.message : `Internal error: ${(e as Error)?.message ?? String(e)}`;
        if (!(e instanceof GatewayError)) this.logger.error({ err: e, task: ref }, 'Job task failed');
      }
    } finally {
      this.releaseWatch(ref.runId);
    }

    await this.repo.withRunLock(ref.runId, async (run, trx) => {
      // A resume since this task started: the row is the newer attempt's (reset and queued again).
      if (run.attempt !== ref.attempt) return;
      await this.repo.setTaskState(trx, ref.runId, ref.key, finished ? 'done' : 'pending');
      if (failure !== undefined && run.status === 'RUNNING' && run.message === null) {
        // The run is failing now: it takes no new work and turns FAILED once no task is active (settle).
        await this.repo.updateRun(trx, run.id, { message: failure });
        run = { ...run, message: failure };
      }
      await settle(this.repo, trx, run, Date.now(), maxErrors);
    });
    if (!finished && this.shuttingDown && this.queue.mode === 'redis') throw new TaskInterrupted();
  }

  /** Lists one page of a folder and queues what it found: a docs task per 100 documents, an enum task per subfolder and for the next page. */
  private async enumerate(ref: TaskRef, ctx: RunContext, p: EnumPayload): Promise<void> {
    const folderId = p.folderId ?? (await resolveFolderId(ctx.source, p.folderPath).catch((e: unknown) => {
      throw new FolderError(`Source folder '${p.folderPath}' cannot be listed: ${(e as Error).message}`);
    }));
    const page = await ctx.source.listFolder(folderId, { limit: LIST_PAGE, cursor: p.cursor });
    const tasks: Array<{ key: string; kind: string; payload: string }> = [];
    const docs: DocItem[] = [];
    for (const item of page.items) {
      const rel = p.rel ? `${p.rel}/${item.name}` : item.name;
      if (item.baseType === 'document') {
        docs.push({ id: item.id, rel, path: item.path, mimeType: item.mimeType, size: item.size });
      } else if (ctx.def.source.recursive) {
        const sub: EnumPayload = { folderId: item.id, folderPath: item.path, rel };
        tasks.push({ key: hashKey('e', item.id), kind: 'enum', payload: JSON.stringify(sub) });
      }
    }
    for (let i = 0, k = 0; i < docs.length; i += DOCS_PER_TASK, k++) {
      tasks.push(docsTask(hashKey('d', ref.key, String(k)), { items: docs.slice(i, i + DOCS_PER_TASK) }));
    }
    if (page.nextCursor) {
      const next: EnumPayload = { ...p, folderId, cursor: page.nextCursor };
      tasks.push({ key: hashKey('e', folderId, page.nextCursor), kind: 'enum', payload: JSON.stringify(next) });
    }
    await this.repo.withRunLock(ref.runId, (_run, trx) => this.repo.insertTasks(trx, ref.runId, tasks, Date.now()));
    await this.queue.enqueue(tasks.map((t) => ({ runId: ref.runId, key: t.key, attempt: ref.attempt })));
  }

  /** Copies a batch; true when every document of it is finished. */
  private async copyDocs(ref: TaskRef, ctx: RunContext, watch: RunWatch, p: DocsPayload): Promise<boolean> {
    const claims = await this.repo.claimDocs(
      ctx.jobId,
      ref.runId,
      p.items.map((i) => ({ docId: i.id, relPath: i.rel, sourcePath: i.path ?? joinPath(ctx.def.source.folderPath, i.rel) })),
      Date.now(),
    );
    let limitReached = false;
    const stopped = () =>
      this.shuttingDown || limitReached || watch.attempt !== ref.attempt || watch.status !== 'RUNNING' || watch.failing;
    const buffer: DocOutcome[] = [];
    let flushing: Promise<unknown> = Promise.resolve();
    const flush = () => {
      flushing = flushing.catch(() => undefined).then(async () => {
        const batch = buffer.splice(0, buffer.length);
        if (batch.length === 0) return;
        let run: JobRunRecord;
        try {
          run = await this.repo.finishDocs(ctx.jobId, ref.runId, batch, Date.now());
        } catch (e) {
          buffer.unshift(...batch); // kept for the next flush; the task's last flush reports the error
          throw e;
        }
        if (!limitReached && run.attempt === ref.attempt && failingReason(run, ctx.def.options.maxErrors) !== undefined) {
          limitReached = true;
          await this.markFailing(ref, ctx.def.options.maxErrors);
        }
      });
      return flushing;
    };
    const timer = setInterval(() => void flush().catch(() => undefined), FLUSH_EVERY_MS);
    let unfinished = 0;
    try {
      await Promise.all(
        p.items.map((item) =>
          this.docSlots.run(async () => {
            const claim = claims.get(item.id)!;
            if (claim.state === 'done') return;
            if (stopped()) {
              unfinished++;
              return;
            }
            const outcome = await this.copyOne(ctx, watch, item, claim, p.fetch === true);
            if (!outcome) {
              unfinished++;
              return;
            }
            buffer.push(outcome);
            if (buffer.length >= FLUSH_EVERY_DOCS) void flush().catch(() => undefined);
          }),
        ),
      );
    } finally {
      clearInterval(timer);
    }
    await flush();
    return unfinished === 0;
  }

  /**
   * The errors reached options.maxErrors: the run is failing (its reason becomes its message) and every
   * worker of this process stops taking documents; it turns FAILED once its in-flight tasks ended (settle).
   */
  private async markFailing(ref: TaskRef, maxErrors: number): Promise<void> {
    await this.repo.withRunLock(ref.runId, async (run, trx) => {
      if (run.attempt === ref.attempt) await settle(this.repo, trx, run, Date.now(), maxErrors);
    });
    await this.notify(ref.runId);
  }

  /** One document: undefined when cancelled (kill or shutdown), so it stays claimed and is redone later. */
  private async copyOne(ctx: RunContext, watch: RunWatch, item: DocItem, claim: ClaimedDoc, fetch: boolean): Promise<DocOutcome | undefined> {
    const sourcePath = item.path ?? joinPath(ctx.def.source.folderPath, item.rel);
    const name = path.basename(item.rel);
    const pattern = ctx.exclude.find((r) => r.test(name));
    if (pattern) return { docId: item.id, outcome: 's', sourcePath, message: `Excluded by pattern ${pattern.source}` };
    try {
      let info = item;
      if (fetch) {
        const fresh = await ctx.source.getItem(item.id);
        info = { ...item, path: fresh.path, mimeType: fresh.mimeType, size: fresh.size };
      }
      const relDir = path.dirname(item.rel);
      const targetDir = relDir === '.' ? ctx.def.target.folderPath : joinPath(ctx.def.target.folderPath, relDir);
      const folderId = await this.ensureFolder(ctx, targetDir);
      const { onExisting } = ctx.def.options;

      let existing: string | undefined;
      if (!claim.fresh) {
        // Redone after a crash, stall, kill or resume: did the earlier attempt's write land?
        existing = await findId(ctx.target, targetDir, name);
        if (existing !== undefined) {
          const t = await ctx.target.getItem(existing);
          const modified = t.modified?.getTime() ?? 0;
          if (modified >= claim.claimedAt - CLOCK_TOLERANCE_MS && (info.size === undefined || t.size === undefined || t.size === info.size)) {
            return await this.written(ctx, item, sourcePath, existing, 'recovered: written by an earlier attempt of this run');
          }
        }
      }

      const contents = await this.contentsToCopy(ctx, item.id);
      if (existing === undefined) {
        try {
          const id = await this.writeNew(ctx, watch, folderId, name, info.mimeType, contents);
          return await this.written(ctx, item, sourcePath, id);
        } catch (e) {
          if (!(e instanceof ConflictError)) throw e;
          existing = await findId(ctx.target, targetDir, name);
          if (existing === undefined) throw e;
        }
      }
      if (onExisting === 'skip') {
        return { docId: item.id, outcome: 'd', sourcePath, targetId: existing, message: 'Already exists at the target' };
      }
      if (onExisting === 'overwrite') {
        await ctx.target.deleteItem(existing, true, ctx.actor);
        const id = await this.writeNew(ctx, watch, folderId, name, info.mimeType, contents);
        return await this.written(ctx, item, sourcePath, id, 'overwritten');
      }
      const update = ctx.target.contentUpdate!;
      let id = existing;
      for (const versionId of contents) {
        const content = await this.open(ctx, watch, versionId);
        try {
          id = await update.updateContent(id, { content, mimeType: info.mimeType, fileName: name }, ctx.actor);
        } finally {
          if (!content.readableEnded) content.destroy();
        }
      }
      return await this.written(ctx, item, sourcePath, id, 'new version');
    } catch (e) {
      if (watch.cancel || this.shuttingDown || e instanceof Cancelled) return undefined;
      const message = e instanceof GatewayError ? `${e.code}: ${e.message}` : `INTERNAL: ${(e as Error)?.message ?? String(e)}`;
      return { docId: item.id, outcome: 'e', sourcePath, message };
    }
  }

  private async written(ctx: RunContext, item: DocItem, sourcePath: string, targetId: string, message?: string): Promise<DocOutcome> {
    let removed = false;
    if (ctx.def.options.removeSource) {
      try {
        await ctx.source.deleteItem(item.id, true, ctx.actor);
        removed = true;
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
    }
    return { docId: item.id, outcome: 'p', sourcePath, targetId, ...(message ? { message } : {}), removed };
  }

  /** The source ids whose content is written, oldest first: every version, or just the document. */
  private async contentsToCopy(ctx: RunContext, id: string): Promise<string[]> {
    if (!ctx.def.options.copyVersions || !ctx.source.versioning) return [id];
    const versions = await ctx.source.versioning.listVersions(id);
    if (versions.length === 0) return [id];
    return [...versions].sort((a, b) => a.modified.getTime() - b.modified.getTime()).map((v) => v.id);
  }

  private async writeNew(ctx: RunContext, watch: RunWatch, folderId: string, name: string, mimeType: string | undefined, contents: string[]): Promise<string> {
    const first = await this.open(ctx, watch, contents[0]);
    let id: string;
    try {
      id = await ctx.target.createFile({ folderId, fileName: name, mimeType, content: first }, ctx.actor);
    } finally {
      // A target that refused before reading (it exists, bad name) leaves the stream open.
      if (!first.readableEnded) first.destroy();
    }
    for (const versionId of contents.slice(1)) {
      const content = await this.open(ctx, watch, versionId);
      try {
        id = await ctx.target.contentUpdate!.updateContent(id, { content, mimeType, fileName: name }, ctx.actor);
      } finally {
        if (!content.readableEnded) content.destroy();
      }
    }
    return id;
  }

  /** Opens a source stream that kill (or shutdown) can cut; a cut stream makes the target write fail, leaving nothing. */
  private async open(ctx: RunContext, watch: RunWatch, id: string): Promise<Readable> {
    if (watch.cancel || this.shuttingDown) throw new Cancelled();
    const stream = await ctx.source.openContent(id);
    watch.inflight.add(stream);
    const done = () => watch.inflight.delete(stream);
    stream.once('close', done);
    stream.once('end', done);
    // A kill can destroy the stream before the target has attached its own listeners;
    // the target still sees the error (pipeline reports an errored stream), but the
    // emitter must not treat it as unhandled.
    stream.on('error', () => undefined);
    if (watch.cancel || this.shuttingDown) stream.destroy(new Cancelled('cancelled'));
    return stream;
  }

  private ensureFolder(ctx: RunContext, folderPath: string): Promise<string> {
    let p = ctx.folders.get(folderPath);
    if (!p) {
      p = ctx.target.folders
        ? ctx.target.folders.createFolder(folderPath, ctx.actor)
        : resolveFolderId(ctx.target, folderPath);
      p.catch(() => ctx.folders.delete(folderPath));
      ctx.folders.set(folderPath, p);
    }
    return p;
  }

  // ---- run context and watching ------------------------------------------

  private async context(runId: string): Promise<RunContext> {
    const cached = this.contexts.get(runId);
    if (cached) return cached;
    const run = await this.repo.findRun(runId);
    if (!run) throw new Error(`Run ${runId} not found`);
    const job = await this.repo.findJob(run.jobId);
    if (!job) throw new Error(`Job ${run.jobId} not found`);
    const def = JSON.parse(job.definition) as JobDefinition;
    const ctx: RunContext = {
      jobId: job.id,
      def,
      source: this.registry.get(def.source.connectorId),
      target: this.registry.get(def.target.connectorId),
      actor: { username: run.startedBy },
      folders: new Map(),
      exclude: def.options.exclude.map(globToRegExp),
    };
    if (this.contexts.size > 100) this.contexts.clear();
    this.contexts.set(runId, ctx);
    return ctx;
  }

  /** `run` as read under the lock that started a task of it: RUNNING, not failing, at the task's attempt. */
  private acquireWatch(run: JobRunRecord, maxErrors: number): RunWatch {
    const runId = run.id;
    let w = this.watches.get(runId);
    if (!w) {
      w = { status: run.status, attempt: run.attempt, cancel: run.cancel, failing: false, maxErrors, users: 0, inflight: new Set() };
      const watch = w;
      w.timer = setInterval(() => void this.refresh(runId, watch).catch(() => undefined), WATCH_EVERY_MS);
      w.timer.unref();
      this.watches.set(runId, w);
    } else if (run.attempt > w.attempt) {
      // Kept alive by tasks of an older attempt: what it says is about that attempt.
      Object.assign(w, { status: run.status, attempt: run.attempt, cancel: run.cancel, failing: false, maxErrors });
    }
    w.users++;
    return w;
  }

  private releaseWatch(runId: string): void {
    const w = this.watches.get(runId);
    if (!w) return;
    if (--w.users === 0) {
      clearInterval(w.timer);
      this.watches.delete(runId);
    }
  }

  private async refresh(runId: string, w: RunWatch): Promise<void> {
    const run = await this.repo.findRun(runId);
    if (!run || run.attempt < w.attempt) return; // read before a task of a newer attempt started
    w.status = run.status;
    w.attempt = run.attempt;
    w.cancel = run.cancel;
    w.failing = failingReason(run, w.maxErrors) !== undefined;
    if (w.cancel) for (const stream of w.inflight) stream.destroy(new Cancelled('killed'));
  }
}

class FolderError extends GatewayError {
  readonly kind = 'not_found' as const;
  constructor(message: string) {
    super('SOURCE_FOLDER_UNAVAILABLE', message);
  }
}

export async function resolveFolderId(connector: ContentConnector, folderPath: string): Promise<string> {
  if (folderPath === '/' || folderPath === '') return (await connector.rootFolder()).folderId;
  return connector.idByPath(path.dirname(folderPath), path.basename(folderPath));
}

async function findId(connector: ContentConnector, folderPath: string, name: string): Promise<string | undefined> {
  try {
    return await connector.idByPath(folderPath, name);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

function joinPath(folder: string, rel: string): string {
  return folder === '/' ? `/${rel}` : `${folder}/${rel}`;
}

export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
