/**
 * The SharePoint simulator's change log, behind `POST …/lists(…)/GetChanges` (an SP.ChangeQuery) and
 * the list's `CurrentChangeToken`. Wire facts as Microsoft documents them (SP.ChangeQuery, SP.ChangeItem,
 * SP.ChangeToken, SP.ChangeType in the SharePoint REST/CSOM reference; SPChangeQuery.ChangeTokenStart):
 * a list change token's StringValue is `1;3;<list id>;<ticks>;<change number>`; GetChanges returns the
 * changes after ChangeTokenStart (exclusive), oldest first, at most RowLimit, each with its own
 * ChangeToken, ChangeType (1 Add, 2 Update, 3 DeleteObject, 4 Rename, 5 MoveAway, 6 MoveInto, 7 Restore),
 * ItemId, UniqueId, FileSystemObjectType, ServerRelativeUrl, ListId, WebId, SiteId, Time; a token from
 * before the start of the kept log is an SPException ("The changeToken refers to a time before the start
 * of the current change log."), HTTP 500. `expire()` (control route POST /_simulator/changes/expire)
 * trims the log, as SharePoint does after its retention (60 days on premises).
 */

export const CHANGE_TYPE = { Add: 1, Update: 2, DeleteObject: 3, Rename: 4, MoveAway: 5, MoveInto: 6, Restore: 7 } as const;

export interface ChangeRec {
  seq: number;
  listId: string;
  type: number;
  itemId: number;
  uniqueId: string;
  folder: boolean;
  path: string;
  time: string;
}

export interface ChangeLogData {
  changes?: ChangeRec[];
  changeSeq?: number;
  /** Tokens below this change number are refused: their history is gone. */
  oldestChange?: number;
}

/** .NET ticks (100 ns since 0001-01-01) of a time, as change tokens carry them. */
function ticksOf(iso: string): string {
  return (BigInt(Date.parse(iso)) * 10_000n + 621_355_968_000_000_000n).toString();
}

export function listChangeToken(listId: string, seq: number, time: string): string {
  return `1;3;${listId};${ticksOf(time)};${seq}`;
}

export class SimChangeLog {
  constructor(private readonly data: ChangeLogData) {}

  record(change: Omit<ChangeRec, 'seq' | 'time'>): void {
    this.data.changeSeq = (this.data.changeSeq ?? 0) + 1;
    (this.data.changes ??= []).push({ ...change, seq: this.data.changeSeq, time: new Date().toISOString() });
  }

  currentToken(listId: string): string {
    const last = [...(this.data.changes ?? [])].reverse().find((c) => c.listId === listId);
    return listChangeToken(listId, this.data.changeSeq ?? 0, last?.time ?? new Date().toISOString());
  }

  expire(): void {
    this.data.oldestChange = this.data.changeSeq ?? 0;
    this.data.changes = [];
  }

  /**
   * The list's changes after `start` (a token StringValue; none: from the start of the log) that the
   * query's flags select, at most `rowLimit`. Throws a message for a token that is not this list's, or
   * one from before the kept log (`expired`).
   */
  query(listId: string, start: string | undefined, kinds: Set<number>, rowLimit: number): { changes: ChangeRec[] } | { invalid: string } | { expired: true } {
    let after = this.data.oldestChange ?? 0;
    if (start !== undefined) {
      const m = /^1;3;([0-9a-f-]{36});\d+;(\d+)$/i.exec(start);
      if (!m || m[1].toLowerCase() !== listId.toLowerCase()) return { invalid: 'The change token is not valid for this list.' };
      after = Number(m[2]);
      if (after < (this.data.oldestChange ?? 0)) return { expired: true };
    }
    const changes = (this.data.changes ?? []).filter((c) => c.listId === listId && c.seq > after && kinds.has(c.type)).slice(0, rowLimit);
    return { changes };
  }
}
