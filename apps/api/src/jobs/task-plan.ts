import { createHash } from 'node:crypto';
import type { FolderPage, ItemInfo } from '@gateway/connector-api';
import type { JobTaskRecord, RunPlanReader, TaskSpec } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';
import { SOURCE_NAME_PROPERTY } from './target-names';

/**
 * The task plan: how a run's work is cut into tasks and what a task carries. Shared by the
 * control service (a run's first tasks) and the executor (the tasks an enumeration finds).
 *
 * A task key is deterministic — the same folder page, the same batch of documents, always
 * gets the same key within a run — so a task redone after a crash or a stall inserts the
 * tasks it found again without duplicating them (the store ignores a key the run has).
 */

/** Documents listed per folder page. */
export const LIST_PAGE = 1000;
/**
 * Documents per docs task. A task's claim and its outcomes are each written in one transaction,
 * and a commit costs by the pages it dirties more than by its rows: at 500 a 10,000-document
 * job spends about half what it spent on the job database at 100
 * (docs/decisions/0012-job-tasks-of-500-records-on-copy-thread.md). A task redone after a crash
 * re-checks at most this many documents at the target.
 */
export const DOCS_PER_TASK = 500;
/** The first part of every listing (enum) task's key, and of no other's: the lanes of a queue are told apart by the key alone (a resume has only keys). */
const LISTING = 'e';
export const ROOT_TASK_KEY = `${LISTING}.root`;

/** Whether the task of this key lists a folder page (an enum task), for the embedded queue's listing lane. */
export function isListingKey(key: string): boolean {
  return key.startsWith(`${LISTING}.`);
}

export interface EnumPayload {
  /** Resolved from folderPath when absent (the root task). */
  folderId?: string;
  folderPath: string;
  /** Path of the folder relative to the job's source folder ('' for the folder itself). */
  rel: string;
  cursor?: string;
}

export interface DocItem {
  id: string;
  /** Relative to the job's source folder, '/' separated, e.g. 'sub/a.txt'. */
  rel: string;
  path?: string;
  mimeType?: string;
  size?: number;
  /** Modification time (epoch ms) as listed, for the modifiedAfter/modifiedBefore filters. */
  modified?: number;
  /** The name a copy job renamed it from (its `source_name` property, target-names.ts): a copy back restores it. */
  sourceName?: string;
  /** An entry the source cannot address (FolderPage.unaddressable), why: recorded skipped, never read. */
  unaddressable?: string;
  /** Sync jobs only (their stamps, sync/sync-stamps.ts): as listed, where the source lists them. */
  etag?: string;
  versionLabel?: string;
}

export interface DocsPayload {
  items: DocItem[];
  /** Run-errors: the items carry only id and rel; the rest is fetched by id. */
  fetch?: boolean;
}

/** `sweep`: an indexing run's last task, deleting from the index what the run did not list (document-indexer.ts). */
export type PlannedTask = { kind: 'enum'; payload: EnumPayload } | { kind: 'docs'; payload: DocsPayload } | { kind: 'sweep'; payload: Record<string, never> };

/** A start's only first task: list the job's source folder. */
export function rootTask(def: JobDefinition): TaskSpec {
  return enumTask(ROOT_TASK_KEY, { folderPath: def.source.folderPath, rel: '' });
}

export function docsTask(key: string, payload: DocsPayload): TaskSpec {
  return { key, kind: 'docs', payload: JSON.stringify(payload), documents: payload.items.length };
}

function enumTask(key: string, payload: EnumPayload): TaskSpec {
  return { key, kind: 'enum', payload: JSON.stringify(payload) };
}

/**
 * What one listed page of a folder turns into: a docs task per DOCS_PER_TASK documents,
 * an enum task per subfolder (when the job is recursive) and one for the next page.
 */
export function folderPageTasks(taskKey: string, listed: EnumPayload, folderId: string, page: FolderPage, recursive: boolean, stamps = false): TaskSpec[] {
  const tasks: TaskSpec[] = [];
  const docs: DocItem[] = [];
  for (const item of page.items) {
    const rel = listed.rel ? `${listed.rel}/${item.name}` : item.name;
    if (item.baseType === 'document') {
      docs.push(docItem(item, rel, stamps));
    } else if (recursive) {
      tasks.push(subfolderTask(item.id, item.path, rel));
    }
  }
  for (const entry of page.unaddressable ?? []) {
    const rel = listed.rel ? `${listed.rel}/${entry.name}` : entry.name;
    const what = entry.baseType === 'folder' ? `${entry.reason} (a folder: nothing in it is listed)` : entry.reason;
    docs.push({ id: hashKey('unaddressable', folderId, entry.name), rel, unaddressable: what });
  }
  for (let i = 0, k = 0; i < docs.length; i += DOCS_PER_TASK, k++) {
    tasks.push(docsTask(hashKey('d', taskKey, String(k)), { items: docs.slice(i, i + DOCS_PER_TASK) }));
  }
  if (page.nextCursor) {
    tasks.push(enumTask(hashKey(LISTING, folderId, page.nextCursor), { ...listed, folderId, cursor: page.nextCursor }));
  }
  return tasks;
}

/** The enum task listing a subfolder, keyed as a listing page keys it (a folder a sync run's change feed finds new: sync/change-feed-enumeration.ts). */
export function subfolderTask(folderId: string, folderPath: string, rel: string): TaskSpec {
  return enumTask(hashKey(LISTING, folderId), { folderId, folderPath, rel });
}

/** A listed document as a docs task carries it (a sync run's change feed too: sync/change-feed-enumeration.ts). */
export function docItem(item: ItemInfo, rel: string, stamps: boolean): DocItem {
  const sourceName = item.properties?.[SOURCE_NAME_PROPERTY] ?? undefined;
  const doc: DocItem = { id: item.id, rel, path: item.path, mimeType: item.mimeType, size: item.size, modified: item.modified?.getTime(), ...(sourceName ? { sourceName } : {}) };
  // A sync job's stamps come from the listing: an unchanged document is then skipped without a call to the source.
  if (stamps && item.etag) doc.etag = item.etag;
  if (stamps && item.versionLabel) doc.versionLabel = item.versionLabel;
  return doc;
}

/** A run-errors run's tasks: the previous run's failed documents, DOCS_PER_TASK a task, fetched again by id. */
export async function failedDocsTasks(previousRunId: string, reader: RunPlanReader): Promise<TaskSpec[]> {
  const tasks: TaskSpec[] = [];
  let after: string | undefined;
  for (let k = 0; ; k++) {
    const docs = await reader.failedDocs(previousRunId, after, DOCS_PER_TASK);
    if (docs.length === 0) return tasks;
    after = docs[docs.length - 1].docId;
    tasks.push(docsTask(`r.${k}`, { items: docs.map((d) => ({ id: d.docId, rel: d.relPath })), fetch: true }));
    if (docs.length < DOCS_PER_TASK) return tasks;
  }
}

/** A stored task's payload, typed by its kind. */
export function parseTask(task: Pick<JobTaskRecord, 'kind' | 'payload'>): PlannedTask {
  if (task.kind === 'enum') return { kind: 'enum', payload: JSON.parse(task.payload) as EnumPayload };
  if (task.kind === 'sweep') return { kind: 'sweep', payload: {} };
  return { kind: 'docs', payload: JSON.parse(task.payload) as DocsPayload };
}

function hashKey(prefix: string, ...parts: string[]): string {
  return `${prefix}.${createHash('sha1').update(parts.join('\n')).digest('hex')}`;
}
