import type { Actor, ContentUpdateCapability, NewContent } from '@gateway/connector-api';
import { decodeId, encodeId, invalid, isFolderRel } from './keys';
import { encodeValue, MODIFIED_BY } from './metadata';
import { MODIFIED_AT, stampMetadata } from './s3-version-stamps';
import type { S3Connector } from './s3.connector';

/** The contentUpdate group (buckets with versioning on: an update is a new version, as the spec means it). */
export class S3ContentUpdate implements ContentUpdateCapability {
  constructor(private readonly connector: S3Connector) {}

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    const { rel, versionId } = decodeId(id, 'fileId');
    if (isFolderRel(rel) || versionId !== undefined) throw invalid('fileId', 'must name a document (not a folder or an old version)');
    const head = await this.connector.head(rel, id);
    await this.connector.upload(rel, input.content, {
      contentType: input.mimeType ?? head.ContentType,
      storageClass: head.StorageClass,
      // Properties belong to the document, not to one version of its content; a kept modification date to the version it was kept for.
      metadata: { ...withoutKey(head.Metadata ?? {}, MODIFIED_AT), [MODIFIED_BY]: encodeValue(actor.username), ...stampMetadata(input.stamp) },
    });
    return encodeId(rel);
  }
}

function withoutKey(metadata: Record<string, string>, key: string): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).filter(([k]) => k.toLowerCase() !== key));
}
