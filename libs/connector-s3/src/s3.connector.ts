import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  S3Client,
  S3ServiceException,
  type HeadObjectCommandOutput,
  type ObjectIdentifier,
  type StorageClass,
} from '@aws-sdk/client-s3';
import { mapBounded } from '@gateway/concurrency';
import {
  ConflictError,
  NotFoundError,
  UpstreamError,
  UpstreamUnavailableError,
  type Actor,
  type ByteRange,
  type ConnectorDefinition,
  type ContentConnector,
  type ContentHashCapability,
  type ContentUpdateCapability,
  type FolderCapability,
  type MoveCapability,
  type FolderInfo,
  type FolderPage,
  type ItemInfo,
  type ListFolderOptions,
  type NamingRules,
  type NewFile,
  type PropertyUpdateCapability,
  type RepositoryDescription,
  type VersioningCapability,
  type VersionStampCapability,
} from '@gateway/connector-api';
import type { S3ConnectorParams } from './client';
import { MultipartWriter } from './multipart-writer';
import { S3ContentHash } from './s3-content-hash';
import {
  checkSegment,
  decodeCursor,
  decodeId,
  encodeCursor,
  encodeId,
  invalid,
  isFolderRel,
  MAX_KEY_BYTES,
  nameOf,
  parseFolderPath,
  repoPath,
} from './keys';
import { ObjectReader } from './object-reader';
import { applyChanges, CREATED_BY, encodeValue, gatewayField, MODIFIED_BY, parsePropertyChanges, propertiesOf } from './metadata';
import { S3ContentUpdate } from './s3-content-update';
import { mapS3Error } from './s3-errors';
import { S3Folders } from './s3-folders';
import { S3Moves } from './s3-moves';
import { S3PropertyUpdate } from './s3-properties';
import { s3NamingRules } from './naming-rules';
import { S3Versioning } from './s3-versioning';
import { CREATED_AT, MODIFIED_AT, S3VersionStamps, stampMetadata, stampedDate } from './s3-version-stamps';

export { mapS3Error } from './s3-errors';

const MAX_LIMIT = 10_000;
/** ListObjectsV2 and DeleteObjects take at most this many keys per call. */
const S3_PAGE = 1000;
const FOLDER_TYPE = 'folder';
/** HEADs in flight while a listing page is completed. */
const LISTING_HEADS = 16;

/**
 * A bucket (or a prefix of one) as a repository: keys are documents, key prefixes are folders
 * (with the conventional zero-byte `folder/` marker when made through the gateway). Nothing is kept
 * outside the bucket, so several gateway nodes can share it. Decisions in the lib's README.
 *
 * This class keeps the core operations and the key, HEAD, upload and delete helpers the groups
 * share; each capability group is a class of its own file (s3-<group>.ts) given this one.
 */
export class S3Connector implements ContentConnector {
  readonly id: string;
  readonly typeId = 's3';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;

  /** Only on a bucket with versioning on: there an update is a new version, as the spec means it. */
  readonly contentUpdate?: ContentUpdateCapability;
  readonly versioning?: VersioningCapability;
  readonly folders: Required<FolderCapability> = new S3Folders(this);
  readonly move: MoveCapability = new S3Moves(this);
  readonly propertyUpdate: PropertyUpdateCapability = new S3PropertyUpdate(this);
  readonly namingRules: NamingRules;
  /** The ETag as an MD5 of what S3 stored (s3-content-hash.ts). */
  readonly contentHash: ContentHashCapability = new S3ContentHash(this);
  /** On versioned buckets only, as the versions it stamps (a copy job writes stamps with copyVersions). */
  readonly versionStamps?: VersionStampCapability;
  /** Content GETs without the SDK, on plain-HTTP endpoints (raw-get-object.ts says why). */
  private readonly reads: ObjectReader;

  constructor(
    definition: ConnectorDefinition,
    readonly client: S3Client,
    readonly params: S3ConnectorParams,
    readonly versioned: boolean,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = {
      ...(params.endpoint ? { endpoint: params.endpoint } : {}),
      region: params.region,
      bucket: params.bucket,
      prefix: params.prefix,
      versioning: versioned,
    };
    this.namingRules = s3NamingRules(params.prefix);
    this.reads = new ObjectReader(client, params);
    if (versioned) {
      this.contentUpdate = new S3ContentUpdate(this);
      this.versioning = new S3Versioning(this);
      this.versionStamps = new S3VersionStamps();
    }
  }

  /** Whether the bucket has versioning on; a server without the call (S3Proxy) has none. */
  static async bucketVersioned(client: S3Client, bucket: string): Promise<boolean> {
    try {
      const answer = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
      return answer.Status === 'Enabled';
    } catch (e) {
      if (e instanceof S3ServiceException && (e.name === 'NotImplemented' || e.$metadata.httpStatusCode === 501)) return false;
      throw mapS3Error(e, bucket);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  async checkHealth(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.params.bucket }));
    } catch (e) {
      const mapped = mapS3Error(e, this.params.bucket);
      throw mapped instanceof NotFoundError ? new UpstreamUnavailableError(`Bucket '${this.params.bucket}' does not exist`) : mapped;
    }
  }

  async describeRepository(): Promise<RepositoryDescription> {
    return {
      repositoryId: this.id,
      repositoryName: this.params.bucket,
      repositoryDescription: this.description || `S3 bucket ${this.params.bucket}${this.params.prefix ? `, prefix ${this.params.prefix}` : ''}`,
      rootFolderId: encodeId(''),
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    return { folderId: encodeId(''), folderName: this.params.bucket, folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return Object.fromEntries(this.params.storageClasses.map((c) => [c, `Storage class ${c}`]));
  }

  // ---- reading ------------------------------------------------------------

  async getItem(id: string): Promise<ItemInfo> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel)) {
      await this.assertFolder(rel, id);
      return this.folderItem(rel);
    }
    const head = await this.head(rel, id, versionId);
    return this.documentItem(id, rel, head, versionId);
  }

  async openContent(id: string, range?: ByteRange): Promise<Readable> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel)) throw invalid('id', `'${id}' names a folder; a document is expected`);
    try {
      return await this.reads.open(this.params.bucket, this.key(rel), { versionId, range });
    } catch (e) {
      throw mapS3Error(e, id);
    }
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const folder = parseFolderPath(folderPath, 'folderPath');
    const rel = folder + checkSegment(fileName, 'fileName');
    this.checkKeyLength(rel, 'fileName');
    if (await this.exists(rel)) return encodeId(rel);
    if (await this.folderExists(`${rel}/`)) return encodeId(`${rel}/`);
    throw new NotFoundError('item', repoPath(rel));
  }

  async listFolder(folderId: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    const { rel, versionId } = decodeId(folderId, 'id');
    if (!isFolderRel(rel) || versionId !== undefined) {
      if (!(await this.exists(rel))) throw new NotFoundError('item', folderId);
      throw invalid('id', `'${folderId}' names a document, not a folder`);
    }
    const limit = options.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) throw invalid('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
    let token = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const items: ItemInfo[] = [];
    const prefix = this.key(rel);
    let sawAnything = false;
    // Each S3 page is taken whole, so its continuation token resumes exactly after the last item
    // returned; only the folder's own marker (always its first key) is dropped, so a page is
    // refilled from the next S3 page until it holds `limit` items.
    for (;;) {
      const want = limit === undefined ? S3_PAGE : Math.min(S3_PAGE, limit - items.length);
      let answer;
      try {
        answer = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.params.bucket, Prefix: prefix, Delimiter: '/', MaxKeys: want, ContinuationToken: token }),
        );
      } catch (e) {
        if (token !== undefined && e instanceof S3ServiceException && e.$metadata.httpStatusCode === 400) throw invalid('cursor', 'is not a cursor of this listing');
        throw mapS3Error(e, folderId);
      }
      const entries: Array<{ key: string; item?: ItemInfo }> = [];
      for (const p of answer.CommonPrefixes ?? []) if (p.Prefix) entries.push({ key: p.Prefix, item: this.folderItem(p.Prefix.slice(this.params.prefix.length)) });
      for (const o of answer.Contents ?? []) {
        if (!o.Key) continue;
        sawAnything = true;
        if (o.Key === prefix) continue; // the folder's own marker
        const childRel = o.Key.slice(this.params.prefix.length);
        entries.push({
          key: o.Key,
          item: {
            id: encodeId(childRel),
            name: nameOf(childRel),
            path: repoPath(childRel),
            baseType: 'document',
            typeId: o.StorageClass ?? 'STANDARD',
            size: o.Size ?? 0,
            modified: o.LastModified,
            created: o.LastModified,
            etag: o.ETag ? stripQuotes(o.ETag) : undefined,
          },
        });
      }
      if ((answer.CommonPrefixes ?? []).length > 0) sawAnything = true;
      // S3 answers keys and prefixes each sorted; one listing order for the client: by key, as S3 pages.
      entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      items.push(...(await this.withDetails(entries.map((e) => e.item!))));
      token = answer.IsTruncated ? answer.NextContinuationToken : undefined;
      if (token === undefined || (limit !== undefined && items.length >= limit)) break;
    }
    // S3Proxy leaves a folder's own marker out of a listing of its prefix: an empty answer is
    // settled by the marker itself.
    if (!sawAnything && rel !== '' && options.cursor === undefined && !(await this.exists(rel))) throw new NotFoundError('item', folderId);
    return { items, ...(token !== undefined && items.length > 0 ? { nextCursor: encodeCursor(token) } : {}) };
  }

  // ---- writing ------------------------------------------------------------

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    const { rel: folder, versionId } = decodeId(input.folderId, 'folderId');
    if (!isFolderRel(folder) || versionId !== undefined) throw invalid('folderId', `'${input.folderId}' names a document, not a folder`);
    const rel = folder + checkSegment(input.fileName, 'fileName');
    this.checkKeyLength(rel, 'fileName');
    // The properties written with the content (propertyUpdate.propertiesOnCreate), checked as updateProperties checks them.
    const properties = input.properties === undefined ? [] : parsePropertyChanges(input.properties);
    await this.assertFolder(folder, input.folderId);
    // Refused before reading a possibly large upload. S3 has no create-only write that every
    // compatible server honours, so two creators racing on one name may both succeed (last wins).
    if (await this.exists(rel)) throw alreadyExists(rel);
    if (await this.folderExists(`${rel}/`)) throw alreadyExists(rel);
    const user = encodeValue(actor.username);
    await this.upload(rel, input.content, {
      contentType: input.mimeType,
      storageClass: input.type,
      metadata: applyChanges({ [CREATED_BY]: user, [MODIFIED_BY]: user, ...stampMetadata(input.stamp) }, properties),
    });
    return encodeId(rel);
  }

  async deleteItem(id: string, allVersions: boolean, _actor: Actor): Promise<string> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel)) throw invalid('id', `'${id}' names a folder; folders are deleted by path`);
    const head = await this.head(rel, id, versionId);
    const key = this.key(rel);
    try {
      if (!this.versioned) {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.params.bucket, Key: key }));
      } else if (versionId !== undefined || allVersions === false) {
        // Only the latest (or the named) version goes, for good: the previous one becomes current.
        await this.client.send(new DeleteObjectCommand({ Bucket: this.params.bucket, Key: key, VersionId: versionId ?? head.VersionId }));
      } else {
        const versions = await this.allVersions(rel);
        await this.deleteKeys(versions.map((v) => ({ Key: key, VersionId: v.versionId })));
      }
    } catch (e) {
      throw mapS3Error(e, id);
    }
    return encodeId(rel);
  }

  // ---- shared with the group classes -------------------------------------

  key(rel: string): string {
    return this.params.prefix + rel;
  }

  checkKeyLength(rel: string, parameter: string): void {
    if (Buffer.byteLength(this.key(rel), 'utf8') + 1 > MAX_KEY_BYTES) throw invalid(parameter, `makes a key longer than S3's ${MAX_KEY_BYTES} bytes`);
  }

  /**
   * Streams `content` to the key (MultipartWriter): one PUT up to the multipart threshold, otherwise a
   * multipart upload of threshold-sized parts, `multipartConcurrency` in flight; memory stays at part
   * size × (concurrency + 1) whatever the object's size. On any failure (the client's stream broke, S3
   * refused a part) the multipart upload is aborted before this returns, so no parts are left behind.
   */
  async upload(rel: string, content: Readable, options: { contentType?: string; storageClass?: string; metadata: Record<string, string> }): Promise<void> {
    const storageClass = options.storageClass && options.storageClass !== 'STANDARD' ? (options.storageClass as StorageClass) : undefined;
    const writer = new MultipartWriter(
      this.client,
      {
        Bucket: this.params.bucket,
        Key: this.key(rel),
        ContentType: options.contentType ?? 'application/octet-stream',
        Metadata: options.metadata,
        ...(storageClass ? { StorageClass: storageClass } : {}),
      },
      { partBytes: this.params.multipartThresholdBytes, concurrency: this.params.multipartConcurrency },
    );
    try {
      await pipeline(content, writer);
    } catch (e) {
      // pipeline answers once it has destroyed the writer; the writer's abort of the upload ends at 'close'.
      if (!writer.closed) await new Promise((resolve) => writer.once('close', resolve));
      const streamError = (content as Readable & { errored?: Error | null }).errored;
      if (streamError) throw streamError;
      throw mapS3Error(e, repoPath(rel));
    }
  }

  async head(rel: string, identifier: string, versionId?: string): Promise<HeadObjectCommandOutput> {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.params.bucket, Key: this.key(rel), VersionId: versionId }));
    } catch (e) {
      throw mapS3Error(e, identifier);
    }
  }

  async exists(rel: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.params.bucket, Key: this.key(rel) }));
      return true;
    } catch (e) {
      const mapped = mapS3Error(e, repoPath(rel));
      if (mapped instanceof NotFoundError) return false;
      throw mapped;
    }
  }

  /** A folder exists when its marker or any key below it does; the root always does. */
  private async folderExists(rel: string): Promise<boolean> {
    if (rel === '') return true;
    if (await this.exists(rel)) return true;
    try {
      const answer = await this.client.send(new ListObjectsV2Command({ Bucket: this.params.bucket, Prefix: this.key(rel), MaxKeys: 1 }));
      return (answer.KeyCount ?? answer.Contents?.length ?? 0) > 0;
    } catch (e) {
      throw mapS3Error(e, repoPath(rel));
    }
  }

  async assertFolder(rel: string, identifier: string): Promise<void> {
    if (!(await this.folderExists(rel))) throw new NotFoundError('item', identifier);
  }

  /**
   * A listing of S3 gives key, size, date and ETag only; the creator, writer, content type and
   * properties live in each object's metadata, one HEAD away. Asked in parallel (bounded) unless
   * `listingDetails: false`; a document deleted meanwhile keeps its listed fields.
   */
  private async withDetails(items: ItemInfo[]): Promise<ItemInfo[]> {
    if (!this.params.listingDetails) return items;
    return mapBounded(items, LISTING_HEADS, async (item) => {
      if (item.baseType !== 'document') return item;
      try {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.params.bucket, Key: this.key(decodeId(item.id, 'id').rel) }));
        return this.documentItem(item.id, decodeId(item.id, 'id').rel, head);
      } catch (e) {
        if (mapS3Error(e, item.id) instanceof NotFoundError) return item;
        throw mapS3Error(e, item.id);
      }
    });
  }

  private folderItem(rel: string): ItemInfo {
    return { id: encodeId(rel), name: rel === '' ? this.params.bucket : nameOf(rel), path: repoPath(rel), baseType: 'folder', typeId: FOLDER_TYPE };
  }

  private documentItem(id: string, rel: string, head: HeadObjectCommandOutput, versionId?: string): ItemInfo {
    return {
      id,
      name: nameOf(rel),
      path: repoPath(rel),
      baseType: 'document',
      typeId: head.StorageClass ?? 'STANDARD',
      mimeType: head.ContentType,
      size: head.ContentLength ?? 0,
      // S3 keeps one date per object version: the last write (a properties update is a write too).
      // …unless a copy job kept the source's dates with the write (s3-version-stamps.ts).
      created: stampedDate(head.Metadata, CREATED_AT) ?? head.LastModified,
      modified: stampedDate(head.Metadata, MODIFIED_AT) ?? head.LastModified,
      createdBy: gatewayField(head.Metadata, CREATED_BY),
      modifiedBy: gatewayField(head.Metadata, MODIFIED_BY),
      checkedOut: false,
      versionSeriesId: encodeId(rel),
      ...(versionId !== undefined ? { versionLabel: versionId } : {}),
      etag: head.ETag ? stripQuotes(head.ETag) : undefined,
      properties: propertiesOf(head.Metadata),
    };
  }

  /** Every version and delete marker of one key, newest first. */
  async allVersions(rel: string): Promise<Array<{ versionId: string; size: number; modified: Date; deleteMarker: boolean }>> {
    const key = this.key(rel);
    const out: Array<{ versionId: string; size: number; modified: Date; deleteMarker: boolean }> = [];
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectVersionsCommand({ Bucket: this.params.bucket, Prefix: key, KeyMarker: keyMarker, VersionIdMarker: versionMarker }),
        );
        for (const v of page.Versions ?? []) if (v.Key === key && v.VersionId) out.push({ versionId: v.VersionId, size: v.Size ?? 0, modified: v.LastModified ?? new Date(0), deleteMarker: false });
        for (const m of page.DeleteMarkers ?? []) if (m.Key === key && m.VersionId) out.push({ versionId: m.VersionId, size: 0, modified: m.LastModified ?? new Date(0), deleteMarker: true });
        // Keys sort after their own prefix: once past `key`, nothing more of it follows.
        const last = page.NextKeyMarker;
        keyMarker = page.IsTruncated && last !== undefined && last <= key ? last : undefined;
        versionMarker = keyMarker !== undefined ? page.NextVersionIdMarker : undefined;
      } while (keyMarker !== undefined);
    } catch (e) {
      throw mapS3Error(e, repoPath(rel));
    }
    return out.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  }

  async deleteKeys(objects: ObjectIdentifier[]): Promise<void> {
    for (let i = 0; i < objects.length; i += S3_PAGE) {
      const batch = objects.slice(i, i + S3_PAGE);
      const answer = await this.client.send(new DeleteObjectsCommand({ Bucket: this.params.bucket, Delete: { Objects: batch, Quiet: true } }));
      const failed = answer.Errors ?? [];
      if (failed.length > 0) throw new UpstreamError(`S3 did not delete ${failed.length} object(s): ${failed[0].Code ?? ''} ${failed[0].Message ?? ''}`.trim());
    }
  }
}

function stripQuotes(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

function alreadyExists(rel: string): ConflictError {
  return new ConflictError(`'${repoPath(rel)}' already exists`, 'ALREADY_EXISTS', { path: repoPath(rel) });
}
