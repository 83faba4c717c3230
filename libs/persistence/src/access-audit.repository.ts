import { Inject, Injectable } from '@nestjs/common';
import type { Generated, Selectable } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';

export const ACCESS_OPERATIONS = ['download', 'rangeDownload', 'versionDownload', 'zipEntry', 'publicDownload', 'offload'] as const;
export type AccessOperation = (typeof ACCESS_OPERATIONS)[number];
export const ACCESS_RESULTS = ['complete', 'cut', 'error'] as const;
export type AccessResult = (typeof ACCESS_RESULTS)[number];

/** One content read the gateway served (issue 38). */
export interface AccessAuditTable {
  id: Generated<number>;
  /** Epoch milliseconds: when the answer ended (its last byte, the cut, the failure or the hand-off). */
  time: number;
  /** The authenticated user; 'public' for a download through a link (then link_id says which). */
  username: string;
  link_id: string | null;
  /** As TRUST_PROXY determines it (Express req.ip). */
  client_address: string | null;
  operation: AccessOperation;
  connector_id: string;
  document_id: string;
  path: string | null;
  bytes: number;
  result: AccessResult;
}

declare module './schema' {
  interface DatabaseSchema {
    access_audit: AccessAuditTable;
  }
}

export interface AccessRecord {
  time: number;
  user: string;
  linkId: string | null;
  clientAddress: string | null;
  operation: AccessOperation;
  connectorId: string;
  documentId: string;
  path: string | null;
  bytes: number;
  result: AccessResult;
}

export interface StoredAccessRecord extends AccessRecord {
  id: number;
}

export interface AccessAuditFilter {
  user?: string;
  documentId?: string;
  connectorId?: string;
  operation?: AccessOperation;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

/** Append-only: rows are inserted in batches and only deleted by age (the retention sweep). */
@Injectable()
export class AccessAuditRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** One multi-row INSERT. */
  async insertMany(records: readonly AccessRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.database.db
      .insertInto('access_audit')
      .values(
        records.map((r) => ({
          time: r.time,
          username: r.user,
          link_id: r.linkId,
          client_address: r.clientAddress,
          operation: r.operation,
          connector_id: r.connectorId,
          document_id: r.documentId,
          path: r.path,
          bytes: r.bytes,
          result: r.result,
        })),
      )
      .execute();
  }

  /** Up to `limit` rows matching `filter` with an id above `after`, in id (insertion) order. */
  async list(filter: AccessAuditFilter, after: number | undefined, limit: number): Promise<StoredAccessRecord[]> {
    let query = this.database.db.selectFrom('access_audit').selectAll();
    if (filter.user !== undefined) query = query.where('username', '=', filter.user);
    if (filter.documentId !== undefined) query = query.where('document_id', '=', filter.documentId);
    if (filter.connectorId !== undefined) query = query.where('connector_id', '=', filter.connectorId);
    if (filter.operation !== undefined) query = query.where('operation', '=', filter.operation);
    if (filter.from !== undefined) query = query.where('time', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('time', '<', filter.to);
    if (after !== undefined) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Deletes rows older than `before` (epoch ms); returns how many. */
  async deleteBefore(before: number): Promise<number> {
    const result = await this.database.db.deleteFrom('access_audit').where('time', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRecord(row: Selectable<AccessAuditTable>): StoredAccessRecord {
  return {
    id: Number(row.id),
    time: Number(row.time),
    user: row.username,
    linkId: row.link_id,
    clientAddress: row.client_address,
    operation: row.operation,
    connectorId: row.connector_id,
    documentId: row.document_id,
    path: row.path,
    bytes: Number(row.bytes),
    result: row.result,
  };
}
