import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ConflictError, GoneError, InvalidArgumentError, NotFoundError, type ByteRange } from '@gateway/connector-api';
import { DownloadLinksRepository, UserFilesRepository, type DownloadLinkRecord, type UserFileRecord } from '@gateway/persistence';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import type { DownloadSource } from '../common/download';
import { DownloadOffload, offloadable } from '../common/offload';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { INTERNAL_CONNECTOR_ID, type CreateLinkQuery, type DownloadLinkKeyDto } from './files.dto';
import { toLinkKeyDto } from './files.mapping';
import { UserFilesService } from './user-files.service';

export const DEFAULT_LIFESPAN_DAYS = 3;
const DAY_MS = 86_400_000;
/** 256 random bits from the operating system's CSPRNG, base64url (43 characters). */
const KEY_BYTES = 32;

/**
 * Spec 2.2 / 4.1 download links: create and delete (owner only), and the
 * public ready check and download (no credentials; the key is the secret).
 */
@Injectable()
export class LinksService {
  constructor(
    private readonly links: DownloadLinksRepository,
    private readonly files: UserFilesRepository,
    private readonly userFiles: UserFilesService,
    private readonly registry: ConnectorRegistry,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly offload: DownloadOffload,
  ) {}

  async create(user: AuthenticatedUser, query: CreateLinkQuery): Promise<DownloadLinkKeyDto> {
    const lifeSpan = query.lifeSpan ?? DEFAULT_LIFESPAN_DAYS;
    const max = this.config.files.maxLinkLifeSpanDays;
    if (lifeSpan > max) throw new InvalidArgumentError('lifeSpan', `Invalid parameter 'lifeSpan': at most ${max} days`);

    if (query.internal) {
      if (query.connectorId !== undefined && query.connectorId !== INTERNAL_CONNECTOR_ID) {
        throw new InvalidArgumentError('connectorId', `Invalid parameter 'connectorId': links to user files take no connector (or '${INTERNAL_CONNECTOR_ID}')`);
      }
      if (query.connectorId === undefined && !query.fileName) {
        throw new InvalidArgumentError('fileName', "Invalid parameter 'fileName': required when connectorId is absent");
      }
      const file = await this.userFiles.requireOwned(user, query.docId);
      if (file.state === 'failed' || file.state === 'stopped') {
        throw new ConflictError(`Export '${file.id}' ${file.state === 'stopped' ? 'was stopped' : 'failed'}; a link to it could never deliver`, 'EXPORT_FAILED', { id: file.id });
      }
      return toLinkKeyDto(await this.createInternal(user.username, file, lifeSpan, query.fileName || file.fileName));
    }

    if (query.connectorId === undefined || query.connectorId === INTERNAL_CONNECTOR_ID) {
      throw new InvalidArgumentError('connectorId', "Invalid parameter 'connectorId': required when internal=false (the connector that reaches docId)");
    }
    const connector = this.registry.get(query.connectorId);
    const item = await connector.getItem(query.docId);
    if (item.baseType !== 'document') {
      throw new InvalidArgumentError('docId', `Invalid parameter 'docId': '${query.docId}' is a folder; links lead to documents`, 'NOT_A_DOCUMENT');
    }
    const link = this.newLink(user.username, false, query.connectorId, query.docId, query.fileName ?? '', lifeSpan);
    await this.links.insert(link);
    return toLinkKeyDto(link);
  }

  /** A link to a user file; the file is kept at least as long as the link lives. */
  async createInternal(owner: string, file: UserFileRecord, lifeSpanDays = DEFAULT_LIFESPAN_DAYS, fileName = file.fileName): Promise<DownloadLinkRecord> {
    const link = this.newLink(owner, true, INTERNAL_CONNECTOR_ID, file.id, fileName, lifeSpanDays);
    await this.links.insert(link);
    await this.files.extendExpiry(file.id, link.expiresAt);
    return link;
  }

  async delete(user: AuthenticatedUser, key: string): Promise<DownloadLinkKeyDto> {
    const link = await this.links.delete(key, user.username);
    if (!link) throw new NotFoundError('link', key);
    return toLinkKeyDto(link);
  }

  /**
   * true when a download would deliver now: an external link, or a link to a
   * complete export; false while the export runs. 404 unknown key, 410
   * expired (or an export that failed or was stopped).
   */
  async ready(key: string): Promise<boolean> {
    const link = await this.validLink(key);
    if (!link.internal) return true;
    const file = await this.linkedFile(link);
    if (file.state === 'running') return false;
    if (file.state === 'ready') return true;
    await this.userFiles.contentSource(file, 'link'); // throws the 410 that explains why
    return false;
  }

  /**
   * The content behind a link. Each download counts once in `used`, when it
   * starts from the first byte (so a resumed download is not counted twice),
   * with one atomic UPDATE. External documents are read from their connector now.
   */
  async download(key: string): Promise<DownloadSource> {
    const link = await this.validLink(key);
    const count = (range?: ByteRange) => this.countUse(link, range);
    if (link.internal) {
      return this.userFiles.contentSource(await this.linkedFile(link), 'link', { fileName: link.fileName, onOpen: count });
    }
    const connector = this.registry.get(link.connectorId);
    const item = await connector.getItem(link.docId);
    return {
      size: item.size,
      mimeType: item.mimeType,
      fileName: link.fileName || item.name,
      etag: item.etag,
      lastModified: item.modified,
      handOff: offloadable(this.offload, link.connectorId, connector, link.docId, count),
      identity: { connectorId: link.connectorId, documentId: link.docId, path: item.path },
      open: async (range) => {
        const stream = await connector.openContent(link.docId, range);
        try {
          await count(range);
        } catch (e) {
          stream.destroy();
          throw e;
        }
        return stream;
      },
    };
  }

  private async countUse(link: DownloadLinkRecord, range?: ByteRange): Promise<void> {
    if (range && range.start > 0) return;
    if (await this.links.incrementUsed(link.key, this.clock.now())) return;
    await this.validLink(link.key); // expired or deleted meanwhile: throws 410 or 404
    throw new NotFoundError('link', link.key);
  }

  private async validLink(key: string): Promise<DownloadLinkRecord> {
    const link = await this.links.find(key);
    if (!link) throw new NotFoundError('link', key);
    if (link.expiresAt <= this.clock.now()) {
      throw new GoneError(`The link expired at ${new Date(link.expiresAt).toISOString()}`, 'LINK_EXPIRED', { expires: link.expiresAt });
    }
    return link;
  }

  private async linkedFile(link: DownloadLinkRecord): Promise<UserFileRecord> {
    const file = await this.files.find(link.docId);
    if (!file) throw new NotFoundError('file', link.docId);
    return file;
  }

  private newLink(owner: string, internal: boolean, connectorId: string, docId: string, fileName: string, lifeSpanDays: number): DownloadLinkRecord {
    const now = this.clock.now();
    return {
      key: randomBytes(KEY_BYTES).toString('base64url'),
      owner,
      internal,
      connectorId,
      docId,
      fileName,
      createdAt: now,
      expiresAt: now + lifeSpanDays * DAY_MS,
      used: 0,
    };
  }
}
