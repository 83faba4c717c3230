import { CopyObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { ConflictError, type Actor, type PropertyUpdateCapability } from '@gateway/connector-api';
import { decodeId, encodeId, invalid, isFolderRel, repoPath } from './keys';
import { applyChanges, MODIFIED_BY, parsePropertyChanges } from './metadata';
import { mapS3Error } from './s3-errors';
import type { S3Connector } from './s3.connector';

/** The propertyUpdate group: properties kept in the object's user metadata. */
export class S3PropertyUpdate implements PropertyUpdateCapability {
  /** createFile puts NewFile.properties in the upload's own user metadata (one PUT, no copy onto itself after). */
  readonly propertiesOnCreate = true;

  constructor(private readonly connector: S3Connector) {}

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    const changes = parsePropertyChanges(properties);
    const { rel, versionId } = decodeId(id, 'fileId');
    if (isFolderRel(rel) || versionId !== undefined) throw invalid('fileId', 'must name a document (not a folder or an old version)');
    const head = await this.connector.head(rel, id);
    const metadata = applyChanges(head.Metadata, [...changes, [MODIFIED_BY, actor.username]]);
    const key = this.connector.key(rel);
    try {
      // S3 metadata is immutable: a copy of the object onto itself with new metadata replaces it
      // (server-side, no bytes through the gateway). IfMatch-style CopySourceIfMatch keeps a
      // concurrent content update from being overwritten with the old bytes.
      await this.connector.client.send(
        new CopyObjectCommand({
          Bucket: this.connector.params.bucket,
          Key: key,
          CopySource: `${this.connector.params.bucket}/${encodeURIComponent(key).replace(/%2F/g, '/')}`,
          CopySourceIfMatch: head.ETag,
          MetadataDirective: 'REPLACE',
          Metadata: metadata,
          ContentType: head.ContentType,
          ...(head.StorageClass && head.StorageClass !== 'STANDARD' ? { StorageClass: head.StorageClass } : {}),
        }),
      );
    } catch (e) {
      if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 412) {
        throw new ConflictError(`'${repoPath(rel)}' changed while its properties were updated; try again`, 'CONFLICT', { path: repoPath(rel) });
      }
      throw mapS3Error(e, id);
    }
    return encodeId(rel);
  }
}
