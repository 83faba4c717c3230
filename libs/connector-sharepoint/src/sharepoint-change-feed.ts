import {
  ChangeTokenExpiredError,
  InvalidArgumentError,
  NotFoundError,
  UpstreamError,
  type ChangeFeedCapability,
  type ChangePage,
  type ItemChange,
} from '@gateway/connector-api';
import { fileId, folderId } from './ids';
import { ACCEPT, literal, query, readCollection, readEntity, str, type Json } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** Rows asked per GetChanges call (SP.ChangeQuery.RowLimit). */
const ROW_LIMIT = 1000;
// A list change token's StringValue: version 1, scope 3 (list), the list's id, .NET ticks, change number.
const LIST_TOKEN = /^1;3;[0-9A-Fa-f-]{36};\d{1,20};-?\d{1,20}$/;
const TOKEN = /^[A-Za-z0-9_-]{1,400}$/;
// SP.ChangeType
const ADD = 1;
const DELETE_OBJECT = 3;
const RENAME = 4;
const MOVE_AWAY = 5;
const MOVE_INTO = 6;

interface ItemRows {
  uid: string;
  folder: boolean;
  types: Set<number>;
  lastType: number;
  /** The ChangeToken of its last row, and that row's place in the pass. */
  lastToken: string;
  lastRow: number;
}

/**
 * The `changeFeed` group over the library's change log: `POST lists/getbytitle(…)/GetChanges` with an
 * SP.ChangeQuery (item changes: Add, Update, DeleteObject, Rename, Move, Restore; RowLimit rows a call,
 * from ChangeTokenStart, exclusive), `CurrentChangeToken` of the list for now. A token is the change
 * token's StringValue, base64url.
 *
 * The log has a row per change, an item may have several (Add then Update when the gateway writes its
 * fields): a pass reads the rows to the end first (ids and types only), keeps each item once, ordered by
 * its last row, and reads each one's current state (one call per item; gone meanwhile = deleted). A page's
 * token is its last item's last row: every item not yet handed out has a later row, so a pass resumed
 * there reports exactly those. A token from before the kept log (SPException "The changeToken refers to
 * a time before the start of the current change log.", HTTP 500) is ChangeTokenExpiredError.
 */
export class SharePointChangeFeed implements ChangeFeedCapability {
  constructor(private readonly connector: SharePointConnector) {}

  async latestToken(): Promise<string> {
    const list = readEntity(await this.connector.getJson(`web/lists/getbytitle(@t)${query({ '@t': literal(this.connector.params.library), $select: 'CurrentChangeToken' })}`));
    const token = str((list.CurrentChangeToken as Json | undefined) ?? {}, 'StringValue');
    if (!token || !LIST_TOKEN.test(token)) throw new UpstreamError('SharePoint answered a list without a CurrentChangeToken');
    return Buffer.from(token).toString('base64url');
  }

  async *changesSince(token: string): AsyncIterable<ChangePage> {
    const start = this.startOf(token);
    const items = await this.readRows(start);
    if (items.length === 0) {
      yield { changes: [], nextToken: token };
      return;
    }
    const pageSize = Math.min(this.connector.params.pageSize, 200);
    for (let at = 0; at < items.length; at += pageSize) {
      const slice = items.slice(at, at + pageSize);
      const changes: ItemChange[] = [];
      for (const rows of slice) changes.push(await this.changeOf(rows));
      yield { changes, nextToken: Buffer.from(slice[slice.length - 1].lastToken).toString('base64url') };
    }
  }

  private startOf(token: string): string {
    const refused = () => new InvalidArgumentError('token', "Invalid parameter 'token': not a change token this connector issued");
    if (typeof token !== 'string' || !TOKEN.test(token)) throw refused();
    const value = Buffer.from(token, 'base64url').toString('utf8');
    if (!LIST_TOKEN.test(value)) throw refused();
    return value;
  }

  /** Every item with a row after `start`, once, ordered by its last row. */
  private async readRows(start: string): Promise<ItemRows[]> {
    const byUid = new Map<string, ItemRows>();
    let row = 0;
    for (let from = start; ; ) {
      const rows = await this.getChanges(from);
      for (const change of rows) {
        const uid = str(change, 'UniqueId')?.toLowerCase();
        const changeToken = str((change.ChangeToken as Json | undefined) ?? {}, 'StringValue');
        if (!changeToken || !LIST_TOKEN.test(changeToken)) throw new UpstreamError('SharePoint answered a change without its ChangeToken');
        from = changeToken;
        row++;
        if (!uid) continue;
        const type = Number(change.ChangeType);
        const seen = byUid.get(uid) ?? { uid, folder: Number(change.FileSystemObjectType) === 1, types: new Set<number>(), lastType: type, lastToken: changeToken, lastRow: row };
        seen.types.add(type);
        Object.assign(seen, { lastType: type, lastToken: changeToken, lastRow: row });
        byUid.set(uid, seen);
      }
      if (rows.length < ROW_LIMIT) break;
    }
    return [...byUid.values()].sort((a, b) => a.lastRow - b.lastRow);
  }

  private async getChanges(from: string): Promise<Json[]> {
    const url = `${this.connector.api}/web/lists/getbytitle(@t)/GetChanges${query({ '@t': literal(this.connector.params.library) })}`;
    const changeQuery = { Item: true, Add: true, Update: true, DeleteObject: true, Rename: true, Move: true, Restore: true, RowLimit: ROW_LIMIT, ChangeTokenStart: { StringValue: from } };
    const res = await this.connector.http.json<Json>({
      method: 'POST',
      url,
      headers: { accept: ACCEPT, 'content-type': 'application/json;odata=nometadata' },
      body: JSON.stringify({ query: changeQuery }),
      accept: [500],
      errorContext: { parameter: 'token' },
    });
    if (res.status === 500) {
      const error = ((res.data?.['odata.error'] ?? res.data?.error) as { code?: string; message?: { value?: string } } | undefined) ?? {};
      // SharePoint has no code of its own for it: an SPException naming the change log.
      if (/SPException/.test(error.code ?? '') && /change ?log/i.test(error.message?.value ?? '')) throw new ChangeTokenExpiredError('SharePoint', error.message?.value);
      throw new UpstreamError(`SharePoint failed to list changes: ${error.message?.value ?? 'HTTP 500'}`, { upstreamStatus: 500 });
    }
    return readCollection(res.data).items;
  }

  private async changeOf(rows: ItemRows): Promise<ItemChange> {
    const id = rows.folder ? folderId(rows.uid) : fileId(rows.uid);
    if (rows.lastType === DELETE_OBJECT || rows.lastType === MOVE_AWAY) return { kind: 'deleted', id };
    try {
      const item = await this.connector.getItem(id);
      const reported = rows.types.has(ADD) ? 'created' : rows.types.has(RENAME) || rows.types.has(MOVE_INTO) ? 'moved' : 'changed';
      return { kind: 'current', id, item, reported };
    } catch (e) {
      // Deleted after the rows were read: reported so now, and once more by the next pass (its DeleteObject row).
      if (e instanceof NotFoundError) return { kind: 'deleted', id };
      throw e;
    }
  }
}
