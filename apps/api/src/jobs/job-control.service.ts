import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConflictError, InvalidArgumentError, NotFoundError } from '@gateway/connector-api';
import { JobsRepository, type JobRecord, type JobRunRecord } from '@gateway/persistence';
import { MessageResult } from '../common/envelope';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { JobDefinition } from './job-definition.dto';
import { DOCS_PER_TASK, JobExecutor, docsTask, rootTask } from './job-executor';
import { localDateTime, statusRecord } from './job-format';
import { JOB_STATES, allows, type JobAction, type JobStatus } from './job-states';
import type { JobStatusDto } from './job-status.dto';
import { closeSegment, settle } from './run-lifecycle';
import { TASK_QUEUE, type TaskQueue } from './task-queue';

export const RECORD_TYPES = { p: 'PROCESSED', r: 'READ', e: 'ERROR', d: 'DUPLICATE', s: 'SKIPPED' } as const;
export type RecordType = keyof typeof RECORD_TYPES;

const HOUR_MS = 3_600_000;

/** The job service of spec 4.5: status, control, audit look-up. Every decision follows the state table. */
@Injectable()
export class JobControlService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobControlService.name);
  private retentionTimer?: NodeJS.Timeout;

  constructor(
    private readonly repo: JobsRepository,
    private readonly registry: ConnectorRegistry,
    private readonly executor: JobExecutor,
    @Inject(TASK_QUEUE) private readonly queue: TaskQueue,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Embedded mode has one process: a run still open at start-up was cut by a crash or stop.
    if (this.queue.mode === 'embedded') await this.recoverInterrupted();
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
      await this.repo.withRunLock(run.id, async (r, trx) => {
        await this.repo.resetActiveTasks(trx, r.id);
        const now = Date.now();
        if (r.status === 'RUNNING') {
          await this.repo.updateRun(trx, r.id, {
            status: 'FAILED',
            message: 'The gateway stopped during the run; resume continues it',
            end_time: now,
            ...closeSegment(r, now),
          });
        } else {
          await settle(this.repo, trx, r, now);
        }
      });
    }
  }

  // ---- status -------------------------------------------------------------

  async statusList(jobGroup?: string): Promise<MessageResult<JobStatusDto[]>> {
    const jobs = await this.repo.listJobs(jobGroup);
    const runs = await this.repo.latestRuns(jobs.map((j) => j.id));
    const now = Date.now();
    return new MessageResult(null, jobs.map((j) => statusRecord(j, runs.get(j.id), now)));
  }

  async status(jobId: number): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const run = await this.repo.latestRun(jobId);
    return new MessageResult(run?.message ?? null, statusRecord(job, run));
  }

  // ---- control ------------------------------------------------------------

  async start(jobId: number, username: string): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const def = JSON.parse(job.definition) as JobDefinition;
    this.registry.get(def.source.connectorId);
    this.registry.get(def.target.connectorId);
    const run = await this.repo.createRun(jobId, { kind: 'start', startedBy: username, now: Date.now(), status: 'RUNNING' }, async (previous) => {
      this.assertAllowed(jobId, previous, previous ? 'restart' : 'start');
      return [rootTask(def)];
    });
    await this.queue.enqueue([{ runId: run.id, key: 'e.root', attempt: run.attempt }]);
    return this.answer(job, `Job ${jobId} started: run ${run.id}`);
  }

  async runErrors(jobId: number, username: string): Promise<MessageResult<JobStatusDto>> {
    const job = await this.job(jobId);
    const def = JSON.parse(job.definition) as JobDefinition;
    // Every connector fetches by id (getItem is a core operation), so run-errors works over any source.
    this.registry.get(def.source.connectorId);
    this.registry.get(def.target.connectorId);
    const keys: string[] = [];
    const run = await this.repo.createRun(jobId, { kind: 'runerrors', startedBy: username, now: Date.now(), status: 'RUNNING' }, async (previous, trx) => {
      this.assertAllowed(jobId, previous, 'runerrors');
      if (!previous || previous.failed === 0) {
        throw new ConflictError(`Run ${previous?.id} of job ${jobId} has no failed documents`, 'JOB_NO_ERRORS', { jobId });
      }
      const tasks = [];
      let after: string | undefined;
      for (let k = 0; ; k++) {
        const docs = await this.repo.failedDocs(previous.id, after, DOCS_PER_TASK, trx);
        if (docs.length === 0) break;
        after = docs[docs.length - 1].docId;
        tasks.push(docsTask(`r.${k}`, { items: docs.map((d) => ({ id: d.docId, rel: d.relPath })), fetch: true }));
        keys.push(`r.${k}`);
      }
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
    const attempt = await this.repo.withRunLock(latest!.id, async (run, trx) => {
      this.assertAllowed(jobId, run, 'resume');
      // Rows left active by a process that died (embedded: reset at start-up already; Redis: a killed process).
      await this.repo.resetActiveTasks(trx, run.id);
      await this.repo.updateRun(trx, run.id, {
        status: 'RUNNING',
        attempt: run.attempt + 1,
        failed_base: run.failed,
        cancel: 0,
        message: null,
        end_time: null,
        segment_start: Date.now(),
      });
      return run.attempt + 1;
    });
    const keys = await this.repo.unfinishedTaskKeys(latest!.id);
    await this.queue.enqueue(keys.map((key) => ({ runId: latest!.id, key, attempt })));
    if (keys.length === 0) {
      await this.repo.withRunLock(latest!.id, (run, trx) => settle(this.repo, trx, run));
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
    await this.repo.withRunLock(latest!.id, async (run, trx) => {
      this.assertAllowed(jobId, run, action);
      const now = Date.now();
      if (run.status === 'PAUSED') {
        // abort of a paused run: nothing is in flight
        await this.repo.updateRun(trx, run.id, { status: 'ABORTED', end_time: now });
        return;
      }
      await this.repo.updateRun(trx, run.id, { status: action === 'pause' ? 'PAUSING' : 'ABORTING', ...(action === 'kill' ? { cancel: 1 } : {}) });
      await settle(this.repo, trx, { ...run, status: action === 'pause' ? 'PAUSING' : 'ABORTING' }, now);
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
    const a = await this.repo.latestAudit(jobId, docId, recordType);
    if (!a) {
      throw new NotFoundError('auditRecord', docId, `No ${RECORD_TYPES[recordType as RecordType]} record of job ${jobId} for document '${docId}'`);
    }
    const parts = [`${localDateTime(a.createdAt)} run ${a.runId} ${RECORD_TYPES[a.recordType as RecordType]} source=${a.docId}`];
    if (a.sourcePath) parts.push(`path=${a.sourcePath}`);
    if (a.targetId) parts.push(`target=${a.targetId}`);
    let text = parts.join(' ');
    if (a.message) text += `: ${a.message}`;
    return new MessageResult(null, text);
  }

  // ---- helpers ------------------------------------------------------------

  private async job(jobId: number): Promise<JobRecord> {
    const job = await this.repo.findJob(jobId);
    if (!job) throw new NotFoundError('job', String(jobId));
    return job;
  }

  private assertAllowed(jobId: number, run: JobRunRecord | undefined, action: JobAction): void {
    const status: JobStatus = run ? (run.status as JobStatus) : 'NEW';
    if (allows(status, action)) return;
    const allowed = JOB_STATES[status].actions.join(', ') || 'none';
    throw new ConflictError(
      `Job ${jobId} cannot ${action === 'restart' ? 'start' : action} while ${status} (${JOB_STATES[status].name}); allowed: ${allowed}`,
      'JOB_STATE_CONFLICT',
      { jobId, status, action },
    );
  }

  private async answer(job: JobRecord, message: string): Promise<MessageResult<JobStatusDto>> {
    return new MessageResult(message, statusRecord(job, await this.repo.latestRun(job.id)));
  }
}
