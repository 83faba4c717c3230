import { sql, type Updateable } from 'kysely';
import type { DatabaseEngine } from './database';
import { insertTasksIn, jsonRows, toRun, type Trx } from './jobs.rows';
import type { JobRunsTable } from './jobs.schema';
import { recordRunEvent, runEventOf } from './run-events';
import type { ClaimedDoc, DocOutcome, DocOutcomeCode, DocToClaim, JobRunRecord, LockedRun, RemovedDoc, RunChange, TaskSpec, TaskState } from './jobs.store';

/**
 * A run under its lock (JobsRepository.transition): the writes of run-level decisions, and the
 * document rows (job_run_docs), audit records and counters a batch changes, in one transaction.
 */
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
      insert into job_run_docs (run_id, doc_id, rel_path, state, outcome, claimed_at, source_path)
      select ${run.id}, j.d, j.r, 'claimed', null, cast(${now} as bigint), j.s from ${rows} where true
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
    // The read is recorded by the claim itself (its source path and time); its outcome's audit record keeps it (read_at).
    if (fresh.size > 0) {
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
    // (With when each was read: the `r` record its outcome's audit record keeps.)
    const finished = new Map<string, string>();
    for (const [outcome, ids] of byOutcome) {
      const rows = await sql<{ doc_id: string; claimed_at: number | string }>`
        update job_run_docs set state = 'done', outcome = ${outcome}
        where run_id = ${run.id} and state = 'claimed' and doc_id in (select j.d from ${jsonRows(this.engine, ids.map((d) => ({ d })), ['d'])})
        returning doc_id, claimed_at`.execute(trx);
      for (const r of rows.rows) finished.set(r.doc_id, String(r.claimed_at));
    }
    if (finished.size === 0) return;
    const delta = { written: 0, skipped: 0, failed: 0, removed: 0, bytes: 0, bytesRead: 0 };
    const audits: Array<Record<string, string | null>> = [];
    const unmapped = new Map<string, number>();
    for (const o of outcomes) {
      const readAt = finished.get(o.docId);
      if (readAt === undefined) continue; // finished already, or listed twice in this batch
      finished.delete(o.docId);
      if (o.outcome === 'p') {
        delta.written++;
        delta.bytes += o.bytes ?? 0;
      }
      else if (o.outcome === 'e') delta.failed++;
      else delta.skipped++;
      if (o.removed) delta.removed++;
      delta.bytesRead += o.bytesRead ?? 0;
      audits.push({ d: o.docId, o: o.outcome, s: o.sourcePath, t: o.targetId ?? null, m: o.message ?? null, c: o.checksum ?? null, v: o.verified ?? null, a: o.plan ?? null, r: readAt });
      for (const u of o.unmapped ?? []) {
        const key = JSON.stringify([u.kind, u.name]);
        unmapped.set(key, (unmapped.get(key) ?? 0) + 1);
      }
    }
    // Only where a mapping noted names (none on a run without mappings: no statement).
    for (const [key, documents] of unmapped) {
      const [kind, name] = JSON.parse(key) as [string, string];
      await trx
        .insertInto('job_run_unmapped')
        .values({ run_id: run.id, kind, name, documents })
        .onConflict((oc) => oc.columns(['run_id', 'kind', 'name']).doUpdateSet((eb) => ({ documents: eb('job_run_unmapped.documents', '+', documents) })))
        .execute();
    }
    await sql`
      insert into job_audit (job_id, run_id, doc_id, record_type, source_path, target_id, message, checksum, verified, plan, read_at, created_at)
      select cast(${jobId} as integer), ${run.id}, j.d, j.o, j.s, j.t, j.m, j.c, j.v, j.a, cast(j.r as bigint), cast(${now} as bigint) from ${jsonRows(this.engine, audits, ['d', 'o', 's', 't', 'm', 'c', 'v', 'a', 'r'])}`.execute(trx);
    const row = await trx
      .updateTable('job_runs')
      .set((eb) => ({
        written: eb('written', '+', delta.written),
        skipped: eb('skipped', '+', delta.skipped),
        failed: eb('failed', '+', delta.failed),
        removed: eb('removed', '+', delta.removed),
        bytes_written: eb('bytes_written', '+', delta.bytes),
        bytes_read: eb('bytes_read', '+', delta.bytesRead),
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
    // A sync job's deletion is recorded and its state forgotten at once: a crash before leaves both, and the redo finds the target gone.
    await sql`delete from job_sync_state where job_id = ${jobId} and doc_id in (select j.d from ${ids})`.execute(trx);
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
    const before = this.run.status;
    await this.trx.updateTable('job_runs').set(set).where('id', '=', this.run.id).execute();
    this.run = { ...this.run, ...stripUndefined(patch) };
    // The webhook outbox: the event commits with the move, or neither does.
    const event = runEventOf(before, this.run.status);
    if (event) await recordRunEvent(this.trx, this.run, event, Date.now());
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

export async function lockRun(trx: Trx, engine: DatabaseEngine, runId: string): Promise<TransactionLockedRun> {
  const row = await trx.updateTable('job_runs').set({ updated_at: Date.now() }).where('id', '=', runId).returningAll().executeTakeFirst();
  if (!row) throw new Error(`Run ${runId} not found`);
  return new TransactionLockedRun(trx, engine, toRun(row));
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
