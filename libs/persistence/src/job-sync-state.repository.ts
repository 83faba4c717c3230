import { Inject, Injectable } from '@nestjs/common';
import { sql, type ExpressionBuilder, type Kysely, type OnConflictDatabase, type OnConflictTables } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';
import { jsonRows } from './jobs.rows';

/** A sync job's table (migration 0160-job-sync-state). */
export interface JobSyncStateTable {
  job_id: number;
  doc_id: string;
  /** Path below the job's source folder, which is the target's path below the target folder. */
  rel_path: string;
  /** The source's identity of the content: etag or change token where it has one, else modified time and size. */
  source_stamp: string;
  version_label: string | null;
  size: number | null;
  modified: number | null;
  /** SHA-256 of what was written, where the copy computed it. */
  checksum: string | null;
  target_id: string;
  /** The target's stamp right after our write: a different one later means it changed there. */
  target_stamp: string | null;
  run_id: string;
  updated_at: number;
}

declare module './schema' {
  interface DatabaseSchema {
    job_sync_state: JobSyncStateTable;
  }
}

/** What a sync job wrote for one source document. */
export interface SyncStateRecord {
  docId: string;
  relPath: string;
  sourceStamp: string;
  versionLabel: string | null;
  size: number | null;
  modified: number | null;
  checksum: string | null;
  targetId: string;
  targetStamp: string | null;
  /** The run that wrote it. */
  runId: string;
}

/** A new document whose rename candidates are looked for. */
export interface RenameQuery {
  docId: string;
  stamp: string;
  size: number;
  modified: number;
}

/** The sync state as the jobs use it: this repository, or an in-memory fake in unit tests. */
export interface SyncStateStore {
  /** The states of these source documents. */
  syncStates(jobId: number, docIds: readonly string[]): Promise<Map<string, SyncStateRecord>>;
  /**
   * Records (or replaces) what was written, and forgets `forget` in the same transaction: the old ids of
   * renames at a source whose ids are paths (their state becomes the new id's).
   */
  saveSyncStates(jobId: number, rows: readonly SyncStateRecord[], now: number, forget?: readonly string[]): Promise<void>;
  /**
   * Rename candidates of new documents, by document id (`limit` each at most): documents written before,
   * other than the document itself and not listed by this run so far, with the same source stamp (first)
   * or the same size and modification time; each kind in doc_id order. A document without any: no entry.
   */
  renameCandidates(jobId: number, runId: string, docs: readonly RenameQuery[], limit: number): Promise<Map<string, SyncStateRecord[]>>;
  /** Documents written before that this run did not list (gone from the source), `limit` at a time, in id order. */
  goneFromSource(jobId: number, runId: string, limit: number): Promise<SyncStateRecord[]>;
}

type Row = Pick<JobSyncStateTable, 'doc_id' | 'rel_path' | 'source_stamp' | 'version_label' | 'size' | 'modified' | 'checksum' | 'target_id' | 'target_stamp' | 'run_id'>;
const COLUMNS = ['doc_id', 'rel_path', 'source_stamp', 'version_label', 'size', 'modified', 'checksum', 'target_id', 'target_stamp', 'run_id'] as const;

/** The sync state of sync jobs (apps/api/src/jobs/sync/), on SQLite and PostgreSQL alike. */
@Injectable()
export class JobSyncStateRepository implements SyncStateStore {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db(): Kysely<DatabaseSchema> {
    return this.database.db;
  }

  async syncStates(jobId: number, docIds: readonly string[]): Promise<Map<string, SyncStateRecord>> {
    const out = new Map<string, SyncStateRecord>();
    if (docIds.length === 0) return out;
    const ids = jsonRows(this.database.engine, docIds.map((d) => ({ d })), ['d']);
    const rows = await this.db
      .selectFrom('job_sync_state as s')
      .select(COLUMNS.map((c) => `s.${c}` as const))
      .where('s.job_id', '=', jobId)
      .where(sql<boolean>`s.doc_id in (select j.d from ${ids})`)
      .execute();
    for (const r of rows) out.set(r.doc_id, toSyncStateRecord(r));
    return out;
  }

  async saveSyncStates(jobId: number, rows: readonly SyncStateRecord[], now: number, forget: readonly string[] = []): Promise<void> {
    if (rows.length === 0 && forget.length === 0) return;
    const unique = [...new Map(rows.map((r) => [r.docId, r])).values()];
    await this.db.transaction().execute(async (trx) => {
      if (forget.length > 0) await trx.deleteFrom('job_sync_state').where('job_id', '=', jobId).where('doc_id', 'in', forget).execute();
      if (unique.length > 0) {
        await trx
          .insertInto('job_sync_state')
          .values(unique.map((r) => toRow(jobId, r, now)))
          .onConflict((oc) => oc.columns(['job_id', 'doc_id']).doUpdateSet(UPDATE_ALL))
          .execute();
      }
    });
  }

  async renameCandidates(jobId: number, runId: string, docs: readonly RenameQuery[], limit: number): Promise<Map<string, SyncStateRecord[]>> {
    const out = new Map<string, SyncStateRecord[]>();
    if (docs.length === 0) return out;
    const unique = [...new Map(docs.map((d) => [d.docId, d])).values()];
    const asked = () =>
      jsonRows(
        this.database.engine,
        unique.map((d) => ({ d: d.docId, st: d.stamp, sz: String(d.size), md: String(d.modified) })),
        ['d', 'st', 'sz', 'md'],
      );
    const columns = sql.raw(COLUMNS.map((c) => `s.${c}`).join(', '));
    // One query per kind for every asked document: the asked rows drive the join (CROSS JOIN: SQLite keeps
    // that order; a plain join scanned the job's states, 14 ms a query), each on its index
    // (job_sync_state_stamp, job_sync_state_shape). The window bounds what one document gets (many files
    // of one size and time); its ORDER BY sorts the joined rows only, so the plan stays on those indexes
    // (a top-level ORDER BY doc_id ... LIMIT once walked the primary key: n² row visits on a first run).
    const candidates = async (same: 'stamp' | 'shape') => {
      const match =
        same === 'stamp'
          ? sql`s.source_stamp = j.st`
          : sql`s.size = cast(j.sz as bigint) and s.modified = cast(j.md as bigint) and s.source_stamp <> j.st`;
      const rows = await sql<Row & { asked_by: string }>`
        select * from (
          select j.d as asked_by, ${columns}, row_number() over (partition by j.d order by s.doc_id) as rank_in_doc
          from ${asked()} cross join job_sync_state s
          where s.job_id = ${jobId} and ${match} and s.doc_id <> j.d and not exists (select 1 from job_run_docs r where r.run_id = ${runId} and r.doc_id = s.doc_id)
        ) c where c.rank_in_doc <= ${limit}
        order by c.asked_by, c.rank_in_doc`.execute(this.db);
      return rows.rows;
    };
    for (const same of ['stamp', 'shape'] as const) {
      for (const r of await candidates(same)) {
        const list = out.get(r.asked_by) ?? [];
        if (list.length < limit) list.push(toSyncStateRecord(r));
        out.set(r.asked_by, list);
      }
    }
    return out;
  }

  async goneFromSource(jobId: number, runId: string, limit: number): Promise<SyncStateRecord[]> {
    const rows = await this.db
      .selectFrom('job_sync_state as s')
      .select(COLUMNS.map((c) => `s.${c}` as const))
      .where('s.job_id', '=', jobId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('job_run_docs as d').select('d.doc_id').where('d.run_id', '=', runId).whereRef('d.doc_id', '=', 's.doc_id'))))
      .orderBy('s.doc_id')
      .limit(limit)
      .execute();
    return rows.map(toSyncStateRecord);
  }
}

/** Every column but the key, from the row that lost the conflict (an upsert). */
const UPDATE_ALL = (eb: ExpressionBuilder<OnConflictDatabase<DatabaseSchema, 'job_sync_state'>, OnConflictTables<'job_sync_state'>>) => ({
  rel_path: eb.ref('excluded.rel_path'),
  source_stamp: eb.ref('excluded.source_stamp'),
  version_label: eb.ref('excluded.version_label'),
  size: eb.ref('excluded.size'),
  modified: eb.ref('excluded.modified'),
  checksum: eb.ref('excluded.checksum'),
  target_id: eb.ref('excluded.target_id'),
  target_stamp: eb.ref('excluded.target_stamp'),
  run_id: eb.ref('excluded.run_id'),
  updated_at: eb.ref('excluded.updated_at'),
});

function toRow(jobId: number, r: SyncStateRecord, now: number): JobSyncStateTable {
  return {
    job_id: jobId,
    doc_id: r.docId,
    rel_path: r.relPath,
    source_stamp: r.sourceStamp,
    version_label: r.versionLabel,
    size: r.size,
    modified: r.modified,
    checksum: r.checksum,
    target_id: r.targetId,
    target_stamp: r.targetStamp,
    run_id: r.runId,
    updated_at: now,
  };
}

/** A job_sync_state row as the record the sync copier reads (also the change feed's gone documents: job-sync-feed.repository.ts). */
export function toSyncStateRecord(r: Row): SyncStateRecord {
  return {
    docId: r.doc_id,
    relPath: r.rel_path,
    sourceStamp: r.source_stamp,
    versionLabel: r.version_label,
    size: r.size === null ? null : Number(r.size),
    modified: r.modified === null ? null : Number(r.modified),
    checksum: r.checksum,
    targetId: r.target_id,
    targetStamp: r.target_stamp,
    runId: r.run_id,
  };
}
