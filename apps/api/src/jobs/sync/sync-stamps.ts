import type { ItemInfo } from '@gateway/connector-api';
import type { DocItem } from '../task-plan';

/**
 * What identifies a source document's content for a sync job: the etag (or CMIS change token) where
 * the source lists one, else modification time and size with the version label. Unchanged: the
 * document is skipped without reading it.
 */
export function sourceStamp(item: Pick<DocItem, 'etag' | 'modified' | 'size' | 'versionLabel'>): string {
  if (item.etag) return `etag:${item.etag}`;
  return `mtime:${item.modified ?? '?'};size:${item.size ?? '?'}${item.versionLabel ? `;version:${item.versionLabel}` : ''}`;
}

/** The same of a target document, as getItem answers it: recorded after each write, compared before the next. */
export function targetStamp(item: ItemInfo): string {
  return sourceStamp({ etag: item.etag, modified: item.modified?.getTime(), size: item.size, versionLabel: item.versionLabel });
}
