import type { SiteCapability } from '@gateway/connector-api';
import type { GraphConnector } from './graph.connector';

/** The sites group: sites found by search, their subsites and their drives. */
export class GraphSites implements SiteCapability {
  constructor(private readonly connector: GraphConnector) {}

  private static site(s: Record<string, unknown>): Record<string, unknown> {
    return { id: s.id, name: s.name, displayName: s.displayName, webUrl: s.webUrl };
  }

  async getAllSites(): Promise<unknown[]> {
    const res = await this.connector.call<{ value: Array<Record<string, unknown>> }>({ method: 'GET', path: '/sites?search=*' });
    return res.data.value.map((s) => GraphSites.site(s));
  }

  async getSubSites(siteId: string): Promise<unknown[]> {
    const res = await this.connector.call<{ value: Array<Record<string, unknown>> }>({ method: 'GET', path: `/sites/${encodeURIComponent(siteId)}/sites`, errorContext: { id: siteId, parameter: 'siteId' } });
    return res.data.value.map((s) => GraphSites.site(s));
  }

  async getLibrariesForSite(siteId: string): Promise<unknown[]> {
    const res = await this.connector.call<{ value: Array<Record<string, unknown>> }>({ method: 'GET', path: `/sites/${encodeURIComponent(siteId)}/drives`, errorContext: { id: siteId, parameter: 'siteId' } });
    return res.data.value.map((d) => ({ id: d.id, name: d.name, webUrl: d.webUrl }));
  }
}
