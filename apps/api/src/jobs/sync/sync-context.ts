import type { Actor, ContentConnector } from '@gateway/connector-api';
import type { DocOutcome, SyncStateStore } from '@gateway/persistence';
import type { DocumentCopier } from '../document-copier';
import type { JobStore } from '../job-store';
import { SyncCopier } from './sync-copier';
import { SyncSweep } from './sync-sweep';

export { SyncCopier } from './sync-copier';

/** What the executor's run context holds for a sync job (`options.mode: sync`). */
export function syncContext(
  copier: DocumentCopier,
  target: ContentConnector,
  states: SyncStateStore | undefined,
  repo: JobStore,
  jobId: number,
  runId: string,
  actor: Actor,
): { copier: SyncCopier; prefetch: (docIds: readonly string[]) => Promise<void>; beforeOutcomes: (batch: DocOutcome[]) => Promise<DocOutcome[]>; sweeper?: SyncSweep } {
  if (!states) throw new Error('Sync jobs need the sync state store (JobSyncStateRepository), which this gateway has not');
  const sync = new SyncCopier(copier, target, states, jobId, runId, actor);
  return {
    copier: sync,
    prefetch: (docIds) => sync.prefetch(docIds),
    beforeOutcomes: (batch) => sync.beforeOutcomes(batch),
    ...(sync.sweeps ? { sweeper: new SyncSweep(sync, target, states, repo, jobId, runId, actor) } : {}),
  };
}
