import { Inject, Injectable } from '@nestjs/common';
import type { Transaction } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';
import './jobs.schema';

type Trx = Transaction<DatabaseSchema>;

export interface JobRecord {
  id: number;
  name: string;
  group: string;
  origin: string;
  definition: string;
  runCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface JobRunCounters {
  read: number;
  written: number;
  skipped: number;
  failed: number;
  removed: number;
}

export interface JobRunRecord extends JobRunCounters {
  id: string;
  jobId: number;
  runNumber: number;
  kind: string;
  status: string;
  message: string | null;
  startedBy: string;
  attempt: number;
  cancel: boolean;
  startTime: number;
  endTime: number | null;
  activeMs: number;
  segmentStart: number | null;
  failedBase: number;
}

export interface JobTaskRecord {
  runId: string;
  key: string;
  kind: string;
  payload: string;
  state: string;
}

export interface ClaimedDoc {
  docId: string;
  state: 'claimed' | 'done';
  outcome: string | null;
  claimedAt: number;
  /** Claimed by this call (read for the first time in this run). */
  fresh: boolean;
}

/** A document's result; applied at most once per (run, document). */
export interface DocOutcome {
  docId: string;
  /** p (processed/written), e (error), d (duplicate), s (skipped). */
  outcome: 'p' | 'e' | 'd' | 's';
  sourcePath: string;
  targetId?: string;
  message?: string;
  /** The source document was removed after the copy. */
  removed?: boolean;
}

export interface AuditRecord {
  id: number;
  jobId: number;
  runId: string;
  docId: string;
  recordType: string;
  sourcePath: string | null;
  targetId: string | null;
  message: string | null;
  createdAt: number;
}

/** Everything the job service stores. Counters live on the run row and move with each flush. */
@Injectable()
export class JobsRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  // ---- definitions --------------------------------------------------------

  /** Inserts; undefined when the name is taken. */
  async insertJob(job: { name: string; group: string; origin: string; definition: string; now: number }): Promise<number | undefined> {
    const row = await this.db
      .insertInto('jobs')
      .values({ name: job.name, job_group: job.group, origin: job.origin, definition: job.definition, created_at: job.now, updated_at: job.now })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  /** False when the new name belongs to another job. */
  async updateJob(id: number, job: { name: string; group: string; definition: string; now: number }): Promise<boolean> {
    const other = await this.db.selectFrom('jobs').select('id').where('name', '=', job.name).where('id', '!=', id).executeTakeFirst();
    if (other) return false;
    await this.db
      .updateTable('jobs')
      .set({ name: job.name, job_group: job.group, definition: job.definition, updated_at: job.now })
      .where('id', '=', id)
      .execute();
    return true;
  }

  async setOrigin(id: number, origin: string): Promise<void> {
    await this.db.updateTable('jobs').set({ origin }).where('id', '=', id).execute();
  }

  async deleteJob(id: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const runs = trx.selectFrom('job_runs').select('id').where('job_id', '=', id);
      await trx.deleteFrom('job_run_docs').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_run_tasks').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_audit').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_runs').where('job_id', '=', id).execute();
      await trx.deleteFrom('jobs').where('id', '=', id).execute();
    });
  }

  async findJob(id: number): Promise<JobRecord | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  async findJobByName(name: string): Promise<JobRecord | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  async listJobs(group?: string): Promise<JobRecord[]> {
    let q = this.db.selectFrom('jobs').selectAll().orderBy('id');
    if (group !== undefined) q = q.where('job_group', '=', group);
    return (await q.execute()).map(toJob);
  }

  // ---- runs ---------------------------------------------------------------

  /**
   * Creates run n+1 of the job with its first tasks, and forgets the per-document
   * state of runs older than the previous one (run-errors needs only the previous).
   * `guard` sees the latest run under the job's lock and may refuse by throwing.
   */
  async createRun(
    jobId: number,
    input: { kind: string; startedBy: string; now: number; status: string },
    guard: (latest: JobRunRecord | undefined, trx: Trx) => Promise<Array<{ key: string; kind: string; payload: string }>>,
  ): Promise<JobRunRecord> {
    return this.db.transaction().execute(async (trx) => {
      const job = await trx
        .updateTable('jobs')
        .set((eb) => ({ run_count: eb('run_count', '+', 1), updated_at: input.now }))
        .where('id', '=', jobId)
        .returning('run_count')
        .executeTakeFirstOrThrow();
      const n = Number(job.run_count);
      const previous = n > 1 ? await this.findRunIn(trx, `${jobId}_${n - 1}`) : undefined;
      const runId = `${jobId}_${n}`;
      await trx
        .insertInto('job_runs')
        .values({
          id: runId,
          job_id: jobId,
          run_number: n,
          kind: input.kind,
          status: input.status,
          message: null,
          started_by: input.startedBy,
          attempt: 1,
          start_time: input.now,
          end_time: null,
          segment_start: input.now,
          updated_at: input.now,
        })
        .execute();
      const tasks = await guard(previous, trx);
      await this.insertTasks(trx, runId, tasks, input.now);
      if (n > 2) {
        const old = trx.selectFrom('job_runs').select('id').where('job_id', '=', jobId).where('run_number', '<', n - 1);
        await trx.deleteFrom('job_run_docs').where('run_id', 'in', old).execute();
        await trx.deleteFrom('job_run_tasks').where('run_id', 'in', old).execute();
      }
      return (await this.findRunIn(trx, runId))!;
    });
  }

  async findRun(runId: string): Promise<JobRunRecord | undefined> {
    return this.findRunIn(this.db, runId);
  }

  async latestRun(jobId: number): Promise<JobRunRecord | undefined> {
    const row = await this.db
      .selectFrom('job_runs')
      .innerJoin('jobs', 'jobs.id', 'job_runs.job_id')
      .selectAll('job_runs')
      .where('job_runs.job_id', '=', jobId)
      .whereRef('job_runs.run_number', '=', 'jobs.run_count')
      .executeTakeFirst();
    return row ? toRun(row) : undefined;
  }

  async latestRuns(jobIds: number[]): Promise<Map<number, JobRunRecord>> {
    if (jobIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('job_runs')
      .innerJoin('jobs', 'jobs.id', 'job_runs.job_id')
      .selectAll('job_runs')
      .where('job_runs.job_id', 'in', jobIds)
      .whereRef('job_runs.run_number', '=', 'jobs.run_count')
      .execute();
    return new Map(rows.map((r) => [Number(r.job_id), toRun(r)]));
  }

  async runsWithStatus(statuses: string[]): Promise<JobRunRecord[]> {
    const rows = await this.db.selectFrom('job_runs').selectAll().where('status', 'in', statuses).execute();
    return rows.map(toRun);
  }

  /**
   * Runs `fn` in a transaction that first writes the run row, which takes the
   * write lock (SQLite) or the row lock (PostgreSQL): run-level decisions of
   * concurrent workers, in this process or another, are serialised.
   */
  async withRunLock<T>(runId: string, fn: (run: JobRunRecord, trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('job_runs').set({ updated_at: Date.now() }).where('id', '=', runId).execute();
      const run = await this.findRunIn(trx, runId);
      if (!run) throw new Error(`Run ${runId} not found`);
      return fn(run, trx);
    });
  }

  async updateRun(
    trx: Trx,
    runId: string,
    patch: Partial<{ status: string; message: string | null; attempt: number; failed_base: number; cancel: number; end_time: number | null; active_ms: number; segment_start: number | null }>,
  ): Promise<void> {
    await trx.updateTable('job_runs').set(patch).where('id', '=', runId).execute();
  }

  async runStatus(runId: string): Promise<{ status: string; attempt: number; cancel: boolean } | undefined> {
    const row = await this.db.selectFrom('job_runs').select(['status', 'attempt', 'cancel']).where('id', '=', runId).executeTakeFirst();
    return row ? { status: row.status, attempt: Number(row.attempt), cancel: Number(row.cancel) === 1 } : undefined;
  }

  // ---- tasks --------------------------------------------------------------

  async insertTasks(trx: Trx, runId: string, tasks: Array<{ key: string; kind: string; payload: string }>, now: number): Promise<void> {
    for (let i = 0; i < tasks.length; i += 200) {
      const chunk = tasks.slice(i, i + 200);
      await trx
        .insertInto('job_run_tasks')
        .values(chunk.map((t) => ({ run_id: runId, task_key: t.key, kind: t.kind, payload: t.payload, state: 'pending', updated_at: now })))
        .onConflict((oc) => oc.columns(['run_id', 'task_key']).doNothing())
        .execute();
    }
  }

  async findTask(runId: string, key: string): Promise<JobTaskRecord | undefined> {
    const row = await this.db.selectFrom('job_run_tasks').selectAll().where('run_id', '=', runId).where('task_key', '=', key).executeTakeFirst();
    return row ? { runId: row.run_id, key: row.task_key, kind: row.kind, payload: row.payload, state: row.state } : undefined;
  }

  async setTaskState(trx: Trx, runId: string, key: string, state: string): Promise<void> {
    await trx.updateTable('job_run_tasks').set({ state, updated_at: Date.now() }).where('run_id', '=', runId).where('task_key', '=', key).execute();
  }

  /** Tasks not done; `active` ones too when a crashed process left them so. */
  async unfinishedTaskKeys(runId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('job_run_tasks').select('task_key').where('run_id', '=', runId).where('state', '!=', 'done').execute();
    return rows.map((r) => r.task_key);
  }

  async resetActiveTasks(trx: Trx, runId: string): Promise<void> {
    await trx.updateTable('job_run_tasks').set({ state: 'pending' }).where('run_id', '=', runId).where('state', '=', 'active').execute();
  }

  async countTasks(trx: Trx, runId: string, states: string[]): Promise<number> {
    const row = await trx
      .selectFrom('job_run_tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId)
      .where('state', 'in', states)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // ---- documents ----------------------------------------------------------

  /**
   * Claims documents for a run: new ones are inserted as 'claimed', counted as
   * read and audited 'r' exactly once; documents already known keep their state.
   */
  async claimDocs(jobId: number, runId: string, docs: Array<{ docId: string; relPath: string; sourcePath: string }>, now: number): Promise<Map<string, ClaimedDoc>> {
    if (docs.length === 0) return new Map();
    return this.withRunLock(runId, async (_run, trx) => {
      const result = new Map<string, ClaimedDoc>();
      const ids = docs.map((d) => d.docId);
      const existing = await trx.selectFrom('job_run_docs').selectAll().where('run_id', '=', runId).where('doc_id', 'in', ids).execute();
      for (const row of existing) {
        result.set(row.doc_id, { docId: row.doc_id, state: row.state as ClaimedDoc['state'], outcome: row.outcome, claimedAt: Number(row.claimed_at), fresh: false });
      }
      const fresh = docs.filter((d, i) => !result.has(d.docId) && ids.indexOf(d.docId) === i);
      if (fresh.length > 0) {
        await trx
          .insertInto('job_run_docs')
          .values(fresh.map((d) => ({ run_id: runId, doc_id: d.docId, rel_path: d.relPath, state: 'claimed', outcome: null, claimed_at: now })))
          .execute();
        await trx
          .insertInto('job_audit')
          .values(fresh.map((d) => ({ job_id: jobId, run_id: runId, doc_id: d.docId, record_type: 'r', source_path: d.sourcePath, target_id: null, message: null, created_at: now })))
          .execute();
        await trx.updateTable('job_runs').set((eb) => ({ read: eb('read', '+', fresh.length) })).where('id', '=', runId).execute();
        for (const d of fresh) result.set(d.docId, { docId: d.docId, state: 'claimed', outcome: null, claimedAt: now, fresh: true });
      }
      return result;
    });
  }

  /**
   * Applies outcomes: a document moves from claimed to done at most once, and
   * only then are its counter and audit record written (in the same transaction).
   * Returns the run after the update.
   */
  async finishDocs(jobId: number, runId: string, outcomes: DocOutcome[], now: number): Promise<JobRunRecord> {
    return this.withRunLock(runId, async (_run, trx) => {
      const delta = { written: 0, skipped: 0, failed: 0, removed: 0 };
      const audits: Array<DatabaseSchema['job_audit'] extends infer T ? Omit<T & object, 'id'> : never> = [];
      // Under the run lock nothing else moves these rows, so one read of which are still claimed
      // and one update per outcome replace an update per document (most of a small file's database cost).
      const claimed = new Set(
        (
          await trx
            .selectFrom('job_run_docs')
            .select('doc_id')
            .where('run_id', '=', runId)
            .where('doc_id', 'in', outcomes.map((o) => o.docId))
            .where('state', '=', 'claimed')
            .execute()
        ).map((r) => r.doc_id),
      );
      const byOutcome = new Map<string, string[]>();
      for (const o of outcomes) {
        if (!claimed.delete(o.docId)) continue; // finished already, or listed twice in this batch
        const ids = byOutcome.get(o.outcome) ?? [];
        ids.push(o.docId);
        byOutcome.set(o.outcome, ids);
        if (o.outcome === 'p') delta.written++;
        else if (o.outcome === 'e') delta.failed++;
        else delta.skipped++;
        if (o.removed) delta.removed++;
        audits.push({
          job_id: jobId,
          run_id: runId,
          doc_id: o.docId,
          record_type: o.outcome,
          source_path: o.sourcePath,
          target_id: o.targetId ?? null,
          message: o.message ?? null,
          created_at: now,
        });
      }
      for (const [outcome, ids] of byOutcome) {
        await trx.updateTable('job_run_docs').set({ state: 'done', outcome }).where('run_id', '=', runId).where('doc_id', 'in', ids).execute();
      }
      if (audits.length > 0) {
        await trx.insertInto('job_audit').values(audits).execute();
        await trx
          .updateTable('job_runs')
          .set((eb) => ({
            written: eb('written', '+', delta.written),
            skipped: eb('skipped', '+', delta.skipped),
            failed: eb('failed', '+', delta.failed),
            removed: eb('removed', '+', delta.removed),
          }))
          .where('id', '=', runId)
          .execute();
      }
      return (await this.findRunIn(trx, runId))!;
    });
  }

  /** Documents that ended in error in a run, in a stable order, a page at a time. */
  async failedDocs(runId: string, after: string | undefined, limit: number, trx?: Trx): Promise<Array<{ docId: string; relPath: string }>> {
    let q = (trx ?? this.db)
      .selectFrom('job_run_docs')
      .select(['doc_id', 'rel_path'])
      .where('run_id', '=', runId)
      .where('outcome', '=', 'e')
      .orderBy('doc_id')
      .limit(limit);
    if (after !== undefined) q = q.where('doc_id', '>', after);
    return (await q.execute()).map((r) => ({ docId: r.doc_id, relPath: r.rel_path }));
  }

  // ---- audit --------------------------------------------------------------

  async latestAudit(jobId: number, docId: string, recordType: string): Promise<AuditRecord | undefined> {
    const row = await this.db
      .selectFrom('job_audit')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('doc_id', '=', docId)
      .where('record_type', '=', recordType)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row
      ? {
          id: Number(row.id),
          jobId: Number(row.job_id),
          runId: row.run_id,
          docId: row.doc_id,
          recordType: row.record_type,
          sourcePath: row.source_path,
          targetId: row.target_id,
          message: row.message,
          createdAt: Number(row.created_at),
        }
      : undefined;
  }

  /** Deletes audit records older than the cut-off; returns how many. */
  async pruneAudit(before: number): Promise<number> {
    const res = await this.db.deleteFrom('job_audit').where('created_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  private async findRunIn(db: Pick<Trx, 'selectFrom'>, runId: string): Promise<JobRunRecord | undefined> {
    const row = await db.selectFrom('job_runs').selectAll().where('id', '=', runId).executeTakeFirst();
    return row ? toRun(row) : undefined;
  }
}

function toJob(row: { id: number; name: string; job_group: string; origin: string; definition: string; run_count: number; created_at: number; updated_at: number }): JobRecord {
  return {
    id: Number(row.id),
    name: row.name,
    group: row.job_group,
    origin: row.origin,
    definition: row.definition,
    runCount: Number(row.run_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toRun(row: Record<string, unknown>): JobRunRecord {
  const n = (k: string) => Number(row[k]);
  return {
    id: String(row.id),
    jobId: n('job_id'),
    runNumber: n('run_number'),
    kind: String(row.kind),
    status: String(row.status),
    message: (row.message as string | null) ?? null,
    startedBy: String(row.started_by),
    attempt: n('attempt'),
    cancel: n('cancel') === 1,
    startTime: n('start_time'),
    endTime: row.end_time === null || row.end_time === undefined ? null : n('end_time'),
    activeMs: n('active_ms'),
    segmentStart: row.segment_start === null || row.segment_start === undefined ? null : n('segment_start'),
    read: n('read'),
    written: n('written'),
    skipped: n('skipped'),
    failed: n('failed'),
    removed: n('removed'),
    failedBase: n('failed_base'),
  };
}
