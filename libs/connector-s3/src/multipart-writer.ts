import { Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
  type StorageClass,
} from '@aws-sdk/client-s3';

export interface ObjectTarget {
  Bucket: string;
  Key: string;
  ContentType?: string;
  Metadata?: Record<string, string>;
  StorageClass?: StorageClass;
}

export interface MultipartWriterOptions {
  /** Size of every part but the last; content up to this size goes up in one PUT. At least 5 MiB (S3's minimum part). */
  partBytes: number;
  /** Parts in flight at once. */
  concurrency: number;
}

/**
 * A Writable that streams into one S3 object: content that fits in one part is sent with a single PUT
 * when the stream ends; anything larger becomes a multipart upload, created when the first part is
 * full, with up to `concurrency` parts in flight. `finish` means S3 has the complete object. A writer
 * destroyed before that (its source failed, the export was stopped, a part was refused) aborts the
 * multipart upload and finishes destroying only once S3 has answered, so nothing is left behind.
 *
 * Why not `@aws-sdk/lib-storage`'s Upload: it makes every part a fresh Buffer (`Buffer.concat` of the
 * chunks it was given), so a long upload leaves a trail of part-sized garbage that V8 frees only at its
 * external-memory trigger: a 1 GB export to S3 peaked 140 MB over the gateway's idle RSS
 * (bench/batch-export-vs-zip with BENCH_USER_FILES=s3), three times what the same export costs on
 * local disk. Here the part buffers are allocated once per writer, at most `concurrency` + 1 of them,
 * and each is filled again once its part has been sent: memory is bounded by
 * `partBytes × (concurrency + 1)` however large the object, and no garbage is made per part.
 */
export class MultipartWriter extends Writable {
  private readonly free: Buffer[] = [];
  private allocated = 0;
  /** The part being filled. */
  private current: Buffer | undefined;
  private filled = 0;
  private partNumber = 0;
  private readonly parts: CompletedPart[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private uploadId: Promise<string> | undefined;
  private failure: Error | undefined;
  private completed = false;

  constructor(
    private readonly client: S3Client,
    private readonly target: ObjectTarget,
    private readonly options: MultipartWriterOptions,
  ) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.finish().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.completed) return callback(error);
    this.discard().then(
      () => callback(error),
      () => callback(error),
    );
  }

  private async take(chunk: Buffer): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      if (this.failure) throw this.failure;
      // A full part goes only once more content comes: content of exactly one part is still one PUT.
      if (this.current && this.filled === this.current.length) this.send();
      if (!this.current) {
        this.current = await this.partBuffer();
        this.filled = 0;
      }
      const n = chunk.copy(this.current, this.filled, at);
      this.filled += n;
      at += n;
    }
  }

  /** A spare part buffer, a new one while fewer than `concurrency` + 1 exist, or the next one a sent part frees. */
  private async partBuffer(): Promise<Buffer> {
    for (;;) {
      const spare = this.free.pop();
      if (spare) return spare;
      if (this.allocated <= this.options.concurrency) {
        this.allocated++;
        return Buffer.allocUnsafeSlow(this.options.partBytes);
      }
      await Promise.race(this.inFlight);
      if (this.failure) throw this.failure;
    }
  }

  /** Sends the current part; its buffer is free again once S3 has it. */
  private send(): void {
    const buffer = this.current as Buffer;
    const body = buffer.subarray(0, this.filled);
    const PartNumber = ++this.partNumber;
    this.current = undefined;
    const sent = (async () => {
      const UploadId = await this.startUpload();
      const { Bucket, Key } = this.target;
      const answer = await this.client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body, ContentLength: body.length }));
      this.parts.push({ ETag: answer.ETag, PartNumber });
      this.free.push(buffer);
    })().then(
      () => void this.inFlight.delete(sent),
      (e: unknown) => {
        // A part that failed may still be on its way out of a socket: its buffer is not reused.
        this.inFlight.delete(sent);
        this.failure ??= e instanceof Error ? e : new Error(String(e));
      },
    );
    this.inFlight.add(sent);
  }

  private startUpload(): Promise<string> {
    this.uploadId ??= this.client
      .send(new CreateMultipartUploadCommand({ ...this.target }))
      .then(({ UploadId }) => {
        if (!UploadId) throw new Error('S3 started a multipart upload without an UploadId');
        return UploadId;
      });
    return this.uploadId;
  }

  private async finish(): Promise<void> {
    if (this.partNumber === 0) {
      // Everything fits in one part: one PUT, no multipart upload.
      const body = this.current ? this.current.subarray(0, this.filled) : Buffer.alloc(0);
      await this.client.send(new PutObjectCommand({ ...this.target, Body: body, ContentLength: body.length }));
      this.completed = true;
      return;
    }
    if (this.current && this.filled > 0) this.send();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
    const { Bucket, Key } = this.target;
    const Parts = [...this.parts].sort((a, b) => (a.PartNumber as number) - (b.PartNumber as number));
    await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: await this.startUpload(), MultipartUpload: { Parts } }));
    this.completed = true;
  }

  /**
   * After a failure or a destroy: lets the parts in flight finish, then aborts the upload, if one was
   * started. Requests are never cancelled half-way: a server still receiving a part it was sent
   * (S3Proxy: seen in test/e2e/s3.e2e-spec.ts) can record it after the abort, bringing the upload back.
   */
  private async discard(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    if (!this.uploadId) return;
    const UploadId = await this.uploadId.catch(() => undefined);
    if (!UploadId) return;
    const { Bucket, Key } = this.target;
    await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
  }
}
