import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import type { Upload } from '@tus/server';

/** The checksum a PATCH (or a creation with upload) declared in Upload-Checksum, for the store's write. */
export interface DeclaredChecksum {
  algorithm: ChecksumAlgorithm;
  /** The digest, base64 as the header carries it. */
  digest: string;
}

/** tus checksum algorithms the gateway verifies (Tus-Checksum-Algorithm). sha1 is the one the protocol requires of every server. */
export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/**
 * The Upload-Checksum of the request being handled. @tus/server 1.x hands the store only the body
 * stream, not the request; its handlers run inside the controller's call, so the declared checksum
 * travels with that call's asynchronous context.
 */
export const declaredChecksum = new AsyncLocalStorage<DeclaredChecksum | undefined>();

/** An answer @tus/server writes as it is (its errors are `{ status_code, body }`): here 460, a body that does not match its Upload-Checksum. */
export class ChecksumMismatch extends Error {
  readonly status_code = 460;
  readonly body = 'Checksum Mismatch\n';
  constructor() {
    super('Checksum Mismatch');
  }
}

/** What the store says of one upload, read from its record and its data file. */
export interface StoredUpload {
  id: string;
  owner?: string;
  /** Upload-Length; every upload here has one (creation-defer-length is not offered). */
  size: number;
  /** Bytes received so far. */
  offset: number;
  creationTime: number;
  metadata: Record<string, string | null>;
  path: string;
}

/** The metadata key under which the server records an upload's owner (whatever the client sent under it). */
export const OWNER_KEY = 'gateway-owner';

/**
 * @tus/file-store's FileStore (one data file and one `<id>.json` record per upload, in one folder),
 * with the checksum extension verified on every write, without creation-defer-length (a quota needs
 * the length up front), and with the look-ups the gateway's ownership, quota and sweep need.
 */
export class GatewayUploadStore extends FileStore {
  constructor(directory: string, expiryMs: number) {
    fs.mkdirSync(directory, { recursive: true });
    super({ directory, expirationPeriodInMilliseconds: expiryMs });
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum'];
  }

  /**
   * Appends the body at `offset`. With a declared checksum the bytes are hashed as they pass; a body
   * that does not match is cut off again (the file truncated back to `offset`) and refused with 460,
   * so a resumed upload continues from the last verified byte.
   */
  override async write(readable: IncomingMessage | Readable, id: string, offset: number): Promise<number> {
    const declared = declaredChecksum.getStore();
    if (!declared) return super.write(readable, id, offset);
    const hash = createHash(declared.algorithm);
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    readable.once('error', (e) => tap.destroy(e));
    const end = await super.write(readable.pipe(tap), id, offset);
    if (hash.digest('base64') !== declared.digest) {
      await fs.promises.truncate(this.dataPath(id), offset);
      throw new ChecksumMismatch();
    }
    return end;
  }

  dataPath(id: string): string {
    return path.join(this.directory, id);
  }

  /** The upload `id`, or undefined when there is none (or only half of one: a record without data, data without a record). */
  async find(id: string): Promise<StoredUpload | undefined> {
    const record: (Upload & { creation_date?: string }) | undefined = await this.configstore.get(id);
    if (!record) return undefined;
    let stats: fs.Stats;
    try {
      stats = await fs.promises.stat(this.dataPath(id));
    } catch {
      return undefined;
    }
    const metadata = record.metadata ?? {};
    return {
      id,
      owner: metadata[OWNER_KEY] ?? undefined,
      size: record.size ?? 0,
      offset: stats.size,
      creationTime: record.creation_date ? Date.parse(record.creation_date) : stats.mtimeMs,
      metadata,
      path: this.dataPath(id),
    };
  }

  /** The ids of every upload whose id starts with `prefix` ('' for all): one directory read, no record opened. */
  async ids(prefix = ''): Promise<string[]> {
    const names = await fs.promises.readdir(this.directory);
    return names.filter((n) => n.endsWith('.json') && n.startsWith(prefix)).map((n) => n.slice(0, -'.json'.length));
  }

  /** Removes the data file and the record; what is already gone (another node's sweep) is no error. */
  async discard(id: string): Promise<void> {
    await fs.promises.rm(this.dataPath(id), { force: true });
    await fs.promises.rm(path.join(this.directory, `${id}.json`), { force: true });
  }
}
