import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Readable, Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { NotFoundError, RangeNotSatisfiableError, UpstreamUnavailableError, type ByteRange } from '@gateway/connector-api';
import { createS3Client, mapS3Error, MultipartWriter, ObjectReader } from '@gateway/connector-s3';
import type { UserFilesStoreConfig } from '../config/user-files-store';
import { FILE_ID, UserFileStore, type StoredFileStat } from './user-file.store';

type S3StoreConfig = Extract<UserFilesStoreConfig, { kind: 's3' }>;

/**
 * User files as objects `<prefix><id>` of one bucket, so an export built by one gateway node can be
 * downloaded through any other. An export streams from the zip builder straight into a multipart
 * upload (parts of `partBytes`, `partConcurrency` in flight: memory is bounded, no temporary file):
 * the object appears only when the upload completes, so a partial file is the unfinished upload
 * itself, and discarding one (a stop, a failure, a shutdown) aborts it, leaving no parts behind.
 */
export class S3UserFileStore extends UserFileStore implements OnApplicationShutdown {
  private readonly logger = new Logger(S3UserFileStore.name);
  readonly client: S3Client;
  private readonly reads: ObjectReader;

  constructor(readonly config: S3StoreConfig) {
    super();
    this.client = createS3Client(config.connection);
    this.reads = new ObjectReader(this.client, config.connection);
  }

  async ensureDir(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.config.bucket }));
    } catch (e) {
      const mapped = mapS3Error(e, this.config.bucket);
      throw mapped instanceof NotFoundError ? new UpstreamUnavailableError(`User-file bucket '${this.config.bucket}' does not exist`) : mapped;
    }
  }

  /** The zip builder's output, streamed into the object (see MultipartWriter: a destroyed writer aborts its upload). */
  createPartial(id: string): Writable {
    return new MultipartWriter(
      this.client,
      { Bucket: this.config.bucket, Key: this.key(id), ContentType: 'application/zip' },
      { partBytes: this.config.partBytes, concurrency: this.config.partConcurrency },
    );
  }

  async commit(id: string): Promise<number> {
    // The upload completed when the stream finished: the object is there, whole.
    return (await this.stat(id)).size;
  }

  async stat(id: string): Promise<StoredFileStat> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: this.key(id) }));
      return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0) };
    } catch (e) {
      throw fileError(e, id);
    }
  }

  /** Read as the connector reads content (ObjectReader). */
  async openRead(id: string, range?: ByteRange): Promise<Readable> {
    try {
      return await this.reads.open(this.config.bucket, this.key(id), { range });
    } catch (e) {
      if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) throw new RangeNotSatisfiableError((await this.stat(id)).size);
      throw fileError(e, id);
    }
  }

  async remove(id: string): Promise<void> {
    const key = this.key(id);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }));
    } catch (e) {
      const mapped = mapS3Error(e, id);
      if (!(mapped instanceof NotFoundError)) throw mapped;
    }
    // An upload a crashed process left unfinished (a running export discards its own).
    await this.abortUploads(key, (k) => k === key);
  }

  /**
   * Like the local store's: everything under the prefix except the complete objects of `keep`, and the
   * unfinished uploads except those of `keepPartial` (exports other nodes are building). The sets are read
   * after the listing, so an object created meanwhile is not in it.
   */
  async removeAllExcept(keep: () => Promise<Set<string>>, keepPartial: () => Promise<Set<string>> = async () => new Set()): Promise<string[]> {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.config.bucket, Prefix: this.config.prefix, Delimiter: '/', ContinuationToken: token }));
      for (const object of page.Contents ?? []) names.push(object.Key!.slice(this.config.prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    const [complete, partial] = [await keep(), await keepPartial()];
    const removed: string[] = [];
    for (const name of names) {
      if (FILE_ID.test(name) && complete.has(name)) continue;
      await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.config.prefix + name }));
      removed.push(name);
    }
    const aborted = await this.abortUploads(this.config.prefix, (k) => {
      const name = k.slice(this.config.prefix.length);
      return !name.includes('/') && !partial.has(name);
    });
    return [...removed, ...aborted.map((k) => `${k.slice(this.config.prefix.length)} (unfinished upload)`)];
  }

  /** Aborts the unfinished multipart uploads under `prefix` whose key passes `filter`; returns the keys of those aborted. */
  async abortUploads(prefix: string, filter: (key: string) => boolean): Promise<string[]> {
    const aborted: string[] = [];
    let keyMarker: string | undefined;
    let uploadMarker: string | undefined;
    do {
      const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.config.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadMarker }));
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !filter(upload.Key)) continue;
        const done = await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.config.bucket, Key: upload.Key, UploadId: upload.UploadId })).then(
          () => true,
          (e: unknown) => {
            this.logger.warn(`Unfinished upload of ${upload.Key} not aborted: ${(e as Error)?.message ?? String(e)}`);
            return false;
          },
        );
        if (done) aborted.push(upload.Key);
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return aborted;
  }

  /** After every module's onModuleDestroy: running exports have discarded their uploads by then. */
  onApplicationShutdown(): void {
    this.client.destroy();
  }

  private key(id: string): string {
    if (!FILE_ID.test(id)) throw new NotFoundError('file', id);
    return this.config.prefix + id;
  }
}

function fileError(e: unknown, id: string): unknown {
  const mapped = mapS3Error(e, id);
  return mapped instanceof NotFoundError ? new NotFoundError('file', id) : mapped;
}
