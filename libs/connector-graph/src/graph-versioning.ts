import { InvalidArgumentError, type VersionInfo, type VersioningCapability } from '@gateway/connector-api';
import { checkId, splitVersion } from './drive-items';
import type { GraphConnector } from './graph.connector';

/** The versioning group: the drive item's versions. */
export class GraphVersioning implements VersioningCapability {
  constructor(private readonly connector: GraphConnector) {}

  async listVersions(id: string): Promise<VersionInfo[]> {
    checkId(id, 'id');
    const { item } = splitVersion(id);
    const info = this.connector.toItemInfo(await this.connector.fetchItem(item));
    if (info.baseType !== 'document') throw new InvalidArgumentError('id', `Invalid parameter 'id': '${info.path}' is a folder`);
    return (await this.connector.versionsOf(item, id)).map((v) => ({
      id: `${item};${v.id}`,
      name: info.name,
      label: v.id,
      size: v.size ?? 0,
      modified: new Date(v.lastModifiedDateTime ?? Date.now()),
      versionSeriesId: item,
    }));
  }
}
