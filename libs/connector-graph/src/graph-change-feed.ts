import { ChangeTokenExpiredError, InvalidArgumentError, UpstreamError, type ChangeFeedCapability, type ChangePage, type ItemChange } from '@gateway/connector-api';
import { encodePath, type DriveItem } from './drive-items';
import type { GraphConnector } from './graph.connector';

// What a change needs of an item (toItemInfo's fields; `deleted` marks a tombstone). No listItem fields:
// delta answers them only at a cost per item, and a caller asks getItem for custom properties.
const DELTA_SELECT = 'id,name,size,file,folder,root,deleted,parentReference,createdDateTime,lastModifiedDateTime,createdBy,lastModifiedBy,eTag,cTag,publication';
const TOKEN = /^[A-Za-z0-9_-]{1,4000}$/;

type DeltaItem = DriveItem & { deleted?: { state?: string } };

interface DeltaPage {
  value?: DeltaItem[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

/**
 * The `changeFeed` group over driveItem: delta on the drive's root (SharePoint and OneDrive for
 * Business offer it on the root only). A token is the service's nextLink or deltaLink, base64url, so a
 * pass resumes where the service said. Delta items carry no parentReference.path (a folder's rename
 * does not report its descendants), so each pass rebuilds paths from the folders it reads and, for a
 * parent it has not read, one GET of that folder (once per folder per pass, not per item).
 * 410 Gone (resyncRequired: the service dropped the token's history) is ChangeTokenExpiredError.
 */
export class GraphChangeFeed implements ChangeFeedCapability {
  constructor(private readonly connector: GraphConnector) {}

  async latestToken(): Promise<string> {
    const page = await this.read(`${await this.deltaUrl()}?token=latest`);
    const link = page['@odata.deltaLink'];
    if (!link) throw new UpstreamError('Microsoft Graph answered delta?token=latest without a deltaLink');
    return Buffer.from(link).toString('base64url');
  }

  async *changesSince(token: string): AsyncIterable<ChangePage> {
    let url = await this.linkOf(token);
    const paths = new FolderPaths(this.connector);
    for (;;) {
      const page = await this.read(url);
      if (!Array.isArray(page.value)) throw new UpstreamError('Microsoft Graph answered a delta page without value');
      const next = page['@odata.nextLink'] ?? page['@odata.deltaLink'];
      if (!next || !(await this.isDeltaLink(next))) throw new UpstreamError('Microsoft Graph answered a delta page without a nextLink or deltaLink of this drive');
      for (const item of page.value) if (!item.deleted && (item.folder !== undefined || item.root !== undefined)) paths.read(item);
      const changes: ItemChange[] = [];
      for (const item of page.value) {
        if (item.root !== undefined) continue;
        if (item.deleted) {
          paths.forget(item.id);
          changes.push({ kind: 'deleted', id: item.id });
          continue;
        }
        const parentPath = await paths.pathOf(item.parentReference?.id);
        // A parent gone since this page was written: the item went with it, as a later page says.
        if (parentPath === undefined) continue;
        const withPath: DriveItem = { ...item, parentReference: { ...item.parentReference, path: parentPath === '' ? '/drive/root:' : `/drive/root:/${encodePath(parentPath.split('/').filter(Boolean))}` } };
        changes.push({ kind: 'current', id: item.id, item: this.connector.toItemInfo(withPath) });
      }
      yield { changes, nextToken: Buffer.from(next).toString('base64url') };
      if (!page['@odata.nextLink']) return;
      url = this.withSelect(next);
    }
  }

  private async read(url: string): Promise<DeltaPage> {
    const res = await this.connector.http.json<DeltaPage & { error?: { code?: string; innerError?: { code?: string } } }>({ method: 'GET', url, accept: [410], errorContext: { parameter: 'token' } });
    if (res.status === 410) throw new ChangeTokenExpiredError('Microsoft Graph', res.data?.error?.innerError?.code ?? res.data?.error?.code);
    return res.data;
  }

  private async deltaUrl(): Promise<string> {
    const { driveId } = await this.connector.connect();
    return `${this.connector.params.graphUrl}/drives/${encodeURIComponent(driveId)}/root/delta`;
  }

  private withSelect(link: string): string {
    const url = new URL(link);
    if (!url.searchParams.has('$select')) url.searchParams.set('$select', DELTA_SELECT);
    if (!url.searchParams.has('$top')) url.searchParams.set('$top', String(this.connector.params.pageSize));
    return url.href;
  }

  /** The link a token of this connector holds; refused (naming `token`) when it is not one. */
  private async linkOf(token: string): Promise<string> {
    const refused = () => new InvalidArgumentError('token', "Invalid parameter 'token': not a change token this connector issued");
    if (typeof token !== 'string' || !TOKEN.test(token)) throw refused();
    const link = Buffer.from(token, 'base64url').toString('utf8');
    if (!(await this.isDeltaLink(link))) throw refused();
    return this.withSelect(link);
  }

  /** Whether `link` is a delta of this drive's root on the configured Graph (the service may drop a /sites prefix). */
  private async isDeltaLink(link: string): Promise<boolean> {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      return false;
    }
    const { driveId } = await this.connector.connect();
    const graph = new URL(this.connector.params.graphUrl);
    return url.origin === graph.origin && url.pathname.startsWith(`${graph.pathname}/`) && url.pathname.endsWith(`/drives/${encodeURIComponent(driveId)}/root/delta`);
  }
}

/** Folder paths within one pass: those the pass read, else one GET per folder. */
class FolderPaths {
  private readonly seen = new Map<string, { name: string; parentId?: string; root: boolean }>();
  private readonly fetched = new Map<string, string | undefined>();

  constructor(private readonly connector: GraphConnector) {}

  read(folder: DriveItem): void {
    this.seen.set(folder.id, { name: folder.name, parentId: folder.parentReference?.id, root: folder.root !== undefined });
  }

  forget(id: string): void {
    this.seen.delete(id);
    this.fetched.set(id, undefined);
  }

  /** '' for the root, '/a/b' for a folder; undefined when the folder is gone. */
  async pathOf(id: string | undefined, depth = 0): Promise<string | undefined> {
    if (id === undefined) return undefined;
    const { rootId } = await this.connector.connect();
    if (id === rootId) return '';
    if (depth > 400) throw new UpstreamError('Microsoft Graph answered a folder hierarchy with a cycle');
    const seen = this.seen.get(id);
    if (seen) {
      if (seen.root) return '';
      const parent = await this.pathOf(seen.parentId, depth + 1);
      return parent === undefined ? undefined : `${parent}/${seen.name}`;
    }
    if (!this.fetched.has(id)) this.fetched.set(id, await this.fetch(id));
    return this.fetched.get(id);
  }

  private async fetch(id: string): Promise<string | undefined> {
    const res = await this.connector.http.json<DriveItem>({ method: 'GET', url: `${this.connector.params.graphUrl}${await this.connector.itemPath(id)}?$select=id,name,root,parentReference`, accept: [404] });
    if (res.status === 404) return undefined;
    const info = this.connector.toItemInfo(res.data);
    return info.path === '/' ? '' : info.path;
  }
}
