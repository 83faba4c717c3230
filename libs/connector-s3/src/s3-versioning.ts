import type { VersionInfo, VersioningCapability } from '@gateway/connector-api';
import { decodeId, encodeId, invalid, isFolderRel, nameOf } from './keys';
import type { S3Connector } from './s3.connector';

/** The versioning group (buckets with versioning on): the versions of a key, newest first. */
export class S3Versioning implements VersioningCapability {
  constructor(private readonly connector: S3Connector) {}

  async listVersions(id: string): Promise<VersionInfo[]> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel)) throw invalid('id', `'${id}' names a folder; a document is expected`);
    await this.connector.head(rel, id, versionId);
    const versions = await this.connector.allVersions(rel);
    return versions
      .filter((v) => !v.deleteMarker)
      .map((v, i, all) => ({
        id: encodeId(rel, v.versionId),
        name: nameOf(rel),
        label: `${all.length - i}.0`,
        size: v.size,
        modified: v.modified,
        versionSeriesId: encodeId(rel),
      }));
  }
}
