import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { NotFoundError, NotSupportedError, type Actor, type ContentConnector, type ItemInfo } from '@gateway/connector-api';
import type { ClaimedDoc, DocOutcome, SyncStateRecord, SyncStateStore } from '@gateway/persistence';
import type { OnExisting } from '../../config/job-definition.dto';
import { CLOCK_TOLERANCE_MS, errorMessage, findId, type CopyGuard, type DocumentCopier } from '../document-copier';
import { DocumentFilter } from '../document-filter';
import { Cancelled } from '../run-watcher';
import type { DocItem } from '../task-plan';
import { RenameLookups } from './rename-lookups';
import { sourceStamp, targetStamp } from './sync-stamps';

/** Rename candidates looked at per new document at most (same stamp first, then same size and modification time). */
const RENAME_CANDIDATES = 16;

/**
 * One document of a sync run (issue 36, `options.mode: sync`). Before anything is read it compares
 * the document with what the job wrote for it last time (job_sync_state, SyncStateStore):
 *
 * - same stamp, same path: `s` "unchanged since run N", the content never opened;
 * - same stamp (or not), new path: the target document is moved or renamed (`move` group), not copied;
 * - changed stamp: written again (the job's DocumentCopier with onExisting overwrite), unless the target
 *   changed since our write (its stamp differs from the one recorded): `targetChanged` decides;
 * - no state: a new document; on sources whose ids are paths, one whose size and modification time
 *   equal those of a document gone from the source, and whose stamp (the same file) or SHA-256 equals
 *   that one's, is a rename (rclone's --track-renames): its target document is moved. Else it is copied.
 *
 * The states of a batch of outcomes are written in one statement just before the outcomes are recorded
 * (beforeOutcomes, as the indexer writes its index documents): a crash between the target's change and
 * the state leaves the document claimed, and the redo finds the target written or moved since its claim
 * (recovered, `p`); a crash between the state and the outcome, its own state (recovered, `p`).
 */
export class SyncCopier {
  private readonly filter: DocumentFilter;
  private readonly known = new Map<string, SyncStateRecord | null>();
  /** States to write with the outcome of their document (beforeOutcomes), and the old ids of renames. */
  private readonly pending = new Map<string, { row: SyncStateRecord; forget?: string }>();
  /** Old ids whose target document a rename of this process has taken (its state not yet written). */
  private readonly taken = new Set<string>();
  /** Rename candidates of the new documents, asked together per event-loop turn. */
  private readonly renames: RenameLookups;

  constructor(
    private readonly copier: DocumentCopier,
    private readonly target: ContentConnector,
    private readonly states: SyncStateStore,
    private readonly jobId: number,
    private readonly runId: string,
    private readonly actor: Actor,
  ) {
    this.filter = new DocumentFilter(copier.def.options);
    this.renames = new RenameLookups(states, jobId, runId, RENAME_CANDIDATES);
  }

  get def() {
    return this.copier.def;
  }

  get source(): ContentConnector {
    return this.copier.source;
  }

  /** Whether a complete run ends with the deletions sweep (sync-sweep.ts). */
  get sweeps(): boolean {
    return (this.def.options.deletions ?? 'keep') !== 'keep';
  }

  sourcePath(item: DocItem): string {
    return this.copier.sourcePath(item);
  }

  /** Loads in one query the states of a task's documents. */
  async prefetch(docIds: readonly string[]): Promise<void> {
    if (docIds.length === 0) return;
    const states = await this.states.syncStates(this.jobId, docIds);
    for (const id of docIds) this.known.set(id, states.get(id) ?? null);
  }

  private async knownState(docId: string): Promise<SyncStateRecord | undefined> {
    const prefetched = this.known.get(docId);
    if (prefetched !== undefined) {
      this.known.delete(docId);
      return prefetched ?? undefined;
    }
    return (await this.states.syncStates(this.jobId, [docId])).get(docId);
  }

  async copy(item: DocItem, claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>, fetch: boolean, guard: CopyGuard): Promise<DocOutcome | undefined> {
    const sourcePath = this.sourcePath(item);
    const skip = this.filter.skipReason(item);
    if (skip) return { docId: item.id, outcome: 's', sourcePath, message: skip };
    try {
      const info: DocItem = fetch ? fromItem(item, await this.source.getItem(item.id)) : item;
      const stamp = sourceStamp(info);
      const known = await this.knownState(item.id);
      if (!known) return await this.fresh(info, sourcePath, stamp, claim, guard);
      const ours = known.runId === this.runId && !claim.fresh;
      if (known.sourceStamp === stamp && known.relPath === info.rel) {
        if (ours) return { docId: item.id, outcome: 'p', sourcePath, targetId: known.targetId, message: 'recovered: written by an earlier attempt of this run' };
        return { docId: item.id, outcome: 's', sourcePath, targetId: known.targetId, message: `unchanged since run ${runNumber(known.runId)}` };
      }
      let state = known;
      let moved: string | undefined;
      if (known.relPath !== info.rel) {
        state = await this.moveTarget(known, info);
        moved = `moved from ${known.relPath}`;
        if (known.sourceStamp === stamp) {
          this.save(info, stamp, state.targetId, state.targetStamp, state.checksum);
          return { docId: item.id, outcome: 'p', sourcePath, targetId: state.targetId, message: moved };
        }
      }
      return await this.changed(info, sourcePath, stamp, state, claim, guard, moved);
    } catch (e) {
      if (guard.cancelled || e instanceof Cancelled) return undefined;
      return { docId: item.id, outcome: 'e', sourcePath, message: errorMessage(e) };
    }
  }

  /** A document whose content changed at the source since the job wrote it. */
  private async changed(
    info: DocItem,
    sourcePath: string,
    stamp: string,
    state: SyncStateRecord,
    claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>,
    guard: CopyGuard,
    moved: string | undefined,
  ): Promise<DocOutcome | undefined> {
    const current = await this.targetNow(state.targetId);
    let onExisting: OnExisting = 'overwrite';
    // Gone at the target on a redo: the earlier attempt's overwrite deleted it and was cut before writing.
    const redoneOverwrite = current === undefined && !claim.fresh;
    if (current?.stamp !== state.targetStamp && !redoneOverwrite) {
      // Written by an earlier attempt of this run (a crash before its state was saved)?
      if (!claim.fresh && current && current.modified >= claim.claimedAt - CLOCK_TOLERANCE_MS) {
        this.save(info, stamp, state.targetId, current.stamp, null);
        return { docId: info.id, outcome: 'p', sourcePath, targetId: state.targetId, message: 'recovered: written by an earlier attempt of this run' };
      }
      const policy = this.def.options.targetChanged ?? 'keep';
      if (policy === 'keep') {
        const now = current?.stamp ?? 'deleted at the target';
        return {
          docId: info.id,
          outcome: 'e',
          sourcePath,
          targetId: state.targetId,
          message: `TARGET_CHANGED: changed at the target since run ${runNumber(state.runId)} wrote it (target stamp ${now}, ours ${state.targetStamp ?? 'unknown'}; source stamp ${stamp}); kept (options.targetChanged keep)`,
        };
      }
      onExisting = policy === 'version' && current ? 'version' : 'overwrite';
    }
    // Known to be there (or deleted by an earlier attempt's overwrite): the copier looks it up instead of
    // writing blind, which would stream the content to a target that refuses it and read it again.
    const outcome = await this.copier.copy(info, claim, false, guard, { onExisting, existsAtTarget: current !== undefined });
    if (outcome?.outcome === 'p' && outcome.targetId !== undefined) {
      const after = await this.targetNow(outcome.targetId);
      this.save(info, stamp, outcome.targetId, after?.stamp ?? null, outcome.checksum ?? null);
      if (moved) outcome.message = outcome.message ? `${moved}; ${outcome.message}` : moved;
    }
    return outcome;
  }

  /** A document the job has no state of: a rename at a source whose ids are paths, or new. */
  private async fresh(info: DocItem, sourcePath: string, stamp: string, claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>, guard: CopyGuard): Promise<DocOutcome | undefined> {
    const renamed = await this.renameOf(info, stamp, guard);
    if (renamed) {
      const moved = await this.moveTarget(renamed, info);
      this.pending.set(info.id, { row: this.record(info, stamp, moved.targetId, moved.targetStamp, renamed.checksum), forget: renamed.docId });
      return {
        docId: info.id,
        outcome: 'p',
        sourcePath,
        targetId: moved.targetId,
        message: `moved from ${renamed.relPath} (renamed at the source: ${renamed.sourceStamp === stamp ? 'the same file' : 'same size, modification time and SHA-256'})`,
      };
    }
    const outcome = await this.copier.copy(info, claim, false, guard);
    // A document found at the target (onExisting skip: `d`) is adopted: later runs follow it like one the job wrote.
    if ((outcome?.outcome === 'p' || outcome?.outcome === 'd') && outcome.targetId !== undefined) {
      const after = await this.targetNow(outcome.targetId);
      this.save(info, stamp, outcome.targetId, after?.stamp ?? null, outcome.checksum ?? null);
    }
    return outcome;
  }

  /**
   * The state of a document gone from the source that this one is a rename of: same size and
   * modification time (a rename keeps both), the old id no longer at the source, and either the
   * same stamp (the filesystem's etag is inode, size and mtime in ns: the same file, renamed; nothing
   * read) or the same SHA-256 as recorded (hashed from the source, counted in bytesRead: a file
   * copied under its new name, or a source whose etag changes with the path). Undefined otherwise.
   */
  private async renameOf(info: DocItem, stamp: string, guard: CopyGuard): Promise<SyncStateRecord | undefined> {
    if (info.size === undefined || info.modified === undefined) return undefined;
    const candidates = await this.renames.candidates({ docId: info.id, stamp, size: info.size, modified: info.modified });
    let sha256: string | undefined;
    for (const candidate of candidates) {
      if (this.taken.has(candidate.docId) || (await this.stillAtSource(candidate.docId))) continue;
      if (candidate.sourceStamp !== stamp) {
        if (candidate.checksum === null) continue;
        sha256 ??= await this.hashSource(info.id, guard);
        if (sha256 !== candidate.checksum) continue;
      }
      this.taken.add(candidate.docId);
      return candidate;
    }
    return undefined;
  }

  private async stillAtSource(docId: string): Promise<boolean> {
    try {
      await this.source.getItem(docId);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  private async hashSource(id: string, guard: CopyGuard): Promise<string> {
    if (guard.cancelled) throw new Cancelled();
    const hash = createHash('sha256');
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done();
      },
    });
    await pipeline(guard.track(await this.source.openContent(id)), sink);
    return hash.digest('hex');
  }

  /**
   * Moves the target document of `state` to where `info` lies now (its folder made when missing).
   * A move done by an earlier attempt (the old target gone, a document at the new place) is taken as done.
   */
  private async moveTarget(state: SyncStateRecord, info: DocItem): Promise<SyncStateRecord> {
    const move = this.target.move;
    if (!move) throw new NotSupportedError('move', this.target.typeId);
    // Where the copier would write it: names fitted to the target's rules, as its first copy's were.
    const place = this.copier.targetPlace(info);
    const folderId = await this.folder(place.dir);
    let targetId: string;
    try {
      targetId = await move.moveItem(state.targetId, { folderId, fileName: place.name }, this.actor);
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      const there = await findId(this.target, place.dir, place.name);
      if (there === undefined) throw e;
      targetId = there;
    }
    const after = await this.targetNow(targetId);
    return { ...state, relPath: info.rel, targetId, targetStamp: after?.stamp ?? state.targetStamp };
  }

  /** The target document's stamp and modification time now; undefined when it is gone. */
  private async targetNow(targetId: string): Promise<{ stamp: string; modified: number } | undefined> {
    try {
      const item = await this.target.getItem(targetId);
      return { stamp: targetStamp(item), modified: item.modified?.getTime() ?? 0 };
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  private save(info: DocItem, stamp: string, targetId: string, targetStampNow: string | null, checksum: string | null): void {
    this.pending.set(info.id, { row: this.record(info, stamp, targetId, targetStampNow, checksum) });
  }

  /**
   * Writes the states of a batch of outcomes in one transaction (renames' old ids forgotten in it) and
   * answers the outcomes to record; never rejects: a failed write makes those documents errors
   * (written, but not remembered: the next run looks at them again).
   */
  async beforeOutcomes(batch: DocOutcome[]): Promise<DocOutcome[]> {
    const ready = batch.filter((o) => this.pending.has(o.docId)).map((o) => this.pending.get(o.docId)!);
    for (const o of batch) this.pending.delete(o.docId);
    if (ready.length === 0) return batch;
    const forget = ready.flatMap((p) => (p.forget ? [p.forget] : []));
    try {
      await this.states.saveSyncStates(this.jobId, ready.map((p) => p.row), Date.now(), forget);
      return batch;
    } catch (e) {
      const failed = new Set(ready.map((p) => p.row.docId));
      const message = `written, but its sync state was not recorded: ${errorMessage(e)}`;
      return batch.map((o) => (failed.has(o.docId) ? { ...o, outcome: 'e' as const, message } : o));
    } finally {
      for (const id of forget) this.taken.delete(id);
    }
  }

  private record(info: DocItem, stamp: string, targetId: string, targetStampNow: string | null, checksum: string | null): SyncStateRecord {
    return {
      docId: info.id,
      relPath: info.rel,
      sourceStamp: stamp,
      versionLabel: info.versionLabel ?? null,
      size: info.size ?? null,
      modified: info.modified ?? null,
      checksum,
      targetId,
      targetStamp: targetStampNow,
      runId: this.runId,
    };
  }

  /** A target folder's id, made when missing: the copier's, made once per run and process. */
  folder(folderPath: string): Promise<string> {
    return this.copier.ensureFolder(folderPath);
  }

}

function fromItem(item: DocItem, fresh: ItemInfo): DocItem {
  return {
    ...item,
    path: fresh.path,
    mimeType: fresh.mimeType,
    size: fresh.size,
    modified: fresh.modified?.getTime(),
    ...(fresh.etag ? { etag: fresh.etag } : {}),
    ...(fresh.versionLabel ? { versionLabel: fresh.versionLabel } : {}),
  };
}

/** `3_7` → 7. */
function runNumber(runId: string): string {
  return runId.slice(runId.lastIndexOf('_') + 1);
}
