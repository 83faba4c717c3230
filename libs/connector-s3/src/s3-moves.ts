import { CopyObjectCommand } from '@aws-sdk/client-s3';
import { ConflictError, UpstreamError, type Actor, type MoveCapability, type MoveDestination } from '@gateway/connector-api';
import { checkSegment, decodeId, encodeId, invalid, isFolderRel, repoPath } from './keys';
import { mapS3Error } from './s3-errors';
import type { S3Connector } from './s3.connector';

/** CopyObject copies at most 5 GiB in one request (larger objects need UploadPartCopy, not done here). */
const MAX_SINGLE_COPY_BYTES = 5 * 1024 ** 3;

/**
 * The move group: S3 has no rename, so CopyObject to the new key (metadata copied) then the old key deleted
 * with its versions (the connector's deleteItem). The id is the key: it changes. A key taken at the
 * destination is refused before anything is copied.
 */
export class S3Moves implements MoveCapability {
  constructor(private readonly connector: S3Connector) {}

  async moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel) || versionId !== undefined) throw invalid('id', `'${id}' is not a document (a current document is expected)`);
    const { rel: folder, versionId: folderVersion } = decodeId(to.folderId, 'folderId');
    if (!isFolderRel(folder) || folderVersion !== undefined) throw invalid('folderId', `'${to.folderId}' names a document, not a folder`);
    const newRel = folder + checkSegment(to.fileName, 'fileName');
    if (newRel === rel) return id;
    this.connector.checkKeyLength(newRel, 'fileName');
    const head = await this.connector.head(rel, id);
    await this.connector.assertFolder(folder, to.folderId);
    if ((await this.connector.exists(newRel)) || (await this.connector.exists(`${newRel}/`))) {
      throw new ConflictError(`'${repoPath(newRel)}' already exists`, 'ALREADY_EXISTS', { path: repoPath(newRel) });
    }
    if ((head.ContentLength ?? 0) > MAX_SINGLE_COPY_BYTES) throw new UpstreamError(`'${repoPath(rel)}' is larger than the 5 GiB S3 copies in one request; it cannot be moved`);
    const bucket = this.connector.params.bucket;
    try {
      await this.connector.client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: this.connector.key(newRel),
          CopySource: `${bucket}/${this.connector.key(rel).split('/').map(encodeURIComponent).join('/')}`,
          MetadataDirective: 'COPY',
        }),
      );
    } catch (e) {
      throw mapS3Error(e, id);
    }
    await this.connector.deleteItem(id, true, actor);
    return encodeId(newRel);
  }
}
