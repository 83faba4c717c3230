import { ListObjectsV2Command, ListObjectVersionsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ConflictError, type Actor, type FolderCapability } from '@gateway/connector-api';
import { ancestors, encodeId, invalid, parseFolderPath, repoPath } from './keys';
import { mapS3Error } from './s3-errors';
import type { S3Connector } from './s3.connector';

/** The folders group: folder markers made by path, and a folder deleted with every key (and version) below it. */
export class S3Folders implements Required<FolderCapability> {
  constructor(private readonly connector: S3Connector) {}

  async createFolder(folderPath: string, _actor: Actor): Promise<string> {
    if (folderPath === '') throw invalid('path', 'must be the absolute path of a folder');
    const rel = parseFolderPath(folderPath, 'path');
    if (rel === '') return encodeId('');
    this.connector.checkKeyLength(rel, 'path');
    for (const level of [...ancestors(rel), rel]) {
      const asDocument = level.slice(0, -1);
      if (await this.connector.exists(asDocument)) {
        throw new ConflictError(`'${repoPath(asDocument)}' exists and is not a folder`, 'ALREADY_EXISTS', { path: repoPath(asDocument) });
      }
      if (await this.connector.exists(level)) continue;
      try {
        await this.connector.client.send(new PutObjectCommand({ Bucket: this.connector.params.bucket, Key: this.connector.key(level), Body: new Uint8Array(0), ContentLength: 0, ContentType: 'application/x-directory' }));
      } catch (e) {
        throw mapS3Error(e, repoPath(level));
      }
    }
    return encodeId(rel);
  }

  async deleteFolder(folderPath: string): Promise<string> {
    const rel = parseFolderPath(folderPath, 'path');
    if (rel === '') throw invalid('path', 'the root folder cannot be deleted');
    if (await this.connector.exists(rel.slice(0, -1))) throw invalid('path', `'${repoPath(rel)}' is a document; documents are deleted by id`);
    await this.connector.assertFolder(rel, repoPath(rel));
    const prefix = this.connector.key(rel);
    try {
      if (this.connector.versioned) {
        let keyMarker: string | undefined;
        let versionMarker: string | undefined;
        do {
          const page = await this.connector.client.send(
            new ListObjectVersionsCommand({ Bucket: this.connector.params.bucket, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionMarker }),
          );
          const doomed = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => ({ Key: v.Key!, VersionId: v.VersionId }));
          await this.connector.deleteKeys(doomed);
          keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
          versionMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
        } while (keyMarker !== undefined);
      } else {
        let token: string | undefined;
        do {
          const page = await this.connector.client.send(new ListObjectsV2Command({ Bucket: this.connector.params.bucket, Prefix: prefix, ContinuationToken: token }));
          await this.connector.deleteKeys((page.Contents ?? []).map((o) => ({ Key: o.Key! })));
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token !== undefined);
        // Deepest markers last: S3Proxy's filesystem backend keeps markers as directories, and lists neither a
        // folder's own marker under its prefix nor removes a directory that still has entries.
        await this.connector.deleteKeys([{ Key: prefix }]);
      }
    } catch (e) {
      throw mapS3Error(e, repoPath(rel));
    }
    return encodeId(rel);
  }
}
