import { TurnBatch } from '@gateway/concurrency';
import type { ContentConnector, ItemInfo } from '@gateway/connector-api';

interface Waiting {
  id: string;
  resolve: (item: ItemInfo) => void;
  reject: (e: unknown) => void;
}

/** Ids asked of the source in one getItems call at most (a task holds 500 documents). */
const MAX_BATCH = 1000;

/**
 * The source documents a mapping reads, asked together: every read of one event-loop turn goes in one
 * `getItems` call where the source has that call (the filesystem: one records query per folder), and
 * by getItem where it has not. The documents of a task start in the same turn, so a batch is mostly a
 * task, i.e. a listing page's documents. An id the batch leaves out, or a batch that fails, is asked
 * with getItem, whose answer or error is the document's.
 */
export class BatchedItemReads {
  private readonly batch?: TurnBatch<Waiting>;

  constructor(private readonly source: ContentConnector) {
    if (source.getItems) this.batch = new TurnBatch((waiting) => void this.answer(waiting), MAX_BATCH);
  }

  read(id: string): Promise<ItemInfo> {
    const batch = this.batch;
    if (!batch) return this.source.getItem(id);
    return new Promise<ItemInfo>((resolve, reject) => batch.add({ id, resolve, reject }));
  }

  private async answer(waiting: readonly Waiting[]): Promise<void> {
    let found: Map<string, ItemInfo>;
    try {
      found = await this.source.getItems!(waiting.map((w) => w.id));
    } catch {
      found = new Map();
    }
    for (const w of waiting) {
      const item = found.get(w.id);
      if (item) w.resolve(item);
      else this.source.getItem(w.id).then(w.resolve, w.reject);
    }
  }
}
