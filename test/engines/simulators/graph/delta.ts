/**
 * The Graph simulator's change log, behind `GET …/root/delta` (driveItem: delta, v1.0). Every change
 * to an item gives it the store's next change number; a deleted item leaves a tombstone with its own.
 * A pass after token N returns, oldest change first, every item (and tombstone) whose number is above
 * N, each once in its current state; the last page carries a deltaLink whose token is the highest
 * number read. Wire facts as Microsoft documents them (learn.microsoft.com/graph/api/driveitem-delta):
 * no token enumerates the whole drive, `token=latest` answers no items and a deltaLink for now,
 * deleted items come with the `deleted` facet, `parentReference` carries no `path` (items are tracked
 * by id), parents of changed items come too, and a token older than the kept history is refused with
 * 410 Gone, code resyncRequired and a Location to start again. `expireTokens()` (control route
 * POST /_simulator/delta/expire) drops the history so far, as the service does after some time.
 */

/** What a deleted item leaves in the change log. */
export interface Tombstone {
  id: string;
  driveId: string;
  parentId?: string;
  name: string;
  kind: 'folder' | 'file' | 'root';
  changeSeq: number;
}

/** The parts of an item record the change log reads. */
export interface LoggedItem {
  id: string;
  driveId: string;
  changeSeq?: number;
}

export interface ChangeLogState {
  /** The last change number given. */
  changeSeq?: number;
  /** Tokens at or below this number are refused (410): their history is gone. */
  oldestToken?: number;
  tombstones?: Tombstone[];
}

export type LogEntry<T> = { item: T; changeSeq: number } | { tombstone: Tombstone; changeSeq: number };

export class DriveChangeLog<T extends LoggedItem> {
  /** Every entry sorted by change number, rebuilt on the first read after a change. */
  private sorted?: { seq: number; entries: Array<LogEntry<T>> };

  constructor(
    private readonly state: ChangeLogState,
    private readonly items: () => Record<string, T>,
  ) {}

  get latest(): number {
    return this.state.changeSeq ?? 0;
  }

  /** Gives `item` the next change number. */
  changed(item: T): void {
    item.changeSeq = this.state.changeSeq = this.latest + 1;
  }

  deleted(tombstone: Omit<Tombstone, 'changeSeq'>): void {
    this.state.changeSeq = this.latest + 1;
    (this.state.tombstones ??= []).push({ ...tombstone, changeSeq: this.state.changeSeq });
  }

  /** Forgets the history so far: every token issued before now is refused with 410. */
  expireTokens(): void {
    this.state.oldestToken = this.latest;
    this.state.tombstones = [];
  }

  isExpired(token: number): boolean {
    return token < (this.state.oldestToken ?? 0);
  }

  /**
   * Up to `top` entries of `driveId` changed after `after`, oldest first, and the change number of the
   * last one; `full` (no token: the drive's current state) leaves tombstones out.
   */
  page(driveId: string, after: number, top: number, full: boolean): { entries: Array<LogEntry<T>>; last: number; more: boolean } {
    const all = this.entries();
    let low = 0;
    let high = all.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (all[mid].changeSeq <= after) low = mid + 1;
      else high = mid;
    }
    const entries: Array<LogEntry<T>> = [];
    let last = after;
    let at = low;
    for (; at < all.length && entries.length < top; at++) {
      const entry = all[at];
      last = entry.changeSeq;
      const drive = 'item' in entry ? entry.item.driveId : entry.tombstone.driveId;
      if (drive !== driveId || (full && 'tombstone' in entry)) continue;
      entries.push(entry);
    }
    return { entries, last: at >= all.length ? Math.max(last, this.latest) : last, more: at < all.length };
  }

  private entries(): Array<LogEntry<T>> {
    if (this.sorted?.seq === this.latest) return this.sorted.entries;
    const entries: Array<LogEntry<T>> = [];
    for (const item of Object.values(this.items())) entries.push({ item, changeSeq: item.changeSeq ?? 0 });
    for (const tombstone of this.state.tombstones ?? []) entries.push({ tombstone, changeSeq: tombstone.changeSeq });
    entries.sort((a, b) => a.changeSeq - b.changeSeq);
    this.sorted = { seq: this.latest, entries };
    return entries;
  }
}

/**
 * A delta token as the simulator issues it: opaque to clients, a change number inside, and whether it
 * continues an enumeration of the whole drive (whose later pages leave tombstones out too).
 */
export function encodeDeltaToken(seq: number, full = false): string {
  return Buffer.from(`sim-delta;${full ? 'full' : 'since'};${seq}`).toString('base64url');
}

/** What a token says; undefined when it is not one the simulator issued. */
export function decodeDeltaToken(token: string): { seq: number; full: boolean } | undefined {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const m = /^sim-delta;(full|since);(\d{1,15})$/.exec(text);
  return m ? { seq: Number(m[2]), full: m[1] === 'full' } : undefined;
}
