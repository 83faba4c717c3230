import { Inject, Injectable } from '@nestjs/common';
import type { Selectable } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { UserFilesTable, UserFileState } from './schema';

export interface UserFileRecord {
  id: string;
  owner: string;
  fileName: string;
  type: string;
  mimeType: string;
  state: UserFileState;
  size: number;
  createdAt: number;
  expiresAt: number;
  completedAt?: number;
  entriesTotal: number;
  entriesDone: number;
  bytesDone: number;
  errorCount: number;
  /** Why an export failed or was stopped. */
  message?: string;
  /** The node building a running export (GATEWAY_NODE_ID) and the end of its lease. */
  nodeId?: string;
  leaseExpiresAt?: number;
}

export interface UserFileProgress {
  entriesDone: number;
  bytesDone: number;
  errorCount: number;
}

/** Metadata of the files kept for users; the bytes live on disk (the api's user-file store). */
@Injectable()
export class UserFilesRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(file: UserFileRecord): Promise<void> {
    await this.database.db
      .insertInto('user_files')
      .values({
        id: file.id,
        owner: file.owner,
        file_name: file.fileName,
        type: file.type,
        mime_type: file.mimeType,
        state: file.state,
        size: file.size,
        created_at: file.createdAt,
        expires_at: file.expiresAt,
        completed_at: file.completedAt ?? null,
        entries_total: file.entriesTotal,
        entries_done: file.entriesDone,
        bytes_done: file.bytesDone,
        error_count: file.errorCount,
        message: file.message ?? null,
        node_id: file.nodeId ?? null,
        lease_expires_at: file.leaseExpiresAt ?? null,
      })
      .execute();
  }

  /**
   * Extends the lease of a running export held by `nodeId`; false when the export is no longer running or
   * no longer that node's (stopped, deleted or failed through another node): its builder then gives up.
   */
  async renewLease(id: string, nodeId: string, until: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('user_files')
      .set({ lease_expires_at: until })
      .where('id', '=', id)
      .where('node_id', '=', nodeId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Fails, in one transaction, the running exports no live node builds: `nodeId`'s own (this node
   * restarted; pass undefined to skip them), those without a lease, and those whose lease ended before
   * `now`. Returns their ids.
   */
  async failAbandoned(nodeId: string | undefined, now: number, message: string): Promise<string[]> {
    return this.database.db.transaction().execute(async (trx) => {
      const abandoned = trx
        .selectFrom('user_files')
        .select('id')
        .where('state', '=', 'running')
        .where((eb) =>
          eb.or([
            ...(nodeId !== undefined ? [eb('node_id', '=', nodeId)] : []),
            eb('lease_expires_at', 'is', null),
            eb('lease_expires_at', '<', now),
          ]),
        );
      const rows = await abandoned.execute();
      if (rows.length === 0) return [];
      const ids = rows.map((r) => r.id);
      // Conditional on `running`: an export that completed meanwhile keeps its word.
      await trx
        .updateTable('user_files')
        .set({ state: 'failed', size: 0, completed_at: now, message })
        .where('id', 'in', ids)
        .where('state', '=', 'running')
        .execute();
      return ids;
    });
  }

  /** Ids of the exports being built (by any node). */
  async runningIds(): Promise<Set<string>> {
    const rows = await this.database.db.selectFrom('user_files').select('id').where('state', '=', 'running').execute();
    return new Set(rows.map((r) => r.id));
  }

  async find(id: string): Promise<UserFileRecord | undefined> {
    const row = await this.database.db.selectFrom('user_files').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** The file when `owner` owns it; undefined otherwise (another user's file does not exist for them). */
  async findOwned(id: string, owner: string): Promise<UserFileRecord | undefined> {
    const row = await this.database.db
      .selectFrom('user_files')
      .selectAll()
      .where('id', '=', id)
      .where('owner', '=', owner)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByOwner(owner: string): Promise<UserFileRecord[]> {
    const rows = await this.database.db
      .selectFrom('user_files')
      .selectAll()
      .where('owner', '=', owner)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Progress of a running export; a no-op once it left `running`. */
  async updateProgress(id: string, progress: UserFileProgress): Promise<void> {
    await this.database.db
      .updateTable('user_files')
      .set({ entries_done: progress.entriesDone, bytes_done: progress.bytesDone, error_count: progress.errorCount })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .execute();
  }

  /** running → ready, in one conditional UPDATE; false when the export is no longer running. */
  async markReady(id: string, size: number, completedAt: number, progress: UserFileProgress): Promise<boolean> {
    const result = await this.database.db
      .updateTable('user_files')
      .set({
        state: 'ready',
        size,
        completed_at: completedAt,
        entries_done: progress.entriesDone,
        bytes_done: progress.bytesDone,
        error_count: progress.errorCount,
      })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** running → stopped or failed, in one conditional UPDATE; false when it was no longer running. */
  async markEnded(id: string, state: 'stopped' | 'failed', completedAt: number, message: string): Promise<boolean> {
    const result = await this.database.db
      .updateTable('user_files')
      .set({ state, size: 0, completed_at: completedAt, message: message.slice(0, 1024) })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Pushes `expires` forward to at least `expiresAt` (a link to the file outlives its retention). */
  async extendExpiry(id: string, expiresAt: number): Promise<void> {
    await this.database.db
      .updateTable('user_files')
      .set({ expires_at: expiresAt })
      .where('id', '=', id)
      .where('expires_at', '<', expiresAt)
      .execute();
  }

  /**
   * Deletes the file's row and (unless told otherwise) the internal links
   * pointing at it, in one transaction; false when it was not there (or not the owner's).
   */
  async delete(id: string, owner: string, options: { withLinks?: boolean } = {}): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('user_files').where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      if (options.withLinks !== false) {
        await trx.deleteFrom('download_links').where('internal', '=', 1).where('doc_id', '=', id).execute();
      }
      return true;
    });
  }

  /** Files past their expiry that no export is writing. */
  async listExpired(now: number, limit = 1000): Promise<UserFileRecord[]> {
    const rows = await this.database.db
      .selectFrom('user_files')
      .selectAll()
      .where('expires_at', '<=', now)
      .where('state', '<>', 'running')
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** Files whose owner no longer exists, running or not. */
  async listOrphaned(limit = 1000): Promise<UserFileRecord[]> {
    const rows = await this.database.db
      .selectFrom('user_files')
      .selectAll()
      .where((eb) => eb.not(eb.exists(eb.selectFrom('users').select('users.username').whereRef('users.username', '=', 'user_files.owner'))))
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** Ids of the files whose bytes are complete on disk. */
  async readyIds(): Promise<Set<string>> {
    const rows = await this.database.db.selectFrom('user_files').select('id').where('state', '=', 'ready').execute();
    return new Set(rows.map((r) => r.id));
  }
}

function toRecord(row: Selectable<UserFilesTable>): UserFileRecord {
  return {
    id: row.id,
    owner: row.owner,
    fileName: row.file_name,
    type: row.type,
    mimeType: row.mime_type,
    state: row.state,
    size: Number(row.size),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    completedAt: row.completed_at === null ? undefined : Number(row.completed_at),
    entriesTotal: Number(row.entries_total),
    entriesDone: Number(row.entries_done),
    bytesDone: Number(row.bytes_done),
    errorCount: Number(row.error_count),
    message: row.message ?? undefined,
    nodeId: row.node_id ?? undefined,
    leaseExpiresAt: row.lease_expires_at === null ? undefined : Number(row.lease_expires_at),
  };
}
