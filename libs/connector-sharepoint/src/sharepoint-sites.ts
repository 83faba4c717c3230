import { InvalidArgumentError, type SiteCapability } from '@gateway/connector-api';
import { ACCEPT, expanded, query, readCollection, readEntity, str, type Json } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** The sites group: the configured site, its subsites and their document libraries. */
export class SharePointSites implements SiteCapability {
  constructor(private readonly connector: SharePointConnector) {}

  private async webAt(siteId: string): Promise<string> {
    // A site id is the web's server-relative URL: it must lie below the configured site's origin.
    if (typeof siteId !== 'string' || !siteId.startsWith('/') || siteId.includes('..') || /[?#]/.test(siteId)) {
      throw new InvalidArgumentError('siteId', "Invalid parameter 'siteId': the server-relative URL of a site, e.g. /sites/team");
    }
    return `${new URL(this.connector.params.siteUrl).origin}${siteId.replace(/\/+$/, '')}/_api`;
  }

  private siteOf(web: Json): Record<string, unknown> {
    return { id: str(web, 'ServerRelativeUrl'), name: str(web, 'Title'), url: str(web, 'Url'), description: str(web, 'Description') ?? '' };
  }

  async getAllSites(): Promise<unknown[]> {
    const web = readEntity(await this.connector.getJson(`web${query({ $select: 'Title,ServerRelativeUrl,Url,Description' })}`));
    return [this.siteOf(web)];
  }

  async getSubSites(siteId: string): Promise<unknown[]> {
    const api = await this.webAt(siteId);
    const { data } = await this.connector.http.json({ method: 'GET', url: `${api}/web/webs${query({ $select: 'Title,ServerRelativeUrl,Url,Description' })}`, headers: { accept: ACCEPT }, errorContext: { id: siteId } });
    return readCollection(data).items.map((w) => this.siteOf(w));
  }

  async getLibrariesForSite(siteId: string): Promise<unknown[]> {
    const api = await this.webAt(siteId);
    const { data } = await this.connector.http.json({ method: 'GET', url: `${api}/web/lists${query({ $select: 'Id,Title,BaseTemplate,Hidden', $expand: 'RootFolder' })}`, headers: { accept: ACCEPT }, errorContext: { id: siteId } });
    return readCollection(data)
      .items.filter((l) => Number(l.BaseTemplate) === 101 && l.Hidden !== true)
      .map((l) => ({ id: str(l, 'Id'), name: str(l, 'Title'), path: str((expanded(l, 'RootFolder') as Json | undefined) ?? {}, 'ServerRelativeUrl') }));
  }
}
