import { NotFoundError, type VersionInfo, type VersioningCapability } from '@gateway/connector-api';
import type { CmisConnector } from './cmis.connector';
import { checkId } from './input';
import { splitVersion, toVersionInfo, versionLabelOf } from './item-info';

/** The versioning group: a document's versions, newest first. */
export class CmisVersioning implements VersioningCapability {
  /** Each version is an object of its own, with its own properties; updateProperties of a document changes its latest version in place. */
  readonly versionProperties = true;

  constructor(private readonly connector: CmisConnector) {}

  async listVersions(id: string): Promise<VersionInfo[]> {
    checkId(id, 'id');
    const version = splitVersion(id);
    const versions = await this.connector.versionsOf(version?.series ?? id, id);
    if (version && !versions.some((p) => versionLabelOf(p) === version.label)) throw new NotFoundError('item', id);
    return versions.map(toVersionInfo);
  }
}
