import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Server, MemoryLocker } from '@tus/server';
import type { Request, Response } from 'express';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { markWholeLocalFile } from '@gateway/connector-api';
import { ConflictError, InvalidArgumentError, NotFoundError, PayloadTooLargeError } from '@gateway/errors';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { CHECKSUM_ALGORITHMS, declaredChecksum, GatewayUploadStore, OWNER_KEY, type DeclaredChecksum, type StoredUpload } from './upload-store';

/** A finished upload, opened for a connector to read. */
export interface FinishedUpload {
  stream: Readable;
  size: number;
  /** The client's `filename` (tus-js-client, Uppy) or `name` metadata. */
  fileName?: string;
  /** The client's `filetype` or `type` metadata. */
  mimeType?: string;
}

/** Upload ids are `<owner key>-<random>`: 16 + 32 hex digits. Anything else names no upload (and never a path). */
const UPLOAD_ID = /^[0-9a-f]{16}-[0-9a-f]{32}$/;

/** Read size of a finished upload streamed to a connector. */
const READ_CHUNK = 1024 * 1024;

/**
 * The tus 1.0 server of /api/uploads (@tus/server over GatewayUploadStore), inside the gateway's
 * authentication: the controller has authenticated the caller; here each upload is tied to its
 * creator (its id starts with a key of the user's name, the record holds the name), the quota is
 * checked, the declared checksum handed to the store, and expired uploads swept.
 */
@Injectable()
export class UploadsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UploadsService.name);
  readonly store: GatewayUploadStore;
  private readonly tus: Server;
  /** Uploads being turned into documents on this node: not swept, not turned twice at once. */
  private readonly converting = new Set<string>();
  private timer?: NodeJS.Timeout;
  private currentSweep?: Promise<number>;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly clock: Clock,
  ) {
    this.store = new GatewayUploadStore(config.uploads.dir, config.uploads.expiryMs);
    this.tus = new Server({
      path: `${config.contextPath}/api/uploads`,
      datastore: this.store,
      locker: new MemoryLocker(),
      maxSize: config.maxUploadBytes,
      namingFunction: (req) => `${ownerKey(userOf(req).username)}-${randomBytes(16).toString('hex')}`,
      // The route parameter, already matched and decoded by the router (and checked by ownedUpload).
      getFileIdFromRequest: (req) => (req as Request<{ uploadId?: string }>).params?.uploadId,
      // Express's protocol and host: X-Forwarded-Proto/Host count exactly when TRUST_PROXY trusts the proxy.
      generateUrl: (req, { path, id }) => `${(req as Request).protocol}://${(req as Request).host}${path}/${id}`,
      onUploadCreate: (req, res, upload) => Promise.resolve({ res, metadata: { ...upload.metadata, [OWNER_KEY]: userOf(req).username } }),
    });
  }

  onApplicationBootstrap(): void {
    const interval = this.config.uploads.sweepIntervalMs;
    if (interval <= 0) return;
    this.timer = setInterval(() => {
      this.sweep().catch((e: unknown) => this.logger.error(`Upload sweep failed: ${(e as Error)?.message ?? String(e)}`));
    }, interval);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.currentSweep?.catch(() => undefined);
  }

  /**
   * Hands one tus request to @tus/server once the gateway's own rules passed: `uploadId` (HEAD,
   * PATCH, DELETE) must be the caller's (404 otherwise, as for a missing one), a creation must fit
   * the quota, a PATCH too, and Upload-Checksum must name an algorithm offered.
   */
  async handle(req: Request, res: Response, user: AuthenticatedUser, uploadId?: string): Promise<void> {
    res.setHeader('Tus-Resumable', '1.0.0');
    // @tus/server would take the method from X-HTTP-Method-Override: a PATCH route turned into a creation
    // would skip the quota. The route that matched, with its checks, decides what the request is.
    delete req.headers['x-http-method-override'];
    if (uploadId !== undefined) await this.ownedUpload(uploadId, user);
    if (req.method === 'OPTIONS') res.setHeader('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','));
    if (req.method === 'POST') await this.checkCreationQuota(req, user);
    if (req.method === 'PATCH') await this.checkPatchQuota(req, user);
    const checksum = parseChecksum(req.headers['upload-checksum']);
    await declaredChecksum.run(checksum, () => this.tus.handle(req, res));
  }

  /**
   * Streams the caller's finished upload `uploadId` to `sink` (a connector's write), then removes the
   * upload. 404 when it is not the caller's (or no longer exists), 409 while it is unfinished or
   * already being turned into a document.
   */
  async consume<T>(uploadId: string, user: AuthenticatedUser, sink: (upload: FinishedUpload) => Promise<T>): Promise<T> {
    const upload = await this.ownedUpload(uploadId, user, 'uploadId');
    if (this.expired(upload)) throw notFound(uploadId, 'uploadId');
    if (upload.offset < upload.size) {
      throw new ConflictError(
        `Upload '${uploadId}' is not finished: ${upload.offset} of ${upload.size} bytes received; send the rest with tus PATCH first`,
        'UPLOAD_UNFINISHED',
        { parameter: 'uploadId', uploadId, offset: upload.offset, size: upload.size },
      );
    }
    if (this.converting.has(uploadId)) {
      throw new ConflictError(`Upload '${uploadId}' is already being turned into a document`, 'UPLOAD_IN_USE', { parameter: 'uploadId', uploadId });
    }
    this.converting.add(uploadId);
    try {
      // Marked as the whole data file: a connector of local files (filesystem) copies it in the kernel; others read it.
      const stream =
        upload.size === 0 ? Readable.from([]) : markWholeLocalFile(fs.createReadStream(upload.path, { start: 0, end: upload.size - 1, highWaterMark: READ_CHUNK }), upload.path);
      let result: T;
      try {
        result = await sink({
          stream,
          size: upload.size,
          fileName: upload.metadata.filename ?? upload.metadata.name ?? undefined,
          mimeType: upload.metadata.filetype ?? upload.metadata.type ?? undefined,
        });
      } finally {
        // A sink that refused before reading (even synchronously) leaves the descriptor open otherwise.
        stream.destroy();
      }
      await this.store.discard(uploadId);
      return result;
    } finally {
      this.converting.delete(uploadId);
    }
  }

  /** Removes every upload created more than GATEWAY_UPLOAD_EXPIRY_HOURS ago (by the gateway's clock); a call while one runs joins it. */
  sweep(): Promise<number> {
    this.currentSweep ??= this.sweepOnce().finally(() => (this.currentSweep = undefined));
    return this.currentSweep;
  }

  /** Bytes the user's uploads reserve (their lengths) and hold (received so far). */
  async usage(username: string): Promise<{ reserved: number; stored: number; uploads: number }> {
    const owned = await this.ownedBy(username);
    return {
      reserved: owned.reduce((sum, u) => sum + u.size, 0),
      stored: owned.reduce((sum, u) => sum + u.offset, 0),
      uploads: owned.length,
    };
  }

  private async sweepOnce(): Promise<number> {
    let removed = 0;
    for (const id of await this.store.ids()) {
      if (this.converting.has(id)) continue;
      const upload = await this.store.find(id);
      // A record without its data file is half an upload (a crash mid-creation, or a sweep on another node): gone too.
      if (upload && !this.expired(upload)) continue;
      await this.store.discard(id);
      removed++;
    }
    if (removed > 0) this.logger.log(`Upload sweep removed ${removed} expired upload(s)`);
    return removed;
  }

  private expired(upload: StoredUpload): boolean {
    return upload.creationTime + this.config.uploads.expiryMs <= this.clock.now();
  }

  private async ownedBy(username: string): Promise<StoredUpload[]> {
    const found = await Promise.all((await this.store.ids(`${ownerKey(username)}-`)).map((id) => this.store.find(id)));
    return found.filter((u): u is StoredUpload => u !== undefined && u.owner === username && !this.expired(u));
  }

  private async ownedUpload(uploadId: string, user: AuthenticatedUser, parameter?: string): Promise<StoredUpload> {
    const upload = UPLOAD_ID.test(uploadId) ? await this.store.find(uploadId) : undefined;
    if (!upload || upload.owner !== user.username) throw notFound(uploadId, parameter);
    return upload;
  }

  private async checkCreationQuota(req: Request, user: AuthenticatedUser): Promise<void> {
    const quota = this.config.uploads.quotaBytes;
    const length = Number(req.headers['upload-length']);
    // A missing or malformed Upload-Length is the tus server's to refuse (400).
    if (quota <= 0 || !Number.isSafeInteger(length) || length < 0) return;
    const { reserved } = await this.usage(user.username);
    if (reserved + length > quota) {
      throw new PayloadTooLargeError(
        `Upload-Length ${length} beyond the upload quota: ${user.username}'s unexpired uploads already reserve ${reserved} of ${quota} bytes (GATEWAY_UPLOAD_QUOTA_BYTES)`,
        { parameter: 'Upload-Length', limit: quota, reserved },
      );
    }
  }

  private async checkPatchQuota(req: Request, user: AuthenticatedUser): Promise<void> {
    const quota = this.config.uploads.quotaBytes;
    const incoming = Number(req.headers['content-length'] ?? 0);
    if (quota <= 0 || !Number.isSafeInteger(incoming)) return;
    const { stored } = await this.usage(user.username);
    if (stored + incoming > quota) {
      throw new PayloadTooLargeError(
        `This PATCH of ${incoming} bytes goes beyond the upload quota: ${user.username}'s uploads already hold ${stored} of ${quota} bytes (GATEWAY_UPLOAD_QUOTA_BYTES)`,
        { parameter: 'Content-Length', limit: quota, stored },
      );
    }
  }
}

function userOf(req: IncomingMessage): AuthenticatedUser {
  return (req as IncomingMessage & { user: AuthenticatedUser }).user;
}

/** A short key of the user's name that starts the ids of the user's uploads, so their uploads are found by one directory read. */
function ownerKey(username: string): string {
  return createHash('sha256').update(username, 'utf8').digest('hex').slice(0, 16);
}

function notFound(uploadId: string, parameter?: string): NotFoundError {
  const error = new NotFoundError('upload', uploadId);
  if (parameter) error.details.parameter = parameter;
  return error;
}

/** Upload-Checksum: `<algorithm> <base64 digest>` (tus 1.0 checksum extension); 400 naming the header otherwise. */
export function parseChecksum(header: string | string[] | undefined): DeclaredChecksum | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  const match = /^\s*([A-Za-z0-9-]+) +([A-Za-z0-9+/]+={0,2})\s*$/.exec(value);
  if (!match) throw new InvalidArgumentError('Upload-Checksum', "Invalid header 'Upload-Checksum': must be '<algorithm> <base64 digest>', e.g. 'sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", 'INVALID_CHECKSUM');
  const algorithm = match[1].toLowerCase();
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new InvalidArgumentError('Upload-Checksum', `Invalid header 'Upload-Checksum': algorithm '${match[1]}' is not supported (supported: ${CHECKSUM_ALGORITHMS.join(', ')})`, 'UNSUPPORTED_CHECKSUM_ALGORITHM');
  }
  return { algorithm: algorithm as DeclaredChecksum['algorithm'], digest: match[2] };
}
