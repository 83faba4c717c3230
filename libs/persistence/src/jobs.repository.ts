import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';
import { claimScheduledStartIn, type ScheduledStartClaim } from './job-schedules.repository';
import { lockRun } from './jobs.locked-run';
import { failedDocsIn, findRunIn, insertTasksIn, jsonRows, toJob, toRun } from './jobs.rows';
import { recordRunEvent } from './run-events';
import type {
  AuditRecord,
  AuditRecordType,
  ClaimedDoc,
  DocOutcome,
  DocToClaim,
  FailedDoc,
  IndexStateRecord,
  JobOrigin,
  ReportOutcome,
  ReportQuery,
  ReportRow,
  JobRecord,
  JobRunRecord,
  JobsStore,
  JobTaskRecord,
  LockedRun,
  RunKind,
  RunPlanReader,
  RunStatus,
  TaskKind,
  TaskSpec,
  TaskState,
  UnmappedCount,
} from './jobs.store';

/**
 * Everything the job service stores (the contract: jobs.store.ts). Counters live on the run row
 * and move with each batch. No Kysely transaction and no column name leaves this file and its
 * two helpers (jobs.locked-run.ts, jobs.rows.ts): callers change runs through `transition`
 * (camelCase changes under the run's lock).
 */
@Injectable()
export class JobsRepository<D = unknown> implements JobsStore<D> {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db(): Kysely<DatabaseSchema> {
    return this.database.db;
  }

  // ---- definitions --------------------------------------------------------

  /** Inserts; undefined when the name is taken. */
  async insertJob(job: { name: string; group: string; origin: JobOrigin; definition: D; now: number }): Promise<number | undefined> {
    const row = await this.db
      .insertInto('jobs')
      .values({ name: job.name, job_group: job.group, origin: job.origin, definition: JSON.stringify(job.definition), created_at: job.now, updated_at: job.now })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? Number(row.id) : undefined;
  }

  /** False when the new name belongs to another job. */
  async updateJob(id: number, job: { name: string; group: string; definition: D; now: number }): Promise<boolean> {
    const other = await this.db.selectFrom('jobs').select('id').where('name', '=', job.name).where('id', '!=', id).executeTakeFirst();
    if (other) return false;
    await this.db
      .updateTable('jobs')
      .set({ name: job.name, job_group: job.group, definition: JSON.stringify(job.definition), updated_at: job.now })
      .where('id', '=', id)
      .execute();
    return true;
  }

  async setOrigin(id: number, origin: JobOrigin): Promise<void> {
    await this.db.updateTable('jobs').set({ origin }).where('id', '=', id).execute();
  }

  async deleteJob(id: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const runs = trx.selectFrom('job_runs').select('id').where('job_id', '=', id);
      await trx.deleteFrom('job_run_docs').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_run_tasks').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_run_unmapped').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_audit').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_index_state').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_sync_state').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_sync_feed_gone').where('run_id', 'in', runs).execute();
      await trx.deleteFrom('job_sync_feed_folders').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_sync_feed').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_schedule_starts').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_runs').where('job_id', '=', id).execute();
      await trx.deleteFrom('jobs').where('id', '=', id).execute();
    });
  }

  async findJob(id: number): Promise<JobRecord<D> | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob<D>(row) : undefined;
  }

  async findJobByName(name: string): Promise<JobRecord<D> | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toJob<D>(row) : undefined;
  }

  async listJobs(group?: string): Promise<Array<JobRecord<D>>> {
    let q = this.db.selectFrom('jobs').selectAll().orderBy('id');
    if (group !== undefined) q = q.where('job_group', '=', group);
    return (await q.execute()).map((r) => toJob<D>(r));
  }

  // ---- runs ---------------------------------------------------------------

  /**
   * Creates run n+1 of the job (RUNNING, attempt 1) with the tasks `plan` returns, and
   * forgets the per-document state of runs older than the previous one (run-errors needs
   * only the previous). `plan` sees the latest run under the job's lock and may refuse by
   * throwing: then nothing is written. A `scheduled` start is claimed in the same transaction
   * (job-schedules.repository.ts): a node that lost the claim creates no run.
   */
  async createRun(
    jobId: number,
    input: { kind: RunKind; startedBy: string; now: number; scheduled?: ScheduledStartClaim; dryRun?: boolean },
    plan: (previous: JobRunRecord | undefined, reader: RunPlanReader) => Promise<TaskSpec[]>,
  ): Promise<JobRunRecord> {
    return this.db.transaction().execute(async (trx) => {
      const job = await trx
        .updateTable('jobs')
        // A dry run is no start for the schedule: starts due before the job's last real start are not owed (job-scheduler.ts).
        .set((eb) => ({ run_count: eb('run_count', '+', 1), updated_at: input.dryRun ? eb.ref('updated_at') : input.now }))
        .where('id', '=', jobId)
        .returning('run_count')
        .executeTakeFirstOrThrow();
      const n = Number(job.run_count);
      const previous = n > 1 ? await findRunIn(trx, `${jobId}_${n - 1}`) : undefined;
      const runId = `${jobId}_${n}`;
      if (input.scheduled) await claimScheduledStartIn(trx, jobId, runId, input.scheduled, input.now);
      await trx
        .insertInto('job_runs')
        .values({
          id: runId,
          job_id: jobId,
          run_number: n,
          kind: input.kind,
          status: 'RUNNING' satisfies RunStatus,
          message: null,
          started_by: input.startedBy,
          attempt: 1,
          dry_run: input.dryRun ? 1 : 0,
          start_time: input.now,
          end_time: null,
          segment_start: input.now,
          updated_at: input.now,
        })
        .execute();
      const tasks = await plan(previous, { failedDocs: (id, after, limit) => failedDocsIn(trx, id, after, limit) });
      await insertTasksIn(trx, runId, tasks, input.now);
      if (n > 2) {
        const old = trx.selectFrom('job_runs').select('id').where('job_id', '=', jobId).where('run_number', '<', n - 1);
        await trx.deleteFrom('job_run_docs').where('run_id', 'in', old).execute();
        await trx.deleteFrom('job_run_tasks').where('run_id', 'in', old).execute();
        await trx.deleteFrom('job_run_unmapped').where('run_id', 'in', old).execute();
      }
      const run = (await findRunIn(trx, runId))!;
      await recordRunEvent(trx, run, 'run.started', input.now);
      return run;
    });
  }

  async findRun(runId: string): Promise<JobRunRecord | undefined> {
    return findRunIn(this.db, runId);
  }

  async latestRun(jobId: number): Promise<JobRunRecord | undefined> {
    return (await this.latestRuns([jobId])).get(jobId);
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

  async runsWithStatus(statuses: RunStatus[]): Promise<JobRunRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db.selectFrom('job_runs').selectAll().where('status', 'in', statuses).orderBy('id').execute();
    return rows.map(toRun);
  }

  /**
   * Runs `fn` in a transaction that first writes the run row, which takes the write lock
   * (SQLite) or the row lock (PostgreSQL): run-level decisions of concurrent workers, in this
   * process or another, are serialised. Throws when the run does not exist.
   */
  async transition<T>(runId: string, fn: (locked: LockedRun) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => fn(await lockRun(trx, this.database.engine, runId)));
  }

  // ---- tasks --------------------------------------------------------------

  async findTask(runId: string, key: string): Promise<JobTaskRecord | undefined> {
    const row = await this.db.selectFrom('job_run_tasks').selectAll().where('run_id', '=', runId).where('task_key', '=', key).executeTakeFirst();
    return row
      ? { runId: row.run_id, key: row.task_key, kind: row.kind as TaskKind, payload: row.payload, state: row.state as TaskState }
      : undefined;
  }

  /** Tasks not done, in key order; `active` ones too when a stopped process left them so. */
  async unfinishedTaskKeys(runId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('job_run_tasks')
      .select('task_key')
      .where('run_id', '=', runId)
      .where('state', '!=', 'done' satisfies TaskState)
      .orderBy('task_key')
      .execute();
    return rows.map((r) => r.task_key);
  }

  async openListings(runIds: readonly string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('job_run_tasks')
      .select('run_id')
      .distinct()
      .where('run_id', 'in', runIds)
      .where('state', '!=', 'done' satisfies TaskState)
      .where('kind', '=', 'enum' satisfies TaskKind)
      .execute();
    return new Set(rows.map((r) => r.run_id));
  }

  // ---- documents ----------------------------------------------------------

  /**
   * Claims documents for a run: new ones are inserted as 'claimed', counted as read and
   * audited 'r' exactly once; documents already known keep their state. A batch costs a
   * handful of statements whatever its size: the rows travel as one JSON parameter that the
   * engine unpacks (json_each / jsonb_to_recordset), so no statement is built per document.
   */
  async claimDocs(jobId: number, runId: string, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>> {
    if (docs.length === 0) return new Map();
    return this.transition(runId, (locked) => locked.claimDocs(jobId, docs, now));
  }

  /**
   * Applies outcomes: a document moves from claimed to done at most once, and only then are
   * its counter and audit record written (in the same transaction). Returns the run after
   * the update. Like claimDocs, a batch costs a few statements whatever its size.
   */
  async finishDocs(jobId: number, runId: string, outcomes: readonly DocOutcome[], now: number): Promise<JobRunRecord> {
    return this.transition(runId, async (locked) => {
      await locked.finishDocs(jobId, outcomes, now);
      return locked.run;
    });
  }

  /** Documents that ended in error in a run, in a stable order, a page at a time. */
  async failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]> {
    return failedDocsIn(this.db, runId, after, limit);
  }

  // ---- reports ------------------------------------------------------------

  /**
   * Keyset paging over the run's primary key (run_id, doc_id); each row joins the one audit record of its
   * outcome (`r` while unfinished) through job_audit_doc. No index is added for reports, so copies pay nothing.
   */
  async reportRows(jobId: number, runId: string, query: ReportQuery): Promise<ReportRow[]> {
    const outcomes = query.outcomes ?? [];
    const done = outcomes.filter((o) => o !== 'r');
    const filter =
      outcomes.length === 0
        ? sql``
        : sql`and (${done.length > 0 ? sql`d.outcome in (${sql.join(done)})` : sql`false`}${outcomes.includes('r') ? sql` or d.state = 'claimed'` : sql``})`;
    const after = query.after === undefined ? sql`` : sql`and d.doc_id > ${query.after}`;
    const rows = await sql<{
      doc_id: string;
      rel_path: string;
      outcome: string | null;
      claimed_at: number | string;
      source_path: string | null;
      target_id: string | null;
      message: string | null;
      checksum: string | null;
      verified: string | null;
      plan: string | null;
      created_at: number | string | null;
    }>`
      select d.doc_id, d.rel_path, d.outcome, d.claimed_at, coalesce(a.source_path, d.source_path) as source_path, a.target_id, a.message, a.checksum, a.verified, a.plan, a.created_at
      from job_run_docs d
      left join job_audit a on a.job_id = ${jobId} and a.doc_id = d.doc_id and a.record_type = coalesce(d.outcome, 'r') and a.run_id = d.run_id
      where d.run_id = ${runId} ${filter} ${after}
      order by d.doc_id
      limit ${query.limit}`.execute(this.db);
    return rows.rows.map((r) => ({
      docId: r.doc_id,
      relPath: r.rel_path,
      outcome: (r.outcome ?? 'r') as ReportOutcome,
      sourcePath: r.source_path,
      targetId: r.target_id,
      message: r.message,
      checksum: r.checksum,
      verified: r.verified,
      plan: r.plan,
      readAt: Number(r.claimed_at),
      finishedAt: r.outcome === null || r.created_at === null ? null : Number(r.created_at),
    }));
  }

  async reportCounts(runId: string): Promise<Record<ReportOutcome, number>> {
    const counts: Record<ReportOutcome, number> = { p: 0, r: 0, e: 0, d: 0, s: 0 };
    const rows = await this.db
      .selectFrom('job_run_docs')
      .select((eb) => ['outcome', eb.fn.countAll<number>().as('n')])
      .where('run_id', '=', runId)
      .groupBy('outcome')
      .execute();
    for (const r of rows) counts[(r.outcome ?? 'r') as ReportOutcome] += Number(r.n);
    return counts;
  }

  async unmappedCounts(runId: string): Promise<UnmappedCount[]> {
    const rows = await this.db.selectFrom('job_run_unmapped').select(['kind', 'name', 'documents']).where('run_id', '=', runId).orderBy('kind').orderBy('name').execute();
    return rows.map((r) => ({ kind: r.kind, name: r.name, documents: Number(r.documents) }));
  }

  // ---- audit --------------------------------------------------------------

  async latestAudit(jobId: number, docId: string, recordType: AuditRecordType): Promise<AuditRecord | undefined> {
    if (recordType === 'r') return this.latestRead(jobId, docId);
    const row = await this.db
      .selectFrom('job_audit')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('doc_id', '=', docId)
      .where('record_type', '=', recordType)
      .where('plan', 'is', null)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row
      ? {
          jobId: Number(row.job_id),
          runId: row.run_id,
          docId: row.doc_id,
          recordType: row.record_type as AuditRecordType,
          sourcePath: row.source_path,
          targetId: row.target_id,
          message: row.message,
          createdAt: Number(row.created_at),
          checksum: row.checksum,
          verified: row.verified,
        }
      : undefined;
  }

  /**
   * The `r` record: the latest read of the document, which is its claim while unfinished (job_run_docs), then
   * its outcome's audit record (read_at); runs before migration 0180 wrote reads as audit records of their own.
   * Dry runs read too: their records count here, as before (latestAudit leaves their planned outcomes out).
   */
  private async latestRead(jobId: number, docId: string): Promise<AuditRecord | undefined> {
    const audited = await this.db
      .selectFrom('job_audit')
      .select(['run_id', 'source_path', 'record_type', 'read_at', 'created_at'])
      .where('job_id', '=', jobId)
      .where('doc_id', '=', docId)
      .where((eb) => eb.or([eb('record_type', '=', 'r'), eb('read_at', 'is not', null)]))
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const claimed = await this.db
      .selectFrom('job_run_docs as d')
      .innerJoin('job_runs as r', 'r.id', 'd.run_id')
      .select(['d.run_id', 'd.source_path', 'd.claimed_at'])
      .where('r.job_id', '=', jobId)
      .where('d.doc_id', '=', docId)
      .where('d.state', '=', 'claimed')
      .orderBy('d.claimed_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const auditedAt = audited && Number(audited.record_type === 'r' ? audited.created_at : audited.read_at);
    const read = (runId: string, sourcePath: string | null, at: number): AuditRecord => ({
      jobId,
      runId,
      docId,
      recordType: 'r',
      sourcePath,
      targetId: null,
      message: null,
      createdAt: at,
      checksum: null,
      verified: null,
    });
    if (claimed && (auditedAt === undefined || Number(claimed.claimed_at) >= auditedAt)) return read(claimed.run_id, claimed.source_path, Number(claimed.claimed_at));
    return audited && read(audited.run_id, audited.source_path, auditedAt!);
  }

  // ---- indexing jobs --------------------------------------------------------

  async indexStates(jobId: number, docIds: readonly string[]): Promise<Map<string, IndexStateRecord>> {
    const out = new Map<string, IndexStateRecord>();
    if (docIds.length === 0) return out;
    const rows = await sql<{ doc_id: string; source_path: string | null; stamp: string; run_id: string }>`
      select s.doc_id, s.source_path, s.stamp, s.run_id from job_index_state s
      where s.job_id = ${jobId} and s.doc_id in (select j.d from ${jsonRows(this.database.engine, docIds.map((d) => ({ d })), ['d'])})`.execute(this.db);
    for (const r of rows.rows) out.set(r.doc_id, { docId: r.doc_id, sourcePath: r.source_path, stamp: r.stamp, runId: r.run_id });
    return out;
  }

  async saveIndexStates(jobId: number, runId: string, rows: ReadonlyArray<Omit<IndexStateRecord, 'runId'>>, now: number): Promise<void> {
    if (rows.length === 0) return;
    const unique = [...new Map(rows.map((r) => [r.docId, r])).values()];
    const json = jsonRows(this.database.engine, unique.map((r) => ({ d: r.docId, p: r.sourcePath, s: r.stamp })), ['d', 'p', 's']);
    await sql`
      insert into job_index_state (job_id, doc_id, source_path, stamp, run_id, updated_at)
      select cast(${jobId} as integer), j.d, j.p, j.s, ${runId}, cast(${now} as bigint) from ${json} where true
      on conflict (job_id, doc_id) do update set source_path = excluded.source_path, stamp = excluded.stamp, run_id = excluded.run_id, updated_at = excluded.updated_at`.execute(this.db);
  }

  async goneFromSource(jobId: number, runId: string, limit: number): Promise<IndexStateRecord[]> {
    const rows = await this.db
      .selectFrom('job_index_state as s')
      .select(['s.doc_id', 's.source_path', 's.stamp', 's.run_id'])
      .where('s.job_id', '=', jobId)
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('job_run_docs as d').select('d.doc_id').where('d.run_id', '=', runId).whereRef('d.doc_id', '=', 's.doc_id'))),
      )
      .orderBy('s.doc_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ docId: r.doc_id, sourcePath: r.source_path, stamp: r.stamp, runId: r.run_id }));
  }

  /** Deletes audit records older than the cut-off; returns how many. */
  async pruneAudit(before: number): Promise<number> {
    const res = await this.db.deleteFrom('job_audit').where('created_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
