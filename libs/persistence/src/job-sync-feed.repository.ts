import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';
import { toSyncStateRecord, type SyncStateRecord } from './job-sync-state.repository';
import { jsonRows } from './jobs.rows';

/** The tables of migration 0170-job-sync-feed. */
export interface JobSyncFeedTable {
  run_id: string;
  job_id: number;
  source: string;
  token: string;
  mode: string;
  since: string | null;
  created_at: number;
}

export interface JobSyncFeedFoldersTable {
  run_id: string;
  folder_id: string;
  job_id: number;
  rel_path: string | null;
}

export interface JobSyncFeedGoneTable {
  run_id: string;
  doc_id: string;
}

declare module './schema' {
  interface DatabaseSchema {
    job_sync_feed: JobSyncFeedTable;
    job_sync_feed_folders: JobSyncFeedFoldersTable;
    job_sync_feed_gone: JobSyncFeedGoneTable;
  }
}

/** How a sync run enumerates its source: `full` lists every folder, `feed` reads the changes since `since`. */
export interface RunFeedRecord {
  source: string;
  /** The token taken as the run started: where the next run reads from, once this one is COMPLETED. */
  token: string;
  mode: 'full' | 'feed';
  since: string | null;
}

/** A source folder as a run saw it: its path below the job's folder, or null once gone (deleted, or moved out). */
export interface FeedFolder {
  folderId: string;
  relPath: string | null;
}

/** What the change-feed enumeration of sync runs keeps (apps/api/src/jobs/sync/change-feed-enumeration.ts). */
export interface SyncFeedStore {
  runFeed(runId: string): Promise<RunFeedRecord | undefined>;
  /** Records how the run enumerates, once: a row the run has already (a resumed run) is kept and answered. */
  beginRun(jobId: number, runId: string, row: RunFeedRecord, now: number): Promise<RunFeedRecord>;
  /** The source refused the run's `since` token: the run lists everything, from `token`. */
  listAgain(runId: string, token: string): Promise<void>;
  /** The token of the job's latest COMPLETED run of this source, if any. */
  lastToken(jobId: number, source: string): Promise<string | undefined>;
  saveFolders(jobId: number, runId: string, folders: readonly FeedFolder[]): Promise<void>;
  /**
   * The folders as known to this run: the latest row of each among this run's and the COMPLETED
   * runs' (a failed or aborted run's folders are as if never seen: its pass is read again).
   */
  folders(jobId: number, runId: string, folderIds: readonly string[]): Promise<Map<string, string | null>>;
  /** The folders known to this run below `relPath` (not itself). */
  foldersUnder(jobId: number, runId: string, relPath: string): Promise<FeedFolder[]>;
  /** The documents the job wrote below `relPath` (their recorded paths). */
  statesUnder(jobId: number, relPath: string): Promise<Array<{ docId: string; relPath: string }>>;
  /** Of these documents, those the job wrote. */
  written(jobId: number, docIds: readonly string[]): Promise<Set<string>>;
  /** Documents the run's pass reported gone: its deletions task removes them at the target. */
  markGone(runId: string, docIds: readonly string[]): Promise<void>;
  /** The states of the documents marked gone by the run that the job still has, `limit` at a time. */
  goneStates(jobId: number, runId: string, limit: number): Promise<SyncStateRecord[]>;
}

/** SyncFeedStore on SQLite and PostgreSQL alike. */
@Injectable()
export class JobSyncFeedRepository implements SyncFeedStore {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db(): Kysely<DatabaseSchema> {
    return this.database.db;
  }

  async runFeed(runId: string): Promise<RunFeedRecord | undefined> {
    const row = await this.db.selectFrom('job_sync_feed').select(['source', 'token', 'mode', 'since']).where('run_id', '=', runId).executeTakeFirst();
    return row ? { source: row.source, token: row.token, mode: row.mode === 'feed' ? 'feed' : 'full', since: row.since } : undefined;
  }

  async beginRun(jobId: number, runId: string, row: RunFeedRecord, now: number): Promise<RunFeedRecord> {
    await this.db
      .insertInto('job_sync_feed')
      .values({ run_id: runId, job_id: jobId, source: row.source, token: row.token, mode: row.mode, since: row.since, created_at: now })
      .onConflict((oc) => oc.column('run_id').doNothing())
      .execute();
    return (await this.runFeed(runId))!;
  }

  async listAgain(runId: string, token: string): Promise<void> {
    await this.db.updateTable('job_sync_feed').set({ mode: 'full', token, since: null }).where('run_id', '=', runId).execute();
  }

  async lastToken(jobId: number, source: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('job_sync_feed as f')
      .innerJoin('job_runs as r', 'r.id', 'f.run_id')
      .select('f.token')
      .where('f.job_id', '=', jobId)
      .where('f.source', '=', source)
      .where('r.status', '=', 'COMPLETED')
      .orderBy('r.run_number', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.token;
  }

  async saveFolders(jobId: number, runId: string, folders: readonly FeedFolder[]): Promise<void> {
    const unique = [...new Map(folders.map((f) => [f.folderId, f])).values()];
    if (unique.length === 0) return;
    await this.db
      .insertInto('job_sync_feed_folders')
      .values(unique.map((f) => ({ run_id: runId, folder_id: f.folderId, job_id: jobId, rel_path: f.relPath })))
      .onConflict((oc) => oc.columns(['run_id', 'folder_id']).doUpdateSet((eb) => ({ rel_path: eb.ref('excluded.rel_path') })))
      .execute();
  }

  async folders(jobId: number, runId: string, folderIds: readonly string[]): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>();
    if (folderIds.length === 0) return out;
    const ids = jsonRows(this.database.engine, folderIds.map((d) => ({ d })), ['d']);
    const rows = await this.known(jobId, runId)
      .where(sql<boolean>`ff.folder_id in (select j.d from ${ids})`)
      .execute();
    for (const r of rows) if (!out.has(r.folder_id)) out.set(r.folder_id, r.rel_path);
    return out;
  }

  async foldersUnder(jobId: number, runId: string, relPath: string): Promise<FeedFolder[]> {
    const prefix = `${relPath}/`;
    const candidates = await this.db
      .selectFrom('job_sync_feed_folders as ff')
      .select('ff.folder_id')
      .distinct()
      .where('ff.job_id', '=', jobId)
      .where(sql<boolean>`substr(ff.rel_path, 1, length(cast(${prefix} as text))) = ${prefix}`)
      .execute();
    const now = await this.folders(jobId, runId, candidates.map((c) => c.folder_id));
    return [...now].filter(([, rel]) => rel !== null && rel.startsWith(prefix)).map(([folderId, rel]) => ({ folderId, relPath: rel }));
  }

  async statesUnder(jobId: number, relPath: string): Promise<Array<{ docId: string; relPath: string }>> {
    const prefix = `${relPath}/`;
    const rows = await this.db
      .selectFrom('job_sync_state as s')
      .select(['s.doc_id', 's.rel_path'])
      .where('s.job_id', '=', jobId)
      .where(sql<boolean>`substr(s.rel_path, 1, length(cast(${prefix} as text))) = ${prefix}`)
      .execute();
    return rows.map((r) => ({ docId: r.doc_id, relPath: r.rel_path }));
  }

  async written(jobId: number, docIds: readonly string[]): Promise<Set<string>> {
    if (docIds.length === 0) return new Set();
    const ids = jsonRows(this.database.engine, docIds.map((d) => ({ d })), ['d']);
    const rows = await this.db
      .selectFrom('job_sync_state as s')
      .select('s.doc_id')
      .where('s.job_id', '=', jobId)
      .where(sql<boolean>`s.doc_id in (select j.d from ${ids})`)
      .execute();
    return new Set(rows.map((r) => r.doc_id));
  }

  async markGone(runId: string, docIds: readonly string[]): Promise<void> {
    const unique = [...new Set(docIds)];
    if (unique.length === 0) return;
    await this.db
      .insertInto('job_sync_feed_gone')
      .values(unique.map((d) => ({ run_id: runId, doc_id: d })))
      .onConflict((oc) => oc.columns(['run_id', 'doc_id']).doNothing())
      .execute();
  }

  async goneStates(jobId: number, runId: string, limit: number): Promise<SyncStateRecord[]> {
    const rows = await this.db
      .selectFrom('job_sync_state as s')
      .innerJoin('job_sync_feed_gone as g', (join) => join.onRef('g.doc_id', '=', 's.doc_id').on('g.run_id', '=', runId))
      .select(['s.doc_id', 's.rel_path', 's.source_stamp', 's.version_label', 's.size', 's.modified', 's.checksum', 's.target_id', 's.target_stamp', 's.run_id'])
      .where('s.job_id', '=', jobId)
      .orderBy('s.doc_id')
      .limit(limit)
      .execute();
    return rows.map(toSyncStateRecord);
  }

  /** Folder rows this run may trust, the latest run first: its own and those of COMPLETED runs. */
  private known(jobId: number, runId: string) {
    return this.db
      .selectFrom('job_sync_feed_folders as ff')
      .innerJoin('job_runs as r', 'r.id', 'ff.run_id')
      .select(['ff.folder_id', 'ff.rel_path'])
      .where('ff.job_id', '=', jobId)
      .where((eb) => eb.or([eb('r.status', '=', 'COMPLETED'), eb('ff.run_id', '=', runId)]))
      .orderBy('r.run_number', 'desc');
  }
}
