import { createHash } from 'node:crypto';
import type { ContentDigest, ContentHashCapability } from '@gateway/connector-api';
import { decodeId, invalid, isFolderRel } from './keys';
import type { S3Connector } from './s3.connector';

/** An ETag that is an MD5 in hex, of the whole object (single PUT) or of its parts' MD5s (`-<parts>`). */
const MD5_ETAG = /^[0-9a-f]{32}(-[1-9]\d*)?$/;

/**
 * The `contentHash` group: the object's ETag, which S3 computes from the bytes it stored, as an MD5.
 * Why the ETag and not `x-amz-checksum-sha256`: a streamed upload learns its SHA-256 only at its end,
 * after the single PUT or the parts have gone (S3's multipart SHA-256 is a checksum of the parts'
 * checksums anyway), and S3Proxy refuses checksum headers (NotImplemented; client.ts). The ETag needs
 * nothing sent, and every S3 server computes it: the MD5 of the content for one PUT (content up to
 * `multipartThresholdBytes`), and for a multipart upload the MD5 of the parts' binary MD5s followed by
 * `-<parts>`, the parts being cut at `multipartThresholdBytes` exactly as MultipartWriter cuts them,
 * which `digest()` reproduces. An object encrypted with SSE-KMS or SSE-C has an ETag that is no MD5:
 * none is reported for it (the job reads it back).
 */
export class S3ContentHash implements ContentHashCapability {
  readonly algorithm = 'md5-etag';

  constructor(private readonly connector: S3Connector) {}

  digest(): ContentDigest {
    return new EtagDigest(this.connector.params.multipartThresholdBytes);
  }

  async hashOf(id: string): Promise<string | undefined> {
    const { rel, versionId } = decodeId(id, 'id');
    if (isFolderRel(rel)) throw invalid('id', `'${id}' names a folder; a document is expected`);
    const head = await this.connector.head(rel, id, versionId);
    if (head.SSECustomerAlgorithm || head.ServerSideEncryption === 'aws:kms' || head.ServerSideEncryption === 'aws:kms:dsse') return undefined;
    const etag = head.ETag?.replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
    return etag !== undefined && MD5_ETAG.test(etag) ? etag : undefined;
  }
}

/** The ETag S3 gives the bytes MultipartWriter sends with parts of `partBytes`: see S3ContentHash. */
export class EtagDigest implements ContentDigest {
  private part = createHash('md5');
  private inPart = 0;
  private readonly partDigests: Buffer[] = [];

  constructor(private readonly partBytes: number) {}

  update(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      // A full part is closed only once more content comes, as the writer sends it (content of exactly one part is one PUT).
      if (this.inPart === this.partBytes) {
        this.partDigests.push(this.part.digest());
        this.part = createHash('md5');
        this.inPart = 0;
      }
      const n = Math.min(chunk.length - at, this.partBytes - this.inPart);
      this.part.update(chunk.subarray(at, at + n));
      this.inPart += n;
      at += n;
    }
  }

  digest(): string {
    const last = this.part.digest();
    if (this.partDigests.length === 0) return last.toString('hex');
    const parts = [...this.partDigests, last];
    return `${createHash('md5').update(Buffer.concat(parts)).digest('hex')}-${parts.length}`;
  }
}
