import { createHash, type Hash } from 'node:crypto';

/** A running hash of a document's bytes, fed chunk by chunk in order. */
export interface ContentDigest {
  update(chunk: Buffer): void;
  /** The value, in the form the repository reports it (hex, base64, an ETag...). Called once. */
  digest(): string;
}

/**
 * How a repository reports a hash of a document's content, computed by the repository itself from the
 * bytes it stored (S3's ETag, Graph's quickXorHash, the filesystem's SHA-256 computed while writing).
 * A copy job feeds `digest()` the bytes it sends, then compares with `hashOf` of what was written
 * (apps/api/src/jobs/copy-verification.ts). Repositories that report none leave the group out: the job
 * reads the written content back instead. Found through the group, so a wrapper (the metrics Proxy) keeps it.
 */
export interface ContentHashCapability {
  /** What `hashOf` reports, as the report shows it: `sha256`, `md5-etag`, `quickxor`... */
  readonly algorithm: string;
  /** A digest that computes, from the bytes of a document as sent to `createFile`/`updateContent`, what `hashOf` reports for them. */
  digest(): ContentDigest;
  /**
   * The hash the repository reports for the current content of document `id`; undefined when it
   * reports none for this one (an S3 object encrypted with SSE-KMS has no MD5 ETag).
   */
  hashOf(id: string): Promise<string | undefined>;
}

/** SHA-256 in lower-case hex: what the jobs record per document, and the filesystem's `contentHash`. */
export function sha256Digest(): ContentDigest {
  const hash: Hash = createHash('sha256');
  return {
    update: (chunk) => void hash.update(chunk),
    digest: () => hash.digest('hex'),
  };
}
