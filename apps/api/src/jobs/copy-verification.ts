import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Actor, ContentConnector, ContentDigest } from '@gateway/connector-api';
import type { OnMismatch, VerifyMode } from '../config/job-definition.dto';

/** What one write sent: the SHA-256 of its bytes, their count, and the target's own kind of hash of them (when it reports one). */
export interface SentContent {
  sha256: string;
  bytes: number;
  /** The value the target's `contentHash` group should report for these bytes (its `algorithm`). */
  targetHash?: string;
}

/** How a written copy was checked: `method` as the report shows it; `mismatch` says why it failed, naming both sides. */
export interface Verification {
  method: string;
  mismatch?: string;
}

/**
 * The bytes of one write as they stream from the source to the target (one read of the source):
 * counted, hashed with SHA-256 (every document a job writes), and fed to the target's own digest
 * when the job will compare with the hash the target reports. `sent()` answers once the stream ended.
 */
export class HashingPassThrough extends Transform {
  private readonly sha256: Hash = createHash('sha256');
  private bytes = 0;
  private result: SentContent | undefined;

  /** `targetDigest`: the target's kind of hash; `sha256` when it is SHA-256 too (the one hash then serves both). */
  constructor(private readonly targetDigest?: ContentDigest | 'sha256') {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    this.sha256.update(chunk);
    if (this.targetDigest !== 'sha256') this.targetDigest?.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const sha256 = this.sha256.digest('hex');
    const targetHash = this.targetDigest === 'sha256' ? sha256 : this.targetDigest?.digest();
    this.result = { sha256, bytes: this.bytes, ...(targetHash !== undefined ? { targetHash } : {}) };
    callback();
  }

  /** What went through; throws when the source did not end (a write that succeeded without reading it all is no copy). */
  sent(): SentContent {
    if (!this.result) throw new Error('The target finished writing before the source content ended');
    return this.result;
  }
}

/**
 * The `verify` and `onMismatch` options of a copy job against one target: which digest the
 * pass-through feeds, how a written copy is checked, and what becomes of one that fails.
 *
 * - `hash`: the target's `contentHash` group (found on the connector, whatever wraps it) reports a
 *   hash computed by the target from what it stored; it is compared with the same kind of hash of the
 *   bytes sent. Where the target has no such group, or reports none for this document, its content
 *   is read back and hashed (SHA-256), a second transfer of the document from the target.
 * - `size`: the size the target reports against the bytes sent. `none`: nothing.
 */
export class CopyVerifier {
  constructor(
    private readonly target: ContentConnector,
    private readonly mode: VerifyMode = 'hash',
    private readonly onMismatch: OnMismatch = 'remove',
  ) {}

  /** A fresh pass-through for one write. */
  passThrough(): HashingPassThrough {
    if (this.mode !== 'hash' || !this.target.contentHash) return new HashingPassThrough();
    // A second SHA-256 of the same bytes would cost as much again (~1 s per GiB of the event loop's time).
    return new HashingPassThrough(this.targetHashesSha256 ? 'sha256' : this.target.contentHash.digest());
  }

  /** The target's kind of hash, when it is SHA-256 too (a direct copy's hash then serves as the target's). */
  get targetHashesSha256(): boolean {
    return this.mode === 'hash' && this.target.contentHash?.algorithm === 'sha256';
  }

  /**
   * `reportedByWrite`: the target's hash of what it wrote, answered by the write itself (a direct copy
   * hashes on the target's copy thread the buffer it writes from): then no further call is made.
   */
  async verify(targetId: string, sent: SentContent, reportedByWrite?: string): Promise<Verification> {
    if (this.mode === 'none') return { method: 'none' };
    if (this.mode === 'size') {
      const { size } = await this.target.getItem(targetId);
      return size === sent.bytes ? { method: 'size' } : { method: 'size', mismatch: `SIZE_MISMATCH: source ${sent.bytes} bytes, target ${size ?? 'unknown'} bytes` };
    }
    const reporter = this.target.contentHash;
    if (reporter && sent.targetHash !== undefined) {
      const reported = reportedByWrite ?? (await reporter.hashOf(targetId));
      if (reported !== undefined) {
        const method = reporter.algorithm;
        if (reported === sent.targetHash) return { method };
        const detail = method === 'sha256' ? '' : ` (source sha256 ${sent.sha256})`;
        return { method, mismatch: `CHECKSUM_MISMATCH: source ${method} ${sent.targetHash}, target ${method} ${reported}${detail}` };
      }
    }
    const readBack = await this.readBack(targetId);
    if (readBack.sha256 === sent.sha256) return { method: 'read-back' };
    return { method: 'read-back', mismatch: `CHECKSUM_MISMATCH: source sha256 ${sent.sha256} (${sent.bytes} bytes), target sha256 ${readBack.sha256} (${readBack.bytes} bytes, read back)` };
  }

  /**
   * After a failed check: the bad copy leaves the target (onMismatch `remove`), so that a later run
   * writes it again: the whole document when this write made it, only the version it added
   * otherwise (where the target keeps versions). Answers what the outcome's message adds.
   */
  async discard(targetId: string, addedVersion: boolean, actor: Actor): Promise<string> {
    if (this.onMismatch === 'keep') return 'the copy is kept (onMismatch: keep)';
    await this.target.deleteItem(targetId, !addedVersion, actor);
    return addedVersion ? 'the version written is removed' : 'the copy is removed';
  }

  private async readBack(targetId: string): Promise<{ sha256: string; bytes: number }> {
    const hash = createHash('sha256');
    let bytes = 0;
    await pipeline(await this.target.openContent(targetId), async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) {
        bytes += chunk.length;
        hash.update(chunk);
      }
    });
    return { sha256: hash.digest('hex'), bytes };
  }
}
