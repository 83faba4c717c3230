import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConflictError, InvalidArgumentError, NotFoundError } from '@gateway/connector-api';
import { JobsRepository, type AuditRecordType, type JobRunRecord, type ScheduledStartClaim } from '@gateway/persistence';
import { MessageResult } from '../common/envelope';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { JobExecutor } from './job-executor';
import { localDateTime, statusRecord } from './job-format';
import { JOB_STATES, allows, type JobAction, type JobStatus } from './job-states';
import type { JobStatusDto } from './job-status.dto';
import { closeSegment, logRun, settle } from './run-lifecycle';
import type { JobStore } from './job-store';
import { ROOT_TASK_KEY, failedDocsTasks, isListingKey, rootTask } from './task-plan';
import { TASK_QUEUE, type TaskQueue } from './task-queue';

export const RECORD_TYPES = { p: 'PROCESSED', r: 'READ', e: 'ERROR', d: 'DUPLICATE', s: 'SKIPPED' } as const satisfies Record<AuditRecordType, string>;
export type RecordType = keyof typeof RECORD_TYPES;

type Job = NonNullable<Awaited<ReturnType<JobStore['findJob']>>>;

const HOUR_MS = 3_600_000;

/** The job service of spec 4.5: status, control, audit look-up. Every decision follows the state table. */
@Injectable()
export class JobControlService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobControlService.name);
  private retentionTimer?: NodeJS.Timeout;

  constructor(
    @Inject(JobsRepository) private readonly repo: JobStore,
    private readonly registry: ConnectorRegistry,
    @Inject(JobExecutor) private readonly executor: Pick<JobExecutor, 'notify'>,
    @Inject(TASK_QUEUE) private readonly queue: TaskQueue,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Embedded mode has one process: a run still open at start-up was cut by a crash or stop.
    if (this.queue.mode === 'embedded') await this.recoverInterrupted();
    else await this.requeueOpenRuns();
    const days = this.config.jobs.auditRetentionDays;
    if (days > 0) {
      const prune = () =>
        this.repo.pruneAudit(Date.now() - days * 24 * HOUR_MS).catch((e: unknown) => this.logger.warn({ err: e }, 'Audit pruning failed'));
      await prune();
      this.retentionTimer = setInterval(() => void prune(), HOUR_MS);
      this.retentionTimer.unref();
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.retentionTimer);
  }

  private async recoverInterrupted(): Promise<void> {
    for (const run of await this.repo.runsWithStatus(['RUNNING', 'PAUSING', 'ABORTING'])) {
      await this.repo.transition(run.id, async (locked) => {
        await locked.resetActiveTasks();
        const now = Date.now();
        if (locked.run.status === 'RUNNING') {
          await locked.change({
            status: 'FAILED',
            message: 'The gateway stopped during the run; resume continues it',
            endTime: now,
            ...closeSegment(locked.run, now),
          });
          logRun(this.logger, `Job ${locked.run.jobId} failed: run ${locked.run.id}`, locked.run);
        } else {
          await settle(locked, now);
        }
      });
    }
  }

  /**
   * Redis mode: other processes may be working on the open runs, so they are left open; but a process
   * killed between a transition that added tasks (a start, a listing page) and their enqueue leaves them
   * pending in the database with nothing in the queue, and the run RUNNING for ever. So every open run's
   * unfinished tasks are queued again: a task still queued keeps its place (the queue's job id is its run,
   * attempt and key), one done meanwhile is skipped by the executor. A run with nothing left is settled.
   */
  private async requeueOpenRuns(): Promise<void> {
    for (const run of await this.repo.runsWithStatus(['RUNNING', 'PAUSING', 'ABORTING'])) {
      const keys = await this.repo.unfinishedTaskKeys(run.id);
      if (keys.length === 0) {
        await this.repo.transition(run.id, (locked) => settle(locked));
        continue;
      }
      await this.enqueueKeys(run.id, keys, run.attempt);
    }
  }

  /** Queues a run's tasks for an attempt, listings in their own lane. */
  private async enqueueKeys(runId: string, keys: string[], attempt: number): Promise<void> {
    const refs = (listing: boolean) => keys.filter((key) => isListingKey(key) === listing).map((key) => ({ runId, key, attempt }));
    await this.queue.enqueue(refs(false));
    await this.queue.enqueue(refs(true), { listing: true });
  }

  // ---- status -------------------------------------------------------------

  async statusList(jobGroup?: string): Promise<MessageResult<JobStatusDto[]>> {
    const jobs = await this.repo.listJobs(jobGroup);
    const runs = await this.repo.latestRuns(jobs.map((j) => j.id));
    const open = await this.repo.openListings([...runs.values()].map((r) => r.id));
    const now = Date.now();
    return new MessageResult(
      null,
      jobs.map((j) => {
        const run = runs.get(j.id);
        return statusRecord(j, run, now, run !== undefined && !open.has(run.id));
      }),
    );
  }

  async status(jobId: number): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const run = await this.repo.latestRun(jobId);
    return new MessageResult(run?.message ?? null, await this.record(job, run));
  }

  /** The status record of a job's run, with whether its listing has ended. */
  private async record(job: Job, run: JobRunRecord | undefined): Promise<JobStatusDto> {
    const complete = run !== undefined && !(await this.repo.openListings([run.id])).has(run.id);
    return statusRecord(job, run, Date.now(), complete);
  }

  // ---- control ------------------------------------------------------------

  /**
   * `scheduled`: a due start of the job's schedule, claimed with the run (schedule/job-scheduler.ts); ScheduledStartTaken when another node had it.
   * `dryRun`: a run that plans each document instead of copying it (document-planner.ts): a run of its own, flagged, never the job's last real run.
   */
  async start(jobId: number, username: string, scheduled?: ScheduledStartClaim, dryRun = false): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const def = job.definition;
    if (dryRun && def.options.mode === 'sync') {
      // The planner decides as a copy does; a sync run decides by its state (unchanged, moved, deleted): such a plan would mislead.
      throw new InvalidArgumentError('dryRun', "Invalid parameter 'dryRun': a sync job (options.mode sync) cannot be planned by a dry run yet");
    }
    this.registry.get(def.source.connectorId);
    this.registry.any(def.target.connectorId);
    const input = { kind: 'start' as const, startedBy: username, now: Date.now(), ...(scheduled ? { scheduled } : {}), ...(dryRun ? { dryRun } : {}) };
    const run = await this.repo.createRun(jobId, input, async (previous) => {
      this.assertAllowed(jobId, previous, previous ? 'restart' : 'start');
      return [rootTask(def)];
    });
    await this.queue.enqueue([{ runId: run.id, key: ROOT_TASK_KEY, attempt: run.attempt }], { listing: true });
    const due = scheduled ? ` (scheduled, due ${new Date(scheduled.dueAt).toISOString()})` : '';
    return this.answer(job, `Job ${jobId} started${dryRun ? ' as a dry run (nothing is written)' : ''}: run ${run.id}${due}`);
  }

  async runErrors(jobId: number, username: string): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const def = job.definition;
    // Every connector fetches by id (getItem is a core operation), so run-errors works over any source.
    this.registry.get(def.source.connectorId);
    this.registry.any(def.target.connectorId);
    let keys: string[] = [];
    const run = await this.repo.createRun(jobId, { kind: 'runerrors', startedBy: username, now: Date.now() }, async (previous, reader) => {
      this.assertAllowed(jobId, previous, 'runerrors');
      if (previous?.dryRun) {
        // Its failures are predictions: re-running them for real is a start's business.
        throw new ConflictError(`Run ${previous.id} of job ${jobId} is a dry run: start a real run instead`, 'JOB_STATE_CONFLICT', { jobId, runId: previous.id });
      }
      if (!previous || previous.failed === 0) {
        throw new ConflictError(`Run ${previous?.id} of job ${jobId} has no failed documents`, 'JOB_NO_ERRORS', { jobId });
      }
      const tasks = await failedDocsTasks(previous.id, reader);
      keys = tasks.map((t) => t.key);
      return tasks;
    });
    await this.queue.enqueue(keys.map((key) => ({ runId: run.id, key, attempt: run.attempt })));
    return this.answer(job, `Job ${jobId} started over the failed documents of the previous run: run ${run.id}`);
  }

  async resume(jobId: number): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const latest = await this.repo.latestRun(jobId);
    this.assertAllowed(jobId, latest, 'resume');
    // PAUSED, ABORTED and FAILED runs have nothing in flight (they are reached once no task is
    // active, see settle), so the new attempt starts from a quiet run: its failure budget starts
    // at the run's failed count, and every task not done is queued again for it.
    const attempt = await this.repo.transition(latest!.id, async (locked) => {
      const run = locked.run;
      this.assertAllowed(jobId, run, 'resume');
      // Rows left active by a process that died (embedded: reset at start-up already; Redis: a killed process).
      await locked.resetActiveTasks();
      await locked.change({
        status: 'RUNNING',
        attempt: run.attempt + 1,
        failedBase: run.failed,
        cancel: false,
        message: null,
        endTime: null,
        segmentStart: Date.now(),
      });
      return run.attempt + 1;
    });
    const keys = await this.repo.unfinishedTaskKeys(latest!.id);
    await this.enqueueKeys(latest!.id, keys, attempt);
    if (keys.length === 0) {
      await this.repo.transition(latest!.id, (locked) => settle(locked));
    }
    await this.executor.notify(latest!.id);
    return this.answer(job, `Job ${jobId} resumed: run ${latest!.id}`);
  }

  async pause(jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.stop(jobId, 'pause', 'paused');
  }

  async abort(jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.stop(jobId, 'abort', 'aborted');
  }

  async kill(jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.stop(jobId, 'kill', 'killed');
  }

  /** pause, abort, kill: the run stops taking documents; it settles once its in-flight ones are done (or cancelled). */
  private async stop(jobId: number, action: 'pause' | 'abort' | 'kill', verb: string): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const latest = await this.repo.latestRun(jobId);
    this.assertAllowed(jobId, latest, action);
    await this.repo.transition(latest!.id, async (locked) => {
      this.assertAllowed(jobId, locked.run, action);
      const now = Date.now();
      if (locked.run.status === 'PAUSED') {
        // abort of a paused run: nothing is in flight
        await locked.change({ status: 'ABORTED', endTime: now });
        return;
      }
      await locked.change({ status: action === 'pause' ? 'PAUSING' : 'ABORTING', ...(action === 'kill' ? { cancel: true } : {}) });
      await settle(locked, now);
    });
    await this.executor.notify(latest!.id);
    return this.answer(job, `Job ${jobId} ${verb}: run ${latest!.id}`);
  }

  // ---- audit --------------------------------------------------------------

  async recordStatus(jobId: number, docId: string, recordType: string): Promise<MessageResult<string>> {
    await this.job(jobId);
    if (!(recordType in RECORD_TYPES)) {
      throw new InvalidArgumentError('recordType', `Invalid parameter 'recordType': must be one of p, r, e, d, s (got '${recordType}')`);
    }
    const a = await this.repo.latestAudit(jobId, docId, recordType as RecordType);
    if (!a) {
      throw new NotFoundError('auditRecord', docId, `No ${RECORD_TYPES[recordType as RecordType]} record of job ${jobId} for document '${docId}'`);
    }
    const parts = [`${localDateTime(a.createdAt)} run ${a.runId} ${RECORD_TYPES[a.recordType]} source=${a.docId}`];
    if (a.sourcePath) parts.push(`path=${a.sourcePath}`);
    if (a.targetId) parts.push(`target=${a.targetId}`);
    if (a.checksum) parts.push(`sha256=${a.checksum}`);
    if (a.verified) parts.push(`verified=${a.verified}`);
    let text = parts.join(' ');
    if (a.message) text += `: ${a.message}`;
    return new MessageResult(null, text);
  }

  // ---- helpers ------------------------------------------------------------

  private async job(jobId: number): Promise<Job> {
    const job = await this.repo.findJob(jobId);
    if (!job) throw new NotFoundError('job', String(jobId));
    return job;
  }

  private assertAllowed(jobId: number, run: JobRunRecord | undefined, action: JobAction): void {
    const status: JobStatus = run ? run.status : 'NEW';
    if (allows(status, action)) return;
    const allowed = JOB_STATES[status].actions.join(', ') || 'none';
    throw new ConflictError(
      `Job ${jobId} cannot ${action === 'restart' ? 'start' : action} while ${status} (${JOB_STATES[status].name}); allowed: ${allowed}`,
      'JOB_STATE_CONFLICT',
      { jobId, status, action },
    );
  }

  /** A control call's answer; the move is also the one info log line of it, with the run's counters. */
  private async answer(job: Job, message: string): Promise<MessageResult<JobStatusDto>> {
    const run = await this.repo.latestRun(job.id);
    if (run) logRun(this.logger, message, run);
    return new MessageResult(message, await this.record(job, run));
  }
}
