import type { Readable } from 'node:stream';
import type { JobRunRecord } from '@gateway/persistence';
import { failingReason } from './run-lifecycle';

/** Thrown into (or by) work a kill or a shutdown cuts: the document stays claimed and is redone later. */
export class Cancelled extends Error {
  constructor(reason = 'cancelled') {
    super(reason);
    this.name = 'Cancelled';
  }
}

/** The watcher's view of the store: the run as it is now. */
export interface RunSource {
  findRun(runId: string): Promise<JobRunRecord | undefined>;
}

/**
 * What this process knows about a run it works on, refreshed from the store. It only moves
 * forward: a task of attempt n brings it to n (the run lock said so when the task started),
 * and a refresh read before that is dropped.
 */
export class RunWatch {
  status: JobRunRecord['status'];
  attempt: number;
  /** Kill: in-flight documents are cut. */
  cancel: boolean;
  /** RUNNING but bound to end FAILED (failingReason): take no new documents. */
  failing: boolean;
  users = 0;
  private readonly inflight = new Set<Readable>();
  private halt = new AbortController();
  private shutdown = false;

  constructor(
    run: JobRunRecord,
    public maxErrors: number,
  ) {
    this.status = run.status;
    this.attempt = run.attempt;
    this.cancel = run.cancel;
    this.failing = false;
  }

  /**
   * Aborted once the current attempt takes no more documents (paused, aborted, killed,
   * failing, or the process stops): documents still queued for a slot give up their place.
   */
  get halted(): AbortSignal {
    return this.halt.signal;
  }

  /** In-flight work of this attempt must be cut now (kill or shutdown). */
  get cancelled(): boolean {
    return this.cancel || this.shutdown;
  }

  /** True when a task of `attempt` may take another document. */
  takes(attempt: number): boolean {
    return !this.shutdown && this.attempt === attempt && this.status === 'RUNNING' && !this.failing && !this.halt.signal.aborted;
  }

  /** A task of a newer attempt started (the run lock said so): what the watch says is about that attempt now. */
  startAttempt(run: JobRunRecord, maxErrors: number): void {
    if (run.attempt <= this.attempt) return;
    Object.assign(this, { status: run.status, attempt: run.attempt, cancel: run.cancel, failing: false, maxErrors });
    if (this.halt.signal.aborted && !this.shutdown) this.halt = new AbortController();
  }

  /** The run as read from the store; older reads (before a newer attempt started) are dropped. */
  update(run: JobRunRecord): void {
    if (run.attempt < this.attempt) return;
    if (run.attempt > this.attempt && this.halt.signal.aborted && !this.shutdown) this.halt = new AbortController();
    this.status = run.status;
    this.attempt = run.attempt;
    this.cancel = run.cancel;
    this.failing = failingReason(run, this.maxErrors) !== undefined;
    if (this.status !== 'RUNNING' || this.failing || this.cancel) this.halt.abort(new Cancelled('halted'));
    if (this.cancel) this.cut('killed');
  }

  /** The process stops: nothing new starts, in-flight streams are cut. */
  stopProcess(): void {
    this.shutdown = true;
    this.halt.abort(new Cancelled('shutdown'));
    this.cut('shutdown');
  }

  /**
   * Follows a source stream so that a kill or shutdown can cut it (a cut stream makes the
   * target's write fail, leaving nothing); cuts it at once when that already happened.
   */
  track(stream: Readable): Readable {
    this.inflight.add(stream);
    const done = () => this.inflight.delete(stream);
    stream.once('close', done);
    stream.once('end', done);
    // A kill can destroy the stream before the target has attached its own listeners; the
    // target still sees the error (pipeline reports an errored stream), but the emitter must
    // not treat it as unhandled.
    stream.on('error', () => undefined);
    if (this.cancelled) stream.destroy(new Cancelled('cancelled'));
    return stream;
  }

  /** Streams being read now. */
  get streams(): number {
    return this.inflight.size;
  }

  private cut(reason: string): void {
    for (const stream of this.inflight) stream.destroy(new Cancelled(reason));
  }
}

/**
 * The runs this process works on: one watch per run, shared by its tasks here, polled while
 * any of them runs, and told at once of a control call made in this process.
 */
export class RunWatcher {
  private readonly watches = new Map<string, { watch: RunWatch; timer: NodeJS.Timeout }>();
  private stopping = false;

  constructor(
    private readonly runs: RunSource,
    private readonly pollMs: number,
  ) {}

  /** `run` as read under the lock that started a task of it: RUNNING, not failing, at the task's attempt. */
  acquire(run: JobRunRecord, maxErrors: number): RunWatch {
    let entry = this.watches.get(run.id);
    if (!entry) {
      const watch = new RunWatch(run, maxErrors);
      if (this.stopping) watch.stopProcess();
      const timer = setInterval(() => void this.refresh(run.id).catch(() => undefined), this.pollMs);
      timer.unref();
      entry = { watch, timer };
      this.watches.set(run.id, entry);
    } else {
      // Kept alive by tasks of an older attempt: what it says is about that attempt.
      entry.watch.startAttempt(run, maxErrors);
    }
    entry.watch.users++;
    return entry.watch;
  }

  release(runId: string): void {
    const entry = this.watches.get(runId);
    if (!entry) return;
    if (--entry.watch.users === 0) {
      clearInterval(entry.timer);
      this.watches.delete(runId);
    }
  }

  /** A control call of this process changed the run: its local workers hear of it now. */
  async refresh(runId: string): Promise<void> {
    const entry = this.watches.get(runId);
    if (!entry) return;
    const run = await this.runs.findRun(runId);
    if (run) entry.watch.update(run);
  }

  /** The process stops: every watched run's in-flight documents are cut. */
  stopProcess(): void {
    this.stopping = true;
    for (const { watch } of this.watches.values()) watch.stopProcess();
  }

  /** Runs watched now (tasks of them are running in this process). */
  get size(): number {
    return this.watches.size;
  }
}
