import { createHash } from 'node:crypto';
import * as path from 'node:path/posix';
import { ChangeTokenExpiredError, type ChangeFeedCapability, type ContentConnector, type FolderPage, type ItemChange, type ItemInfo } from '@gateway/connector-api';
import type { FeedFolder, SyncFeedStore, SyncStateRecord, TaskSpec } from '@gateway/persistence';
import type { JobDefinition } from '../../config/job-definition.dto';
import { resolveFolderId } from '../document-copier';
import type { JobStore } from '../job-store';
import { DOCS_PER_TASK, docItem, docsTask, subfolderTask, type DocItem, type EnumPayload } from '../task-plan';

/** The pseudo-document whose `p` record says a run listed everything because its token was refused. */
export const FEED_FALLBACK_DOC = 'change-feed:token';

/**
 * A sync run's enumeration through the source's change feed (issue 36 §3, decision 0096), for sources
 * with the `changeFeed` group. The run's root task asks `enumerate` first:
 *
 * - no token of a COMPLETED earlier run of this source: the run takes a token (before it lists
 *   anything: what changes during the listing is read again by the next run) and lists every folder
 *   as any run does (`false`), recording the folders it finds (`listed`) for later renames;
 * - a token: the run takes the next one first (again before reading: a document changed after this
 *   run copied it comes again next time), then reads the changes since the earlier token. Documents
 *   reported current inside the job's folder become docs tasks, as a listing's would (the sync copier
 *   skips, copies or moves them); those reported deleted, or moved out of the folder, are marked gone
 *   for the deletions task (`gone`: the job's `deletions` option, once the run is complete); unchanged
 *   documents are not enumerated at all. A folder renamed or moved is reported as itself only: the
 *   documents the job wrote below its old path become docs tasks at the new one, fetched by id.
 * - the source refuses the token (ChangeTokenExpiredError: Graph's 410, SharePoint's trimmed change
 *   log): the run lists everything (`false`), recorded as a `p` record of FEED_FALLBACK_DOC.
 *
 * The token a run took is used by the next run only if this one COMPLETED (SyncFeedStore.lastToken):
 * a failed, aborted or killed run leaves the older one, and its changes are read again. A resumed run
 * reads its pass again from the start: task keys come from their documents, so the pages read before
 * add nothing twice, and the run's claims skip what it did.
 */
export class FeedEnumeration {
  /** The job's folder as the source spells it ('' for its root), found before a pass is read. */
  private folder = '';

  constructor(
    private readonly def: JobDefinition,
    private readonly source: ContentConnector,
    private readonly feed: ChangeFeedCapability,
    private readonly store: SyncFeedStore,
    private readonly repo: JobStore,
    private readonly jobId: number,
    private readonly runId: string,
    /** Whether the run's gone documents are deleted or archived (options.deletions other than keep). */
    private readonly sweeps: boolean,
  ) {}

  private get sourceKey(): string {
    return `${this.def.source.connectorId}:${this.def.source.folderPath}`;
  }

  /** The root task: true when the change feed enumerated the run, false when it lists every folder. */
  async enumerate(queue: (tasks: TaskSpec[]) => Promise<void>): Promise<boolean> {
    let row = await this.store.runFeed(this.runId);
    if (!row) {
      const since = await this.store.lastToken(this.jobId, this.sourceKey);
      const token = await this.feed.latestToken();
      row = await this.store.beginRun(this.jobId, this.runId, { source: this.sourceKey, token, mode: since ? 'feed' : 'full', since: since ?? null }, Date.now());
    }
    if (row.mode === 'full' || row.since === null) return false;
    // The feed's paths are the source's spelling (Graph and SharePoint match paths without case): a
    // configured spelling compared as it is would find every document outside the folder, and delete it.
    this.folder = await this.folderAtSource();
    try {
      for await (const { changes } of this.feed.changesSince(row.since)) await this.apply(changes, queue);
      return true;
    } catch (e) {
      if (!(e instanceof ChangeTokenExpiredError)) throw e;
      await this.recordFallback(e.message);
      // The run's own token was taken before anything is listed: it stays the next run's.
      await this.store.listAgain(this.runId, row.token);
      return false;
    }
  }

  /** A page a full listing read: its subfolders, for the renames later runs read in the feed. */
  async listed(listed: EnumPayload, page: FolderPage): Promise<void> {
    if (!this.def.source.recursive) return;
    const folders = page.items.filter((i) => i.baseType === 'folder').map((i) => ({ folderId: i.id, relPath: listed.rel ? `${listed.rel}/${i.name}` : i.name }));
    await this.store.saveFolders(this.jobId, this.runId, folders);
  }

  /** The documents the run's pass marked gone that the job still has (the deletions task: sync-sweep.ts). */
  gone(limit: number): Promise<SyncStateRecord[]> {
    return this.store.goneStates(this.jobId, this.runId, limit);
  }

  /** Whether this run read the feed (its deletions are the pass's) rather than listing (its deletions are what it did not list). */
  async readsFeed(): Promise<boolean> {
    return (await this.store.runFeed(this.runId))?.mode === 'feed';
  }

  /** One page of changes: docs tasks queued and gone documents marked before the page's folders are saved. */
  private async apply(changes: readonly ItemChange[], queue: (tasks: TaskSpec[]) => Promise<void>): Promise<void> {
    const docs = new Map<string, DocItem>();
    const gone = new Set<string>();
    const outOfScope: string[] = [];
    const folders: Array<{ id: string; rel: string | undefined; path?: string }> = [];
    const deleted: string[] = [];
    for (const change of changes) {
      if (change.kind === 'deleted') {
        deleted.push(change.id);
        continue;
      }
      const rel = this.relOf(change.item);
      if (change.item.baseType === 'folder') {
        if (this.def.source.recursive && rel !== '') folders.push({ id: change.id, rel, path: change.item.path });
      } else if (rel === undefined || rel === '') outOfScope.push(change.id);
      else docs.set(change.id, docItem(change.item, rel, true));
    }
    // Documents moved out of the job's folder, or deleted, that the job wrote: gone. A deleted id may be a folder's.
    for (const id of await this.store.written(this.jobId, [...outOfScope, ...deleted])) gone.add(id);
    const saved: FeedFolder[] = [];
    const known = await this.store.folders(this.jobId, this.runId, [...folders.map((f) => f.id), ...deleted]);
    const moves: DocItem[] = [];
    const listings: TaskSpec[] = [];
    for (const { id, rel, path: folderPath } of [...folders, ...deleted.map((id) => ({ id, rel: undefined, path: undefined }))]) {
      const before = known.get(id);
      if (before === undefined && rel === undefined) continue;
      saved.push({ folderId: id, relPath: rel ?? null });
      // New to the job (created, or moved in from outside its folder: the feed reports the folder only): listed once.
      if ((before === undefined || before === null) && rel !== undefined && folderPath !== undefined) listings.push(subfolderTask(id, folderPath, rel));
      if (before === undefined || before === null || before === rel) continue;
      // Renamed, moved, moved out or deleted: what the job wrote below it, and the folders below it, follow.
      for (const state of await this.store.statesUnder(this.jobId, before)) {
        if (docs.has(state.docId) || gone.has(state.docId)) continue;
        if (rel === undefined) gone.add(state.docId);
        else moves.push({ id: state.docId, rel: `${rel}${state.relPath.slice(before.length)}` });
      }
      for (const below of await this.store.foldersUnder(this.jobId, this.runId, before)) {
        saved.push({ folderId: below.folderId, relPath: rel === undefined ? null : `${rel}${below.relPath!.slice(before.length)}` });
      }
    }
    const tasks = [...this.docsTasks('d', [...docs.values()], false), ...this.docsTasks('m', moves, true), ...listings];
    if (tasks.length > 0) await queue(tasks);
    if (this.sweeps) await this.store.markGone(this.runId, [...gone]);
    // Saved last: a crash before reads this page again with the folders' old paths.
    await this.store.saveFolders(this.jobId, this.runId, saved);
  }

  /** Docs tasks of DOCS_PER_TASK documents; keyed by their documents, so a page read again adds nothing. Moves are fetched by id (their paths changed with a folder). */
  private docsTasks(kind: string, items: DocItem[], fetch: boolean): TaskSpec[] {
    const tasks: TaskSpec[] = [];
    for (let i = 0; i < items.length; i += DOCS_PER_TASK) {
      const part = items.slice(i, i + DOCS_PER_TASK);
      const key = `f${kind}.${createHash('sha1').update(JSON.stringify(part)).digest('hex')}`;
      tasks.push(docsTask(key, fetch ? { items: part, fetch: true } : { items: part }));
    }
    return tasks;
  }

  private async folderAtSource(): Promise<string> {
    const configured = this.def.source.folderPath;
    if (configured === '/' || configured === '') return '';
    return (await this.source.getItem(await resolveFolderId(this.source, configured))).path.replace(/\/+$/, '');
  }

  /** The item's path below the job's folder: '' for the folder itself, undefined outside it (or below it, for a job that is not recursive). */
  private relOf(item: ItemInfo): string | undefined {
    const folder = this.folder;
    if (item.path === folder || (folder === '' && item.path === '/')) return '';
    if (!item.path.startsWith(`${folder}/`)) return undefined;
    const rel = item.path.slice(folder.length + 1);
    if (!this.def.source.recursive && path.dirname(rel) !== '.') return undefined;
    return rel;
  }

  private async recordFallback(reason: string): Promise<void> {
    const sourcePath = this.def.source.folderPath;
    const message = `change feed not used: ${reason}; every folder listed instead, and the next run reads the changes from this run's token`;
    await this.repo.transition(this.runId, async (locked) => {
      await locked.claimDocs(this.jobId, [{ docId: FEED_FALLBACK_DOC, relPath: '', sourcePath }], Date.now());
      await locked.finishDocs(this.jobId, [{ docId: FEED_FALLBACK_DOC, outcome: 'p', sourcePath, message }], Date.now());
    });
  }
}
