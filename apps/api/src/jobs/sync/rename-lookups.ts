import { TurnBatch } from '@gateway/concurrency';
import type { RenameQuery, SyncStateRecord, SyncStateStore } from '@gateway/persistence';

interface Waiting {
  doc: RenameQuery;
  resolve: (candidates: SyncStateRecord[]) => void;
  reject: (e: unknown) => void;
}

/** New documents whose rename candidates are asked in one query at most (a task holds 500 documents). */
const MAX_BATCH = 500;

/**
 * The rename candidates of a sync run's new documents, asked together: every lookup of one event-loop
 * turn goes in one query per kind of candidate (SyncStateStore.renameCandidates), not two per document.
 * The documents of a task start in the same turn (as many as the job's slots), so a batch is mostly a
 * task's new documents. A failed query fails the lookups of its batch (each document's error).
 */
export class RenameLookups {
  private readonly batch = new TurnBatch<Waiting>((waiting) => void this.answer(waiting), MAX_BATCH);

  constructor(
    private readonly states: SyncStateStore,
    private readonly jobId: number,
    private readonly runId: string,
    private readonly limit: number,
  ) {}

  candidates(doc: RenameQuery): Promise<SyncStateRecord[]> {
    return new Promise((resolve, reject) => this.batch.add({ doc, resolve, reject }));
  }

  private async answer(waiting: readonly Waiting[]): Promise<void> {
    let found: Map<string, SyncStateRecord[]>;
    try {
      found = await this.states.renameCandidates(this.jobId, this.runId, waiting.map((w) => w.doc), this.limit);
    } catch (e) {
      for (const w of waiting) w.reject(e);
      return;
    }
    for (const w of waiting) w.resolve(found.get(w.doc.docId) ?? []);
  }
}
