import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type RawBuilder, type Transaction, type Updateable } from 'kysely';
import { DATABASE } from './tokens';
import type { Database, DatabaseEngine } from './database';
import type { DatabaseSchema } from './schema';
import type { JobRunsTable } from './jobs.schema';

type Trx = Transaction<DatabaseSchema>;

/** A run's status; the job service's state table (job-states.ts) adds NEW for a job without a run. */
export type RunStatus = 'RUNNING' | 'PAUSING' | 'PAUSED' | 'ABORTING' | 'ABORTED' | 'FAILED' | 'COMPLETED' | 'COMPLETED_WITH_ERRORS';
/** 'start' (every document of the source folder) or 'runerrors' (the failed documents of the previous run). */
export type RunKind = 'start' | 'runerrors';
export type TaskState = 'pending' | 'active' | 'done';
/** 'enum' lists one folder page; 'docs' copies a batch of documents. */
export type TaskKind = 'enum' | 'docs' | 'sweep';
/** p (processed/written), e (error), d (duplicate), s (skipped). */
export type DocOutcomeCode = 'p' | 'e' | 'd' | 's';
/** An audit record's type: r (read) or an outcome. */
export type AuditRecordType = 'r' | DocOutcomeCode;
export type JobOrigin = 'api' | 'config';

/** `D` is the definition's type: stored as JSON, handed back parsed. */
export interface JobRecord<D = unknown> {
  id: number;
  name: string;
  group: string;
  origin: JobOrigin;
  definition: D;
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
  kind: RunKind;
  status: RunStatus;
  message: string | null;
  startedBy: string;
  attempt: number;
  cancel: boolean;
  startTime: number;
  endTime: number | null;
  activeMs: number;
  segmentStart: number | null;
  /** `failed` when the run was last resumed: options.maxErrors counts failures after it. */
  failedBase: number;
}

/** What a transition may change on a run. */
export type RunChange = Partial<
  Pick<JobRunRecord, 'status' | 'message' | 'attempt' | 'failedBase' | 'cancel' | 'endTime' | 'activeMs' | 'segmentStart'>
>;

/** A task as planned: its payload is the task plan's business (opaque text here). */
export interface TaskSpec {
  key: string;
  kind: TaskKind;
  payload: string;
}

export interface JobTaskRecord extends TaskSpec {
  runId: string;
  state: TaskState;
}

export interface ClaimedDoc {
  docId: string;
  state: 'claimed' | 'done';
  outcome: DocOutcomeCode | null;
  claimedAt: number;
  /** Claimed by this call (read for the first time in this run). */
  fresh: boolean;
}

export interface DocToClaim {
  docId: string;
  relPath: string;
  sourcePath: string;
}

/** A document's result; applied at most once per (run, document). */
export interface DocOutcome {
  docId: string;
  outcome: DocOutcomeCode;
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
  recordType: AuditRecordType;
  sourcePath: string | null;
  targetId: string | null;
  message: string | null;
  createdAt: number;
}

export interface FailedDoc {
  docId: string;
  relPath: string;
}

/**
 * A run under its lock (one transaction): what a transition sees and may do. `run` is the
 * row as read when the lock was taken, with the changes made through `change` applied.
 */
export interface LockedRun {
  readonly run: JobRunRecord;
  change(patch: RunChange): Promise<void>;
  countTasks(states: readonly TaskState[]): Promise<number>;
  setTaskState(key: string, state: TaskState): Promise<void>;
  /** Rows left active by a process that stopped go back to pending. */
  resetActiveTasks(): Promise<void>;
  /** Inserts tasks as pending; a key the run has already keeps its row. */
  insertTasks(tasks: readonly TaskSpec[]): Promise<void>;
  /** JobsStore.claimDocs inside this transition (a task claims its batch as it starts). */
  claimDocs(jobId: number, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>>;
  /** JobsStore.finishDocs inside this transition (a task's last outcomes as it ends); `run` shows the new counters. */
  finishDocs(jobId: number, outcomes: readonly DocOutcome[], now: number): Promise<void>;
  /**
   * Documents an indexing run deleted from its index (gone from the source): recorded done (`p`,
   * with the message) in this run, counted in `removed` only, and their index state forgotten.
   * A document the run has already is left alone (counted once).
   */
  recordRemoved(jobId: number, docs: readonly RemovedDoc[], now: number): Promise<void>;
}

/** What an indexing job last wrote for one source document. */
export interface IndexStateRecord {
  docId: string;
  sourcePath: string | null;
  stamp: string;
  runId: string;
}

/** A document deleted from an index because it is gone from the source (an indexing run's sweep). */
export interface RemovedDoc {
  docId: string;
  sourcePath: string | null;
  targetId: string;
  message: string;
}

/** What createRun's plan may read under the job's lock. */
export interface RunPlanReader {
  failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]>;
}

/** The job service's storage, as the services see it (the repository below, or a test's in-memory fake). */
export interface JobsStore<D = unknown> {
  insertJob(job: { name: string; group: string; origin: JobOrigin; definition: D; now: number }): Promise<number | undefined>;
  updateJob(id: number, job: { name: string; group: string; definition: D; now: number }): Promise<boolean>;
  setOrigin(id: number, origin: JobOrigin): Promise<void>;
  deleteJob(id: number): Promise<void>;
  findJob(id: number): Promise<JobRecord<D> | undefined>;
  findJobByName(name: string): Promise<JobRecord<D> | undefined>;
  listJobs(group?: string): Promise<Array<JobRecord<D>>>;
  createRun(
    jobId: number,
    input: { kind: RunKind; startedBy: string; now: number },
    plan: (previous: JobRunRecord | undefined, reader: RunPlanReader) => Promise<TaskSpec[]>,
  ): Promise<JobRunRecord>;
  findRun(runId: string): Promise<JobRunRecord | undefined>;
  latestRun(jobId: number): Promise<JobRunRecord | undefined>;
  latestRuns(jobIds: number[]): Promise<Map<number, JobRunRecord>>;
  runsWithStatus(statuses: RunStatus[]): Promise<JobRunRecord[]>;
  transition<T>(runId: string, fn: (locked: LockedRun) => Promise<T>): Promise<T>;
  findTask(runId: string, key: string): Promise<JobTaskRecord | undefined>;
  unfinishedTaskKeys(runId: string): Promise<string[]>;
  claimDocs(jobId: number, runId: string, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>>;
  finishDocs(jobId: number, runId: string, outcomes: readonly DocOutcome[], now: number): Promise<JobRunRecord>;
  failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]>;
  latestAudit(jobId: number, docId: string, recordType: AuditRecordType): Promise<AuditRecord | undefined>;
  pruneAudit(before: number): Promise<number>;
  /** Indexing jobs: the last indexed state of these source documents. */
  indexStates(jobId: number, docIds: readonly string[]): Promise<Map<string, IndexStateRecord>>;
  /** Indexing jobs: records what was written (after the index accepted it, before its outcome). */
  saveIndexStates(jobId: number, runId: string, rows: ReadonlyArray<Omit<IndexStateRecord, 'runId'>>, now: number): Promise<void>;
  /** Indexing jobs: indexed documents this run did not list (gone from the source), `limit` at a time. */
  goneFromSource(jobId: number, runId: string, limit: number): Promise<IndexStateRecord[]>;
}

/** Rows per statement of the task inserts (well under every engine's bound-parameter limit). */
const TASK_INSERT_CHUNK = 200;

/**
 * Everything the job service stores. Counters live on the run row and move with each batch.
 * No Kysely transaction and no column name leaves this file: callers change runs through
 * `transition` (camelCase changes under the run's lock).
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
      await trx.deleteFrom('job_audit').where('job_id', '=', id).execute();
      await trx.deleteFrom('job_index_state').where('job_id', '=', id).execute();
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
   * throwing: then nothing is written.
   */
  async createRun(
    jobId: number,
    input: { kind: RunKind; startedBy: string; now: number },
    plan: (previous: JobRunRecord | undefined, reader: RunPlanReader) => Promise<TaskSpec[]>,
  ): Promise<JobRunRecord> {
    return this.db.transaction().execute(async (trx) => {
      const job = await trx
        .updateTable('jobs')
        .set((eb) => ({ run_count: eb('run_count', '+', 1), updated_at: input.now }))
        .where('id', '=', jobId)
        .returning('run_count')
        .executeTakeFirstOrThrow();
      const n = Number(job.run_count);
      const previous = n > 1 ? await findRunIn(trx, `${jobId}_${n - 1}`) : undefined;
      const runId = `${jobId}_${n}`;
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
      }
      return (await findRunIn(trx, runId))!;
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

  // ---- audit --------------------------------------------------------------

  async latestAudit(jobId: number, docId: string, recordType: AuditRecordType): Promise<AuditRecord | undefined> {
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
          recordType: row.record_type as AuditRecordType,
          sourcePath: row.source_path,
          targetId: row.target_id,
          message: row.message,
          createdAt: Number(row.created_at),
        }
      : undefined;
  }

  /** Deletes audit records older than the cut-off; returns how many. */
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
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('job_run_docs as d').select('d.doc_id').where('d.run_id', '=', runId).whereRef('d.doc_id', '=', 's.doc_id'))),
      )
      .orderBy('s.doc_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ docId: r.doc_id, sourcePath: r.source_path, stamp: r.stamp, runId: r.run_id }));
  }

  async pruneAudit(before: number): Promise<number> {
    const res = await this.db.deleteFrom('job_audit').where('created_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

class TransactionLockedRun implements LockedRun {
  constructor(
    private readonly trx: Trx,
    private readonly engine: DatabaseEngine,
    public run: JobRunRecord,
  ) {}

  async claimDocs(jobId: number, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>> {
    const result = new Map<string, ClaimedDoc>();
    if (docs.length === 0) return result;
    const { trx, run } = this;
    const unique = [...new Map(docs.map((d) => [d.docId, d])).values()];
    const rows = jsonRows(
      this.engine,
      unique.map((d) => ({ d: d.docId, r: d.relPath, s: d.sourcePath })),
      ['d', 'r', 's'],
    );
    const inserted = await sql<{ doc_id: string }>`
      insert into job_run_docs (run_id, doc_id, rel_path, state, outcome, claimed_at)
      select ${run.id}, j.d, j.r, 'claimed', null, cast(${now} as bigint) from ${rows} where true
      on conflict (run_id, doc_id) do nothing
      returning doc_id`.execute(trx);
    const fresh = new Set(inserted.rows.map((r) => r.doc_id));
    for (const docId of fresh) result.set(docId, { docId, state: 'claimed', outcome: null, claimedAt: now, fresh: true });
    if (fresh.size < unique.length) {
      const known = unique.filter((d) => !fresh.has(d.docId)).map((d) => d.docId);
      const existing = await trx.selectFrom('job_run_docs').selectAll().where('run_id', '=', run.id).where('doc_id', 'in', known).execute();
      for (const row of existing) {
        result.set(row.doc_id, {
          docId: row.doc_id,
          state: row.state as ClaimedDoc['state'],
          outcome: row.outcome as DocOutcomeCode | null,
          claimedAt: Number(row.claimed_at),
          fresh: false,
        });
      }
    }
    if (fresh.size > 0) {
      const audits = jsonRows(
        this.engine,
        unique.filter((d) => fresh.has(d.docId)).map((d) => ({ d: d.docId, s: d.sourcePath })),
        ['d', 's'],
      );
      await sql`
        insert into job_audit (job_id, run_id, doc_id, record_type, source_path, target_id, message, created_at)
        select cast(${jobId} as integer), ${run.id}, j.d, 'r', j.s, null, null, cast(${now} as bigint) from ${audits}`.execute(trx);
      const row = await trx
        .updateTable('job_runs')
        .set((eb) => ({ read: eb('read', '+', fresh.size) }))
        .where('id', '=', run.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      this.run = toRun(row);
    }
    return result;
  }

  async finishDocs(jobId: number, outcomes: readonly DocOutcome[], now: number): Promise<void> {
    const { trx, run } = this;
    const byOutcome = new Map<DocOutcomeCode, string[]>();
    for (const o of outcomes) {
      const ids = byOutcome.get(o.outcome) ?? [];
      ids.push(o.docId);
      byOutcome.set(o.outcome, ids);
    }
    // Under the run lock nothing else moves these rows: the update that turns a claimed row
    // done says which documents were still claimed, the ones this batch finishes.
    const finished = new Set<string>();
    for (const [outcome, ids] of byOutcome) {
      const rows = await sql<{ doc_id: string }>`
        update job_run_docs set state = 'done', outcome = ${outcome}
        where run_id = ${run.id} and state = 'claimed' and doc_id in (select j.d from ${jsonRows(this.engine, ids.map((d) => ({ d })), ['d'])})
        returning doc_id`.execute(trx);
      for (const r of rows.rows) finished.add(r.doc_id);
    }
    if (finished.size === 0) return;
    const delta = { written: 0, skipped: 0, failed: 0, removed: 0 };
    const audits: Array<Record<string, string | null>> = [];
    for (const o of outcomes) {
      if (!finished.delete(o.docId)) continue; // finished already, or listed twice in this batch
      if (o.outcome === 'p') delta.written++;
      else if (o.outcome === 'e') delta.failed++;
      else delta.skipped++;
      if (o.removed) delta.removed++;
      audits.push({ d: o.docId, o: o.outcome, s: o.sourcePath, t: o.targetId ?? null, m: o.message ?? null });
    }
    await sql`
      insert into job_audit (job_id, run_id, doc_id, record_type, source_path, target_id, message, created_at)
      select cast(${jobId} as integer), ${run.id}, j.d, j.o, j.s, j.t, j.m, cast(${now} as bigint) from ${jsonRows(this.engine, audits, ['d', 'o', 's', 't', 'm'])}`.execute(trx);
    const row = await trx
      .updateTable('job_runs')
      .set((eb) => ({
        written: eb('written', '+', delta.written),
        skipped: eb('skipped', '+', delta.skipped),
        failed: eb('failed', '+', delta.failed),
        removed: eb('removed', '+', delta.removed),
      }))
      .where('id', '=', run.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    this.run = toRun(row);
  }

  async recordRemoved(jobId: number, docs: readonly RemovedDoc[], now: number): Promise<void> {
    if (docs.length === 0) return;
    const { trx, run } = this;
    const unique = [...new Map(docs.map((d) => [d.docId, d])).values()];
    const inserted = await sql<{ doc_id: string }>`
      insert into job_run_docs (run_id, doc_id, rel_path, state, outcome, claimed_at)
      select ${run.id}, j.d, coalesce(j.s, j.d), 'done', 'p', cast(${now} as bigint) from ${jsonRows(this.engine, unique.map((d) => ({ d: d.docId, s: d.sourcePath })), ['d', 's'])} where true
      on conflict (run_id, doc_id) do nothing
      returning doc_id`.execute(trx);
    const fresh = new Set(inserted.rows.map((r) => r.doc_id));
    const ids = jsonRows(this.engine, unique.map((d) => ({ d: d.docId })), ['d']);
    await sql`delete from job_index_state where job_id = ${jobId} and doc_id in (select j.d from ${ids})`.execute(trx);
    if (fresh.size === 0) return;
    const audits = unique.filter((d) => fresh.has(d.docId)).map((d) => ({ d: d.docId, s: d.sourcePath, t: d.targetId, m: d.message }));
    await sql`
      insert into job_audit (job_id, run_id, doc_id, record_type, source_path, target_id, message, created_at)
      select cast(${jobId} as integer), ${run.id}, j.d, 'p', j.s, j.t, j.m, cast(${now} as bigint) from ${jsonRows(this.engine, audits, ['d', 's', 't', 'm'])}`.execute(trx);
    const row = await trx
      .updateTable('job_runs')
      .set((eb) => ({ removed: eb('removed', '+', fresh.size) }))
      .where('id', '=', run.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    this.run = toRun(row);
  }

  async change(patch: RunChange): Promise<void> {
    const set: Updateable<JobRunsTable> = {};
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.message !== undefined) set.message = patch.message;
    if (patch.attempt !== undefined) set.attempt = patch.attempt;
    if (patch.failedBase !== undefined) set.failed_base = patch.failedBase;
    if (patch.cancel !== undefined) set.cancel = patch.cancel ? 1 : 0;
    if (patch.endTime !== undefined) set.end_time = patch.endTime;
    if (patch.activeMs !== undefined) set.active_ms = patch.activeMs;
    if (patch.segmentStart !== undefined) set.segment_start = patch.segmentStart;
    if (Object.keys(set).length === 0) return;
    await this.trx.updateTable('job_runs').set(set).where('id', '=', this.run.id).execute();
    this.run = { ...this.run, ...stripUndefined(patch) };
  }

  async countTasks(states: readonly TaskState[]): Promise<number> {
    if (states.length === 0) return 0;
    const row = await this.trx
      .selectFrom('job_run_tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', this.run.id)
      .where('state', 'in', states)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async setTaskState(key: string, state: TaskState): Promise<void> {
    await this.trx
      .updateTable('job_run_tasks')
      .set({ state, updated_at: Date.now() })
      .where('run_id', '=', this.run.id)
      .where('task_key', '=', key)
      .execute();
  }

  async resetActiveTasks(): Promise<void> {
    await this.trx
      .updateTable('job_run_tasks')
      .set({ state: 'pending' satisfies TaskState })
      .where('run_id', '=', this.run.id)
      .where('state', '=', 'active' satisfies TaskState)
      .execute();
  }

  insertTasks(tasks: readonly TaskSpec[]): Promise<void> {
    return insertTasksIn(this.trx, this.run.id, tasks, Date.now());
  }
}

async function lockRun(trx: Trx, engine: DatabaseEngine, runId: string): Promise<TransactionLockedRun> {
  const row = await trx.updateTable('job_runs').set({ updated_at: Date.now() }).where('id', '=', runId).returningAll().executeTakeFirst();
  if (!row) throw new Error(`Run ${runId} not found`);
  return new TransactionLockedRun(trx, engine, toRun(row));
}

/**
 * A table expression `j` over `rows` (text columns `columns`), passed as one JSON parameter:
 * building and binding one statement per batch instead of one placeholder per value is
 * what keeps a document's database cost on the main thread small.
 */
function jsonRows(engine: DatabaseEngine, rows: ReadonlyArray<Record<string, string | null>>, columns: readonly string[]): RawBuilder<unknown> {
  const json = JSON.stringify(rows);
  if (engine === 'postgres') {
    const types = sql.raw(columns.map((c) => `${c} text`).join(', '));
    return sql`jsonb_to_recordset(${json}::jsonb) as j(${types})`;
  }
  const fields = sql.raw(columns.map((c) => `value ->> '${c}' as ${c}`).join(', '));
  return sql`(select ${fields} from json_each(${json})) as j`;
}

async function insertTasksIn(trx: Trx, runId: string, tasks: readonly TaskSpec[], now: number): Promise<void> {
  for (let i = 0; i < tasks.length; i += TASK_INSERT_CHUNK) {
    const chunk = tasks.slice(i, i + TASK_INSERT_CHUNK);
    await trx
      .insertInto('job_run_tasks')
      .values(chunk.map((t) => ({ run_id: runId, task_key: t.key, kind: t.kind, payload: t.payload, state: 'pending' satisfies TaskState, updated_at: now })))
      .onConflict((oc) => oc.columns(['run_id', 'task_key']).doNothing())
      .execute();
  }
}

async function failedDocsIn(db: Pick<Trx, 'selectFrom'>, runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]> {
  let q = db
    .selectFrom('job_run_docs')
    .select(['doc_id', 'rel_path'])
    .where('run_id', '=', runId)
    // A literal, not a parameter: only then can SQLite and PostgreSQL's planners use the partial index of failures.
    .where('outcome', '=', sql.lit('e' satisfies DocOutcomeCode))
    .orderBy('doc_id')
    .limit(limit);
  if (after !== undefined) q = q.where('doc_id', '>', after);
  return (await q.execute()).map((r) => ({ docId: r.doc_id, relPath: r.rel_path }));
}

async function findRunIn(db: Pick<Trx, 'selectFrom'>, runId: string): Promise<JobRunRecord | undefined> {
  const row = await db.selectFrom('job_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  return row ? toRun(row) : undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function toJob<D>(row: { id: number; name: string; job_group: string; origin: string; definition: string; run_count: number; created_at: number; updated_at: number }): JobRecord<D> {
  return {
    id: Number(row.id),
    name: row.name,
    group: row.job_group,
    origin: row.origin === 'config' ? 'config' : 'api',
    definition: JSON.parse(row.definition) as D,
    runCount: Number(row.run_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toRun(row: Record<string, unknown>): JobRunRecord {
  const n = (k: string) => Number(row[k]);
  const nullable = (k: string) => (row[k] === null || row[k] === undefined ? null : n(k));
  return {
    id: String(row.id),
    jobId: n('job_id'),
    runNumber: n('run_number'),
    kind: String(row.kind) as RunKind,
    status: String(row.status) as RunStatus,
    message: (row.message as string | null) ?? null,
    startedBy: String(row.started_by),
    attempt: n('attempt'),
    cancel: n('cancel') === 1,
    startTime: n('start_time'),
    endTime: nullable('end_time'),
    activeMs: n('active_ms'),
    segmentStart: nullable('segment_start'),
    read: n('read'),
    written: n('written'),
    skipped: n('skipped'),
    failed: n('failed'),
    removed: n('removed'),
    failedBase: n('failed_base'),
  };
}
