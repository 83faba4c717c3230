import type { Actor, ContentConnector } from '@gateway/connector-api';
import type { DocOutcome, SyncFeedStore, SyncStateStore } from '@gateway/persistence';
import type { DocumentCopier } from '../document-copier';
import type { JobStore } from '../job-store';
import { FeedEnumeration } from './change-feed-enumeration';
import { SyncCopier } from './sync-copier';
import { SyncSweep } from './sync-sweep';

export { SyncCopier } from './sync-copier';
export { FeedEnumeration } from './change-feed-enumeration';

/** What the executor's run context holds for a sync job (`options.mode: sync`). */
export function syncContext(
  copier: DocumentCopier,
  target: ContentConnector,
  states: SyncStateStore | undefined,
  repo: JobStore,
  jobId: number,
  runId: string,
  actor: Actor,
  feeds?: SyncFeedStore,
): {
  copier: SyncCopier;
  prefetch: (docIds: readonly string[]) => Promise<void>;
  beforeOutcomes: (batch: DocOutcome[]) => Promise<DocOutcome[]>;
  sweeper?: { sweep(halted: () => boolean): Promise<boolean> };
  feed?: FeedEnumeration;
} {
  if (!states) throw new Error('Sync jobs need the sync state store (JobSyncStateRepository), which this gateway has not');
  const sync = new SyncCopier(copier, target, states, jobId, runId, actor);
  // A source declaring the changeFeed group is followed through it (change-feed-enumeration.ts).
  const changeFeed = copier.source.changeFeed;
  const feed = changeFeed && feeds ? new FeedEnumeration(copier.def, copier.source, changeFeed, feeds, repo, jobId, runId, sync.sweeps) : undefined;
  const listedSweep = sync.sweeps ? new SyncSweep(sync, target, states, repo, jobId, runId, actor) : undefined;
  const feedSweep = feed && sync.sweeps ? new SyncSweep(sync, target, states, repo, jobId, runId, actor, (limit) => feed.gone(limit)) : undefined;
  return {
    copier: sync,
    prefetch: (docIds) => sync.prefetch(docIds),
    beforeOutcomes: (batch) => sync.beforeOutcomes(batch),
    ...(listedSweep ? { sweeper: feedSweep ? { sweep: async (halted: () => boolean) => ((await feed!.readsFeed()) ? feedSweep : listedSweep).sweep(halted) } : listedSweep } : {}),
    ...(feed ? { feed } : {}),
  };
}
