import { createHash } from 'node:crypto';
import { createReadStream, lstatSync, type BigIntStats } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileReadOptions, sha256Digest, type ContentDigest, type ContentHashCapability } from '@gateway/connector-api';
import { mapFsError } from './fs-errors';

/** Hashes kept of files this process wrote, at most; the oldest go first (a copy job asks right after its write). */
const KEPT_HASHES = 4096;

type FileStat = Pick<BigIntStats, 'ino' | 'size' | 'mtimeNs'>;

/**
 * SHA-256 of the files this process wrote, computed while writing them (an upload staged through
 * `hashing()`; a direct copy answers its hash with the copy instead), by inode: a staged file linked or renamed
 * into place keeps its inode. An entry counts only while the file's size and mtime are those it
 * had when written, so a file changed since (by hand) is hashed again from the disk.
 */
export class WrittenHashes {
  private readonly hashes = new Map<bigint, { sha256: string; size: bigint; mtimeNs: bigint }>();

  remember(stat: FileStat, sha256: string): void {
    this.hashes.delete(stat.ino);
    this.hashes.set(stat.ino, { sha256, size: stat.size, mtimeNs: stat.mtimeNs });
    if (this.hashes.size > KEPT_HASHES) this.hashes.delete(this.hashes.keys().next().value as bigint);
  }

  lookUp(stat: FileStat): string | undefined {
    const known = this.hashes.get(stat.ino);
    return known && known.size === stat.size && known.mtimeNs === stat.mtimeNs ? known.sha256 : undefined;
  }

  /** A pass-through that hashes what an upload writes; `written(file)` then keeps the hash for the file it was written to. */
  hashing(): { stream: Transform; written(file: string): void } {
    const hash = createHash('sha256');
    const stream = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    return { stream, written: (file) => this.remember(lstatSync(file, { bigint: true }), hash.digest('hex')) };
  }
}

/**
 * The `contentHash` group: SHA-256, computed while the file was written (WrittenHashes), else read
 * from the disk (a file written before this process, by hand, by a direct copy, or by the kernel's
 * copy of a whole file from another filesystem connector, which the gateway never sees).
 */
export class ContentHashes implements ContentHashCapability {
  readonly algorithm = 'sha256';

  constructor(
    private readonly written: WrittenHashes,
    private readonly localPath: (id: string) => Promise<string>,
  ) {}

  digest(): ContentDigest {
    return sha256Digest();
  }

  async hashOf(id: string): Promise<string | undefined> {
    const file = await this.localPath(id);
    try {
      const stat = lstatSync(file, { bigint: true });
      const known = this.written.lookUp(stat);
      if (known !== undefined) return known;
      const hash = createHash('sha256');
      const read = fileReadOptions(Number(stat.size));
      if (read) await pipeline(createReadStream(file, read), hash);
      return hash.digest('hex');
    } catch (e) {
      throw mapFsError(e, id);
    }
  }
}
