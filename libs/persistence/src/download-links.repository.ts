import { Inject, Injectable } from '@nestjs/common';
import { sql, type Selectable } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DownloadLinksTable } from './schema';

export interface DownloadLinkRecord {
  key: string;
  owner: string;
  internal: boolean;
  connectorId: string;
  docId: string;
  fileName: string;
  createdAt: number;
  expiresAt: number;
  used: number;
}

@Injectable()
export class DownloadLinksRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(link: DownloadLinkRecord): Promise<void> {
    await this.database.db
      .insertInto('download_links')
      .values({
        key: link.key,
        owner: link.owner,
        internal: link.internal ? 1 : 0,
        connector_id: link.connectorId,
        doc_id: link.docId,
        file_name: link.fileName,
        created_at: link.createdAt,
        expires_at: link.expiresAt,
        used: link.used,
      })
      .execute();
  }

  async find(key: string): Promise<DownloadLinkRecord | undefined> {
    const row = await this.database.db.selectFrom('download_links').selectAll().where('key', '=', key).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByOwner(owner: string): Promise<DownloadLinkRecord[]> {
    const rows = await this.database.db
      .selectFrom('download_links')
      .selectAll()
      .where('owner', '=', owner)
      .orderBy('created_at', 'desc')
      .orderBy('key')
      .execute();
    return rows.map(toRecord);
  }

  /** Deletes the owner's link; returns it as it was, or undefined when it was not there (or not theirs). */
  async delete(key: string, owner: string): Promise<DownloadLinkRecord | undefined> {
    return this.database.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('download_links').selectAll().where('key', '=', key).where('owner', '=', owner).executeTakeFirst();
      if (!row) return undefined;
      const result = await trx.deleteFrom('download_links').where('key', '=', key).where('owner', '=', owner).executeTakeFirst();
      return Number(result.numDeletedRows) > 0 ? toRecord(row) : undefined;
    });
  }

  /**
   * Counts one download: a single `UPDATE ... SET used = used + 1`, so
   * concurrent downloads never lose a count. False when the link is gone or
   * expired at `now`.
   */
  async incrementUsed(key: string, now: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('download_links')
      .set({ used: sql`used + 1` })
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Removes links that expired before `before`; returns how many. */
  async deleteExpired(before: number): Promise<number> {
    const result = await this.database.db.deleteFrom('download_links').where('expires_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Removes the links of users that no longer exist; returns how many. */
  async deleteOrphaned(): Promise<number> {
    const result = await this.database.db
      .deleteFrom('download_links')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('users').select('users.username').whereRef('users.username', '=', 'download_links.owner'))))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRecord(row: Selectable<DownloadLinksTable>): DownloadLinkRecord {
  return {
    key: row.key,
    owner: row.owner,
    internal: Number(row.internal) === 1,
    connectorId: row.connector_id,
    docId: row.doc_id,
    fileName: row.file_name,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    used: Number(row.used),
  };
}
