import * as path from 'node:path/posix';
import { ConflictError, NotFoundError, type Actor, type ContentConnector } from '@gateway/connector-api';
import type { RemovedDoc, SyncStateRecord, SyncStateStore } from '@gateway/persistence';
import { joinPath } from '../document-copier';
import type { JobStore } from '../job-store';
import type { SyncCopier } from './sync-copier';

/** Target documents deleted or archived per statement of the sweep. */
export const SYNC_SWEEP_BATCH = 500;

/**
 * The last task of a complete sync run with `deletions` delete or archive (the executor queues it
 * as it queues an indexing run's sweep: only when every other task ended, the run is a start, not
 * failing, not paused or aborted). The documents the job wrote before and this run did not list are
 * gone from the source: each is deleted from the target (or moved into `archiveFolder`), then, in one
 * transaction per batch, recorded as `p` (counted in `removed`) with its state forgotten. A crash
 * between the two redoes the batch: a target document already gone counts as done, so nothing is
 * deleted twice and nothing counted twice (recordRemoved counts a document once per run).
 */
export class SyncSweep {
  constructor(
    private readonly sync: SyncCopier,
    private readonly target: ContentConnector,
    private readonly states: SyncStateStore,
    private readonly repo: JobStore,
    private readonly jobId: number,
    private readonly runId: string,
    private readonly actor: Actor,
    /** The documents to remove, `limit` at a time: by default those this run did not list; a run that read the change feed, those its pass reported gone. */
    private readonly gone: (limit: number) => Promise<SyncStateRecord[]> = (limit) => states.goneFromSource(jobId, runId, limit),
  ) {}

  /** False when halted meanwhile (the task stays pending; resume continues it). */
  async sweep(halted: () => boolean): Promise<boolean> {
    for (;;) {
      if (halted()) return false;
      const gone = await this.gone(SYNC_SWEEP_BATCH);
      if (gone.length === 0) return true;
      const removed: RemovedDoc[] = [];
      for (const state of gone) {
        if (halted()) break;
        removed.push({
          docId: state.docId,
          sourcePath: joinPath(this.sync.def.source.folderPath, state.relPath),
          targetId: state.targetId,
          message: await this.remove(state),
        });
      }
      await this.repo.transition(this.runId, (locked) => locked.recordRemoved(this.jobId, removed, Date.now()));
    }
  }

  /** Deletes or archives one target document; says what happened, for its audit record. */
  private async remove(state: SyncStateRecord): Promise<string> {
    try {
      if (this.sync.def.options.deletions === 'archive') return await this.archive(state);
      await this.target.deleteItem(state.targetId, true, this.actor);
      return 'deleted from the target: gone from the source';
    } catch (e) {
      if (e instanceof NotFoundError) return 'gone from the source and already gone from the target';
      throw e;
    }
  }

  /** Into archiveFolder, under the document's relative folder; a name taken there gets the run number. */
  private async archive(state: SyncStateRecord): Promise<string> {
    const relDir = path.dirname(state.relPath);
    const archiveFolder = this.sync.def.options.archiveFolder!; // required with archive (sync-options.ts)
    const dir = relDir === '.' ? archiveFolder : joinPath(archiveFolder, relDir);
    const folderId = await this.sync.folder(dir);
    const name = path.basename(state.relPath);
    try {
      await this.target.move!.moveItem(state.targetId, { folderId, fileName: name }, this.actor);
      return `archived to ${joinPath(dir, name)}: gone from the source`;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      const ext = path.extname(name);
      const renamed = `${name.slice(0, name.length - ext.length)} (run ${this.runId})${ext}`;
      await this.target.move!.moveItem(state.targetId, { folderId, fileName: renamed }, this.actor);
      return `archived to ${joinPath(dir, renamed)}: gone from the source (the name was taken)`;
    }
  }
}
