import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { pipeline } from 'node:stream/promises';
import { Limiter } from '@gateway/concurrency';
import { UpstreamUnavailableError } from '@gateway/connector-api';
import { UserFilesRepository, type UserFileProgress, type UserFileRecord } from '@gateway/persistence';
import type { EntryRead } from '../audit/access-audit.service';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { BatchZip, type BatchEntry } from './batch-zip';
import { UserFileStore } from './user-file.store';

/** How an export ended. */
export type ExportOutcome = { state: 'ready'; size: number } | { state: 'stopped' } | { state: 'failed'; message: string };

/** Progress reaches the database at most this often while an export runs. */
const PROGRESS_FLUSH_MS = 500;

/** After a lease length, how long the builder of an export stopped elsewhere still has to discard its partial file. */
const DISCARD_GRACE_MS = 1000;

export const INTERRUPTED_MESSAGE = 'Interrupted: the gateway stopped while this export was running';
export const LEASE_LOST_MESSAGE = 'Interrupted: the gateway node building this export stopped answering';

interface Job {
  controller: AbortController;
  /** Set by whoever aborts: a user's stop, or the gateway shutting down. */
  reason?: 'stopped' | 'shutdown';
  done: Promise<ExportOutcome>;
}

/**
 * Runs batch exports in the background: each builds its zip into
 * `<id>.part` and is renamed to `<id>` on completion, then marked ready in
 * one conditional UPDATE. At most `exportConcurrency` run at once; the rest
 * wait (ready=false, nothing done yet).
 *
 * Nothing is left half-done: a stopped or failed export loses its partial
 * file; at start-up, exports a previous process left running are marked
 * failed and stray files removed; at shutdown, running exports are
 * interrupted (failed) before the database closes.
 */
@Injectable()
export class ExportRunner implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ExportRunner.name);
  private readonly jobs = new Map<string, Job>();
  private readonly slots: Limiter;
  private closing = false;
  private leaseSweep?: NodeJS.Timeout;
  /** Partial files of exports stopped here while another node builds them (discardPartial). */
  private readonly deferredDiscards = new Set<NodeJS.Timeout>();

  constructor(
    private readonly files: UserFilesRepository,
    private readonly store: UserFileStore,
    private readonly registry: ConnectorRegistry,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {
    this.slots = new Limiter(config.files.exportConcurrency);
  }

  /**
   * Start-up: the exports this node was building when it stopped, and those whose node's lease ran out,
   * are failed — not every running one, since other nodes may be building theirs on the shared folder.
   * Stray files go, but not the partial files of exports still running elsewhere.
   */
  async onModuleInit(): Promise<void> {
    await this.store.ensureDir();
    const failed = await this.files.failAbandoned(this.config.nodeId, this.clock.now(), INTERRUPTED_MESSAGE);
    // Listed before the rows are read: a file an export creates after the read is then not in the list.
    const removed = await this.store.removeAllExcept(
      async () => this.files.readyIds(),
      async () => this.files.runningIds(),
    );
    if (failed.length > 0 || removed.length > 0) {
      this.logger.warn(`Start-up: ${failed.length} interrupted export(s) marked failed, ${removed.length} stray file(s) removed`);
    }
    this.leaseSweep = setInterval(() => {
      this.failExpiredLeases().catch((e: unknown) => this.logger.warn(`Lease sweep failed: ${describe(e)}`));
    }, this.config.files.leaseMs);
    this.leaseSweep.unref();
  }

  /** Fails the exports of nodes whose lease ran out (they died mid-export) and removes their partial files. */
  async failExpiredLeases(): Promise<string[]> {
    const failed = await this.files.failAbandoned(undefined, this.clock.now(), LEASE_LOST_MESSAGE);
    for (const id of failed) await this.store.remove(id);
    if (failed.length > 0) this.logger.warn(`${failed.length} export(s) of a node that stopped answering marked failed`);
    return failed;
  }

  /** Refuses new work once shutdown began. */
  assertAccepting(): void {
    if (this.closing) throw new UpstreamUnavailableError('The gateway is shutting down');
  }

  /** Starts building `file` (already inserted, state running) from `entries`; `onEntryRead` audits each entry. */
  start(file: UserFileRecord, entries: readonly BatchEntry[], onEntryRead?: (read: EntryRead) => void): void {
    this.assertAccepting();
    const job: Job = { controller: new AbortController(), done: Promise.resolve<ExportOutcome>({ state: 'stopped' }) };
    this.jobs.set(file.id, job);
    job.done = this.run(file, entries, job, onEntryRead)
      .then((outcome) => {
        this.metrics?.exportEnded(outcome.state);
        return outcome;
      })
      .finally(() => this.jobs.delete(file.id));
  }

  isRunning(id: string): boolean {
    return this.jobs.has(id);
  }

  /** Exports started but queued for a slot (exportConcurrency reached): what tells "waiting" from "slow" without a clock. */
  get waiting(): number {
    return this.slots.pending;
  }

  /**
   * Stops the export and waits until it has settled. The outcome is
   * `ready` when it completed before the stop took effect. Undefined when
   * no export with this id runs here.
   */
  async stop(id: string): Promise<ExportOutcome | undefined> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    job.reason ??= 'stopped';
    job.controller.abort();
    return job.done;
  }

  /**
   * The partial file of `file` (read before it was ended here, stopped or deleted). When another node
   * builds it under a lease still running, that node discards it: it sees the end at its next renewal,
   * lets the part uploads it has in flight finish, then aborts its upload. Aborting it from here while
   * that node is still sending parts is not safe on S3: AWS lets a part in progress land after the
   * abort, and S3Proxy's filesystem backend answers the abort 400 and keeps the parts listed under an
   * upload no abort can reach any more (test/e2e/s3-user-file-store.e2e-spec.ts). This node discards it only once that lease can have run out,
   * in case the builder died meanwhile; were this node to stop first, the next start-up sweep of any
   * node removes it (a partial file of an export not running).
   */
  async discardPartial(file: UserFileRecord): Promise<void> {
    const builtElsewhere = file.nodeId !== undefined && file.nodeId !== this.config.nodeId && (file.leaseExpiresAt ?? 0) > this.clock.now();
    if (!builtElsewhere) return this.store.remove(file.id);
    // A renewal may have extended the lease after `file` was read: a whole lease length from now covers it.
    const timer = setTimeout(() => {
      this.deferredDiscards.delete(timer);
      this.store.remove(file.id).catch((e: unknown) => this.logger.warn(`Export ${file.id}: partial file not removed: ${describe(e)}`));
    }, this.config.files.leaseMs + DISCARD_GRACE_MS);
    timer.unref();
    this.deferredDiscards.add(timer);
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearInterval(this.leaseSweep);
    for (const timer of this.deferredDiscards) clearTimeout(timer);
    this.deferredDiscards.clear();
    const running = [...this.jobs.values()];
    for (const job of running) {
      job.reason ??= 'shutdown';
      job.controller.abort();
    }
    await Promise.all(running.map((j) => j.done));
  }

  private async run(file: UserFileRecord, entries: readonly BatchEntry[], job: Job, onEntryRead?: (read: EntryRead) => void): Promise<ExportOutcome> {
    const signal = job.controller.signal;
    let zip: BatchZip | undefined;
    let flushing: Promise<void> = Promise.resolve();
    let flushed = '';
    const flush = () => {
      if (!zip) return;
      const progress: UserFileProgress = { ...zip.progress };
      const key = `${progress.entriesDone}/${progress.bytesDone}/${progress.errorCount}`;
      if (key === flushed) return;
      flushed = key;
      flushing = flushing
        .then(() => this.files.updateProgress(file.id, progress))
        .catch((e: unknown) => this.logger.warn(`Export ${file.id}: progress not saved: ${describe(e)}`));
    };
    let timer: NodeJS.Timeout | undefined;
    // The lease is renewed three times per lease length; a renewal refused means the export was stopped,
    // deleted or failed through another node: this one gives up at once.
    const leaseMs = this.config.files.leaseMs;
    const lease = setInterval(() => {
      this.files
        .renewLease(file.id, this.config.nodeId, this.clock.now() + leaseMs)
        .then((held) => {
          if (held || signal.aborted) return;
          job.reason ??= 'stopped';
          job.controller.abort();
        })
        .catch((e: unknown) => this.logger.warn(`Export ${file.id}: lease not renewed: ${describe(e)}`));
    }, Math.max(1000, Math.floor(leaseMs / 3)));
    lease.unref();
    try {
      const release = await this.slots.acquire(signal);
      try {
        zip = new BatchZip(this.registry, entries, { level: this.config.files.zipLevel, signal, onEntryRead });
        timer = setInterval(flush, PROGRESS_FLUSH_MS);
        timer.unref();
        const out = this.store.createPartial(file.id);
        const written = pipeline(zip.archive, out);
        written.catch(() => undefined); // handled below; a disk error while entries are still added must not go unhandled
        try {
          await zip.run();
          await written;
        } catch (e) {
          zip.halt(e instanceof Error ? e : new Error(String(e)));
          zip.archive.destroy();
          out.destroy();
          const writeError = await written.then(
            () => undefined,
            (w: unknown) => w,
          );
          // A write failure (disk full...) explains the halt better than the halt itself.
          throw signal.aborted || writeError === undefined || isPrematureClose(writeError) ? e : writeError;
        }
        // The commit point: a stop that arrives from here on finds the export complete.
        if (signal.aborted) throw new Error('stopped');
        const size = await this.store.commit(file.id);
        clearInterval(timer);
        await flushing;
        if (!(await this.files.markReady(file.id, size, this.clock.now(), { ...zip.progress }))) {
          // Ended by someone else meanwhile (cannot happen within one process); keep the database's word.
          await this.store.remove(file.id);
          return { state: 'stopped' };
        }
        return { state: 'ready', size };
      } finally {
        clearInterval(timer);
        clearInterval(lease);
        release();
      }
    } catch (e) {
      clearInterval(timer);
      clearInterval(lease);
      await flushing;
      await this.store.remove(file.id).catch((r: unknown) => this.logger.error(`Export ${file.id}: partial file not removed: ${describe(r)}`));
      const stopped = job.reason === 'stopped';
      const message = stopped ? 'Stopped' : job.reason === 'shutdown' ? INTERRUPTED_MESSAGE : `Failed: ${describe(e)}`;
      if (!stopped) this.logger.warn(`Export ${file.id} of ${file.owner}: ${message}`);
      await this.files
        .markEnded(file.id, stopped ? 'stopped' : 'failed', this.clock.now(), message)
        .catch((r: unknown) => this.logger.error(`Export ${file.id}: state not saved: ${describe(r)}`));
      return stopped ? { state: 'stopped' } : { state: 'failed', message };
    }
  }
}

function isPrematureClose(e: unknown): boolean {
  return (e as { code?: string })?.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

function describe(e: unknown): string {
  return ((e as Error)?.message ?? String(e)).slice(0, 500);
}
