import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Transaction } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';

/** What became of a due start of a schedule (migration 0070-job-schedule-starts). */
export type ScheduledStartState = 'started' | 'skipped' | 'queued' | 'missed' | 'failed';

export interface JobScheduleStartsTable {
  job_id: number;
  /** The due time, epoch ms. */
  due_at: number;
  state: ScheduledStartState;
  run_id: string | null;
  /** The node that handled it. */
  node_id: string;
  message: string | null;
  updated_at: number;
}

declare module './schema' {
  interface DatabaseSchema {
    job_schedule_starts: JobScheduleStartsTable;
  }
}

/** A scheduled start for `createRun`: claimed in the run's own transaction, so the claim and the run exist together or not at all. */
export interface ScheduledStartClaim {
  dueAt: number;
  nodeId: string;
  /** Take the job's queued start at `dueAt` (overlap `queue`) instead of inserting a new one. */
  queued: boolean;
}

/** Per job: the latest due start handled, the latest skipped, the queued one. */
export interface ScheduleState {
  lastDue: number;
  lastSkipped?: number;
  queued?: number;
}

export interface ScheduledStartRecord {
  jobId: number;
  dueAt: number;
  state: ScheduledStartState;
  runId: string | null;
  nodeId: string;
  message: string | null;
}

/** Thrown inside createRun's transaction when another node handled the due start first (the run is rolled back). */
export class ScheduledStartTaken extends Error {
  constructor(
    readonly jobId: number,
    readonly dueAt: number,
  ) {
    super(`The start of job ${jobId} due at ${new Date(dueAt).toISOString()} was handled by another node`);
  }
}

/**
 * Claims the due start for the run being created in `trx` (JobsRepository.createRun); throws ScheduledStartTaken,
 * which rolls the run back, when another node claimed it first. Insert-or-nothing on the primary key, or the
 * queued row's move to `started`: either is atomic on both engines.
 */
export async function claimScheduledStartIn(trx: Transaction<DatabaseSchema>, jobId: number, runId: string, claim: ScheduledStartClaim, now: number): Promise<void> {
  if (claim.queued) {
    const taken = await trx
      .updateTable('job_schedule_starts')
      .set({ state: 'started', run_id: runId, node_id: claim.nodeId, updated_at: now })
      .where('job_id', '=', jobId)
      .where('due_at', '=', claim.dueAt)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 0) throw new ScheduledStartTaken(jobId, claim.dueAt);
    return;
  }
  const row = await trx
    .insertInto('job_schedule_starts')
    .values({ job_id: jobId, due_at: claim.dueAt, state: 'started', run_id: runId, node_id: claim.nodeId, message: null, updated_at: now })
    .onConflict((oc) => oc.columns(['job_id', 'due_at']).doNothing())
    .returning('job_id')
    .executeTakeFirst();
  if (!row) throw new ScheduledStartTaken(jobId, claim.dueAt);
}

/** The due starts of job schedules: the claims that make each start run once across nodes. */
@Injectable()
export class JobSchedulesRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db(): Kysely<DatabaseSchema> {
    return this.database.db;
  }

  /** Records a due start that starts no run (skipped, queued, missed, failed); false when another node handled it first. */
  async record(start: Omit<ScheduledStartRecord, 'runId'>, now: number): Promise<boolean> {
    const row = await this.db
      .insertInto('job_schedule_starts')
      .values({ job_id: start.jobId, due_at: start.dueAt, state: start.state, run_id: null, node_id: start.nodeId, message: start.message, updated_at: now })
      .onConflict((oc) => oc.columns(['job_id', 'due_at']).doNothing())
      .returning('job_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** A queued start that could not be started (its job's connector went away): recorded as failed, once. */
  async failQueued(jobId: number, dueAt: number, message: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('job_schedule_starts')
      .set({ state: 'failed', message, updated_at: now })
      .where('job_id', '=', jobId)
      .where('due_at', '=', dueAt)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async states(jobIds: number[]): Promise<Map<number, ScheduleState>> {
    if (jobIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('job_schedule_starts')
      .select([
        'job_id',
        sql<number>`max(due_at)`.as('last_due'),
        sql<number | null>`max(case when state = 'skipped' then due_at end)`.as('last_skipped'),
        sql<number | null>`max(case when state = 'queued' then due_at end)`.as('queued'),
      ])
      .where('job_id', 'in', jobIds)
      .groupBy('job_id')
      .execute();
    return new Map(
      rows.map((r) => [
        Number(r.job_id),
        {
          lastDue: Number(r.last_due),
          ...(r.last_skipped !== null ? { lastSkipped: Number(r.last_skipped) } : {}),
          ...(r.queued !== null ? { queued: Number(r.queued) } : {}),
        },
      ]),
    );
  }

  /** A job's due starts, newest first. */
  async starts(jobId: number, limit = 100): Promise<ScheduledStartRecord[]> {
    const rows = await this.db.selectFrom('job_schedule_starts').selectAll().where('job_id', '=', jobId).orderBy('due_at', 'desc').limit(limit).execute();
    return rows.map((r) => ({ jobId: Number(r.job_id), dueAt: Number(r.due_at), state: r.state, runId: r.run_id, nodeId: r.node_id, message: r.message }));
  }

  /** Deletes starts due before `before`, keeping each job's latest (the schedule's memory of what it handled) and queued ones. */
  async prune(before: number): Promise<void> {
    await this.db
      .deleteFrom('job_schedule_starts as s')
      .where('s.due_at', '<', before)
      .where('s.state', '!=', 'queued')
      .where('s.due_at', '<', (eb) => eb.selectFrom('job_schedule_starts as l').select((l) => l.fn.max('l.due_at').as('m')).whereRef('l.job_id', '=', 's.job_id'))
      .execute();
  }
}
