import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { DatabaseEngine } from './database';
import type { DocOutcomeCode, FailedDoc, JobRecord, JobRunRecord, RunKind, RunStatus, TaskSpec, TaskState } from './jobs.store';
import type { DatabaseSchema } from './schema';

/** Rows of the jobs tables as records, and the statements both the repository and a locked run use. */

export type Trx = Transaction<DatabaseSchema>;

/** Rows per statement of the task inserts (well under every engine's bound-parameter limit). */
const TASK_INSERT_CHUNK = 200;

/**
 * A table expression `j` over `rows` (text columns `columns`), passed as one JSON parameter:
 * building and binding one statement per batch instead of one placeholder per value is
 * what keeps a document's database cost on the main thread small.
 */
export function jsonRows(engine: DatabaseEngine, rows: ReadonlyArray<Record<string, string | null>>, columns: readonly string[]): RawBuilder<unknown> {
  const json = JSON.stringify(rows);
  if (engine === 'postgres') {
    const types = sql.raw(columns.map((c) => `${c} text`).join(', '));
    return sql`jsonb_to_recordset(${json}::jsonb) as j(${types})`;
  }
  const fields = sql.raw(columns.map((c) => `value ->> '${c}' as ${c}`).join(', '));
  return sql`(select ${fields} from json_each(${json})) as j`;
}

/** Inserts the tasks a run does not have yet, adding the documents of the new ones to its `discovered`. */
export async function insertTasksIn(trx: Trx, runId: string, tasks: readonly TaskSpec[], now: number): Promise<void> {
  const documents = new Map(tasks.map((t) => [t.key, t.documents ?? 0]));
  let discovered = 0;
  for (let i = 0; i < tasks.length; i += TASK_INSERT_CHUNK) {
    const chunk = tasks.slice(i, i + TASK_INSERT_CHUNK);
    const inserted = await trx
      .insertInto('job_run_tasks')
      .values(chunk.map((t) => ({ run_id: runId, task_key: t.key, kind: t.kind, payload: t.payload, state: 'pending' satisfies TaskState, updated_at: now })))
      .onConflict((oc) => oc.columns(['run_id', 'task_key']).doNothing())
      .returning('task_key')
      .execute();
    for (const row of inserted) discovered += documents.get(row.task_key) ?? 0;
  }
  if (discovered > 0) {
    await trx.updateTable('job_runs').set((eb) => ({ discovered: eb('discovered', '+', discovered) })).where('id', '=', runId).execute();
  }
}

export async function failedDocsIn(db: Pick<Trx, 'selectFrom'>, runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]> {
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

export async function findRunIn(db: Pick<Trx, 'selectFrom'>, runId: string): Promise<JobRunRecord | undefined> {
  const row = await db.selectFrom('job_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  return row ? toRun(row) : undefined;
}

export function toJob<D>(row: { id: number; name: string; job_group: string; origin: string; definition: string; run_count: number; created_at: number; updated_at: number }): JobRecord<D> {
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

export function toRun(row: Record<string, unknown>): JobRunRecord {
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
    discovered: n('discovered'),
    bytesWritten: n('bytes_written'),
    bytesRead: n('bytes_read'),
    dryRun: n('dry_run') === 1,
  };
}
