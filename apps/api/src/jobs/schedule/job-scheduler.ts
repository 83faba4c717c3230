import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConflictError } from '@gateway/connector-api';
import { JobSchedulesRepository, JobsRepository, ScheduledStartTaken, type JobRecord, type JobRunRecord, type ScheduleState } from '@gateway/persistence';
import { Clock } from '../../common/clock';
import { GATEWAY_CONFIG } from '../../config/config.module';
import type { GatewayConfig } from '../../config/gateway-config';
import type { JobDefinition } from '../../config/job-definition.dto';
import type { JobSchedule } from '../../config/job-schedule.dto';
import { JobControlService } from '../job-control.service';
import { allows } from '../job-states';
import type { JobStore } from '../job-store';
import { CronSchedule } from './cron-schedule';

/** How often every process looks for due starts: a start runs at most this late. */
export const SCHEDULE_TICK_MS = 1000;
/** A start handled later than this fell due while no gateway was running: the schedule's `missed` rule applies. */
export const MISSED_AFTER_MS = 60_000;
/** Who a scheduled run acts as (the connectors' actor: creator of the documents it writes). */
export const SCHEDULE_ACTOR = 'scheduler';
/** Due starts handled in one tick per job, beyond the missed ones (5 fields: at most one a minute). */
const DUE_PER_TICK = 5;
const HOUR_MS = 3_600_000;

type Job = JobRecord<JobDefinition>;

/**
 * Starts jobs on their schedules (docs/decisions/0050-job-schedules.md). Every process ticks; a due start
 * is claimed by inserting its row (job, due time) into job_schedule_starts, whose primary key lets one
 * node win: in the run's own transaction when it starts a run (JobControlService.start → createRun), so a
 * node that dies mid-start leaves neither claim nor run and another node takes the start over; alone
 * when it starts nothing (skipped, queued, missed, failed). The latest row per job is the last due time
 * handled, from which the next tick (or the first one after a restart) goes on.
 */
@Injectable()
export class JobScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobScheduler.name);
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private prunedAt = 0;

  constructor(
    @Inject(JobsRepository) private readonly jobs: JobStore,
    private readonly starts: JobSchedulesRepository,
    @Inject(JobControlService) private readonly control: Pick<JobControlService, 'start'>,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'nodeId' | 'jobs'>,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick()
        .catch((e: unknown) => this.logger.warn({ err: e }, 'Schedule tick failed'))
        .finally(() => (this.ticking = undefined));
    }, SCHEDULE_TICK_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
  }

  /** Handles every start due by now (the clock's), once across nodes. */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const scheduled = (await this.jobs.listJobs()).filter((j) => j.definition.schedule?.enabled);
    if (scheduled.length > 0) {
      const ids = scheduled.map((j) => j.id);
      const states = await this.starts.states(ids);
      const runs = await this.jobs.latestRuns(ids);
      for (const job of scheduled) {
        try {
          await this.handle(job, job.definition.schedule!, states.get(job.id), runs.get(job.id), now);
        } catch (e) {
          this.logger.warn({ err: e, jobId: job.id }, `Schedule of job ${job.id} failed`);
        }
      }
    }
    const days = this.config.jobs.auditRetentionDays;
    if (days > 0 && now - this.prunedAt >= HOUR_MS) {
      this.prunedAt = now;
      await this.starts.prune(now - days * 24 * HOUR_MS);
    }
  }

  private async handle(job: Job, schedule: JobSchedule, state: ScheduleState | undefined, run: JobRunRecord | undefined, now: number): Promise<void> {
    const cron = CronSchedule.compiled(schedule.cron, schedule.timeZone);
    let queued = state?.queued;
    if (queued !== undefined && canStart(run)) {
      await this.startQueued(job, queued);
      queued = undefined;
      run = await this.jobs.latestRun(job.id);
    }
    // Starts due before the schedule was last saved (or the job last started) are not owed.
    let since = Math.max(state?.lastDue ?? -Infinity, job.updatedAt);
    const next = cron.nextAfter(since); // the same answer every tick until it falls due (memoized)
    if (next === undefined || next > now) return;
    const latestMissed = next <= now - MISSED_AFTER_MS ? cron.latestAtOrBefore(now - MISSED_AFTER_MS) : undefined;
    if (latestMissed !== undefined && latestMissed > since) {
      const first = next;
      const handled =
        schedule.missed === 'runOnce'
          ? await this.due(job, schedule, latestMissed, run, queued)
          : { queued, here: await this.record(job, latestMissed, 'missed', 'No gateway was running') };
      queued = handled.queued;
      if (handled.here) {
        this.logger.log(
          { jobId: job.id, from: iso(first), to: iso(latestMissed), missed: schedule.missed },
          `Job ${job.id}: scheduled starts from ${iso(first)} to ${iso(latestMissed)} fell due while no gateway was running (missed: ${schedule.missed})`,
        );
      }
      since = latestMissed;
      run = await this.jobs.latestRun(job.id);
    }
    for (const dueAt of cron.between(Math.max(since, now - MISSED_AFTER_MS), now, DUE_PER_TICK)) {
      queued = (await this.due(job, schedule, dueAt, run, queued)).queued;
      run = await this.jobs.latestRun(job.id);
    }
  }

  /**
   * A due start: a run, or the overlap rule when one is active. Answers the job's queued start after it, and
   * whether this node handled the start (false: another node did).
   */
  private async due(job: Job, schedule: JobSchedule, dueAt: number, run: JobRunRecord | undefined, queued: number | undefined): Promise<{ queued: number | undefined; here: boolean }> {
    if (canStart(run)) {
      try {
        await this.control.start(job.id, SCHEDULE_ACTOR, { dueAt, nodeId: this.config.nodeId, queued: false });
        return { queued, here: true };
      } catch (e) {
        if (e instanceof ScheduledStartTaken) return { queued, here: false }; // another node started it
        if (!isStateConflict(e)) {
          const here = await this.record(job, dueAt, 'failed', (e as Error).message);
          if (here) this.logger.warn({ err: e, jobId: job.id, dueAt: iso(dueAt) }, `Job ${job.id}: the start due at ${iso(dueAt)} failed: ${(e as Error).message}`);
          return { queued, here };
        }
        run = await this.jobs.latestRun(job.id); // started by hand meanwhile
      }
    }
    const status = run?.status ?? 'NEW';
    if (schedule.overlap === 'queue' && queued === undefined) {
      const here = await this.record(job, dueAt, 'queued', `Run ${run?.id} was ${status}`);
      if (here) this.logger.log({ jobId: job.id, dueAt: iso(dueAt), runId: run?.id }, `Job ${job.id}: the start due at ${iso(dueAt)} waits for run ${run?.id} (${status}) to end`);
      return { queued: dueAt, here };
    }
    const why = queued !== undefined ? `run ${run?.id} is ${status} and a start is already queued` : `run ${run?.id} is ${status}`;
    const here = await this.record(job, dueAt, 'skipped', why);
    if (here) this.logger.log({ jobId: job.id, dueAt: iso(dueAt), runId: run?.id }, `Job ${job.id}: the start due at ${iso(dueAt)} is skipped: ${why}`);
    return { queued, here };
  }

  private async startQueued(job: Job, dueAt: number): Promise<void> {
    try {
      await this.control.start(job.id, SCHEDULE_ACTOR, { dueAt, nodeId: this.config.nodeId, queued: true });
    } catch (e) {
      if (e instanceof ScheduledStartTaken || isStateConflict(e)) return; // another node took it, or a run started by hand: it waits for that one
      if (await this.starts.failQueued(job.id, dueAt, (e as Error).message, this.clock.now())) {
        this.logger.warn({ err: e, jobId: job.id, dueAt: iso(dueAt) }, `Job ${job.id}: the queued start due at ${iso(dueAt)} failed: ${(e as Error).message}`);
      }
    }
  }

  /** Records a start that starts no run; false when another node handled it first. */
  private record(job: Job, dueAt: number, state: 'skipped' | 'queued' | 'missed' | 'failed', message: string): Promise<boolean> {
    return this.starts.record({ jobId: job.id, dueAt, state, nodeId: this.config.nodeId, message }, this.clock.now());
  }
}

function canStart(run: JobRunRecord | undefined): boolean {
  return run === undefined || allows(run.status, 'restart');
}

function isStateConflict(e: unknown): boolean {
  return e instanceof ConflictError && e.code === 'JOB_STATE_CONFLICT';
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
