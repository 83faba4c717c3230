import { lstatSync, type BigIntStats } from 'node:fs';
import { eventLoopBudget } from '@gateway/concurrency';
import type { ItemInfo } from '@gateway/connector-api';
import { allRealFolders } from './direct-copy';
import { documentItem } from './item-info';
import { latestVersion, type DocumentMeta } from './metadata-store';
import { decodeId, nameOf, parentOf } from './paths';
import type { RepositoryFiles } from './repository-files';

/** Documents described between two waits for the event loop (as a listing's lstats are). */
const DESCRIBE_BATCH = 256;

/**
 * getItems: getItem of many documents, each folder's records read with one query (as a listing page
 * reads its page's) and each folder above them checked once, where getItem makes a query and an lstat of
 * every folder per document (a copy job with a property mapping asks one per document). Each answer is
 * getItem's: the file lstat'ed, reached without a link, its record reconciled with it (currentMeta). Ids
 * getItem would answer otherwise (a version id, a folder, an error, a damaged record) are left out, so
 * that the caller's getItem answers them.
 */
export async function describeDocuments(files: RepositoryFiles, ids: readonly string[]): Promise<Map<string, ItemInfo>> {
  const byFolder = new Map<string, Array<{ id: string; rel: string }>>();
  for (const id of ids) {
    let decoded: ReturnType<typeof decodeId>;
    try {
      decoded = decodeId(id, 'id');
    } catch {
      continue;
    }
    if (decoded.version !== undefined || decoded.rel === '') continue;
    const folder = parentOf(decoded.rel);
    let docs = byFolder.get(folder);
    if (!docs) byFolder.set(folder, (docs = []));
    docs.push({ id, rel: decoded.rel });
  }
  const items = new Map<string, ItemInfo>();
  let described = 0;
  for (const docs of byFolder.values()) {
    if (!foldersReal(files, docs[0].rel)) continue;
    const records = files.store.recordTexts(parentOf(docs[0].rel), docs.map((d) => nameOf(d.rel)));
    for (const { id, rel } of docs) {
      if (++described % DESCRIBE_BATCH === 0) await eventLoopBudget.turn();
      const item = await describe(files, id, rel, records.get(nameOf(rel)));
      if (item) items.set(id, item);
    }
  }
  return items;
}

function foldersReal(files: RepositoryFiles, rel: string): boolean {
  try {
    return allRealFolders(files.foldersAbove(rel));
  } catch {
    return false;
  }
}

async function describe(files: RepositoryFiles, id: string, rel: string, text: string | undefined): Promise<ItemInfo | undefined> {
  const abs = files.abs(rel);
  let stat: BigIntStats;
  let stored: DocumentMeta | undefined;
  try {
    stat = lstatSync(abs, { bigint: true });
    if (!stat.isFile()) return undefined;
    stored = text === undefined ? undefined : files.store.parse(text, rel);
  } catch {
    return undefined;
  }
  try {
    const meta = await files.currentMeta({ rel, abs, stat }, stored);
    return documentItem({ id, rel, stat, meta, record: latestVersion(meta) });
  } catch {
    return undefined;
  }
}
