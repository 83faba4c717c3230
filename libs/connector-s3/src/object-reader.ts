import type { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { S3ConnectionParams } from './client';
import { SignedGetObject } from './signed-get-object';

/**
 * An object's bytes (or a range of them), for the connector's content and the user-file store's
 * exports alike: SignedGetObject (@gateway/content-transport) on plain HTTP endpoints (README: figures),
 * the SDK's GetObject otherwise. Errors are the SDK's exceptions on both paths (`mapS3Error`).
 */
export class ObjectReader {
  private readonly signed: SignedGetObject | undefined;

  constructor(
    private readonly client: S3Client,
    params: Pick<S3ConnectionParams, 'endpoint' | 'forcePathStyle' | 'timeoutMs' | 'connectTimeoutMs'>,
  ) {
    this.signed = SignedGetObject.applies(params) ? new SignedGetObject(client, params) : undefined;
  }

  async open(bucket: string, key: string, options: { versionId?: string; range?: { start: number; end: number } } = {}): Promise<Readable> {
    if (this.signed) return this.signed.open(bucket, key, options);
    const { versionId, range } = options;
    const answer = await this.client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
    );
    // In Node the SDK's body is the response stream itself (an IncomingMessage): no copy in between.
    return answer.Body as Readable;
  }
}
