import { InvalidArgumentError, type ContentConnector } from '@gateway/connector-api';

/** Copy jobs: `copy` writes what it lists every run; `sync` follows changes, deletions and moves (apps/api/src/jobs/sync/). */
export const JOB_MODES = ['copy', 'sync'] as const;
export type JobMode = (typeof JOB_MODES)[number];
/** Sync jobs: a document changed at the target since the job wrote it. */
export const TARGET_CHANGED = ['keep', 'overwrite', 'version'] as const;
export type TargetChanged = (typeof TARGET_CHANGED)[number];
/** Sync jobs: a document gone from the source. */
export const DELETIONS = ['keep', 'delete', 'archive'] as const;
export type Deletions = (typeof DELETIONS)[number];

/** The sync options of a stored definition, each kept only when given. */
export interface SyncOptions {
  mode?: JobMode;
  targetChanged?: TargetChanged;
  deletions?: Deletions;
  archiveFolder?: string;
}

/**
 * The sync options against the job and its connectors (the definitions service calls this for
 * copy jobs): they need `mode: sync`, archive needs a folder and a target that moves documents.
 */
export function checkSyncOptions(options: SyncOptions & { removeSource: boolean }, target: ContentConnector, targetFolder: string | undefined): void {
  const refuse = (name: string, why: string) => new InvalidArgumentError(name, `Invalid parameter '${name}': ${why}`);
  if (options.mode !== 'sync') {
    for (const name of ['targetChanged', 'deletions', 'archiveFolder'] as const) {
      if (options[name] !== undefined) throw refuse(`options.${name}`, 'only with options.mode sync');
    }
    return;
  }
  if (options.removeSource) throw refuse('options.removeSource', 'a sync job keeps the source (options.mode sync)');
  if (options.targetChanged === 'version' && !target.contentUpdate) throw refuse('options.targetChanged', `connector '${target.id}' cannot add versions (no content update)`);
  if (options.deletions === 'archive') {
    if (options.archiveFolder === undefined) throw refuse('options.archiveFolder', 'required with options.deletions archive');
    if (!target.move) throw refuse('options.deletions', `connector '${target.id}' cannot move documents (no move group), so it cannot archive`);
    if (targetFolder !== undefined && (options.archiveFolder === targetFolder || options.archiveFolder.startsWith(targetFolder === '/' ? '/' : `${targetFolder}/`))) {
      throw refuse('options.archiveFolder', `must lie outside target.folderPath '${targetFolder}' (archived documents would count as orphans there)`);
    }
  } else if (options.archiveFolder !== undefined) {
    throw refuse('options.archiveFolder', 'only with options.deletions archive');
  }
}
