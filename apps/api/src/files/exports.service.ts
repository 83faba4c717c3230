import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '@gateway/connector-api';
import { UserFilesRepository, type UserFileRecord } from '@gateway/persistence';
import { AccessAuditService, type EntryRead, type Reader } from '../audit/access-audit.service';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import type { DownloadSource } from '../common/download';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { BatchHaltedError, BatchZip, type BatchEntry } from './batch-zip';
import { ExportRunner } from './export-runner';
import { USER_FILE_TYPES, type BatchRequestDto, type DownloadLinkDto } from './files.dto';
import { toLinkDto } from './files.mapping';
import { parseLegacyBatchQuery } from './legacy-batch-query';
import { LinksService } from './links.service';

const ZIP_MIME_TYPE = 'application/zip';

/** The two batch forms of spec 4.2: a background export (POST) and a zip streamed into the answer (GET __BATCH__). */
@Injectable()
export class ExportsService {
  private readonly logger = new Logger(ExportsService.name);

  constructor(
    private readonly files: UserFilesRepository,
    private readonly links: LinksService,
    private readonly runner: ExportRunner,
    private readonly registry: ConnectorRegistry,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly audit: AccessAuditService,
  ) {}

  /**
   * POST /api/repo/batch: records a user file (ready=false), starts filling
   * it in the background and answers a link to it at once (`id` = link key,
   * `docId` = the file id for the file service). Each entry read is audited as `reader`'s.
   */
  async startBatch(user: AuthenticatedUser, body: BatchRequestDto, reader: Reader): Promise<DownloadLinkDto> {
    const entries = body.batch.map((e, index) => ({ index, connId: e.connId, id: e.id, fileName: e.fileName }));
    this.checkCount(entries.length, 'batch');
    this.runner.assertAccepting();
    const now = this.clock.now();
    const file: UserFileRecord = {
      id: randomUUID(),
      owner: user.username,
      fileName: zipName(now),
      type: USER_FILE_TYPES.batch,
      mimeType: ZIP_MIME_TYPE,
      state: 'running',
      size: 0,
      createdAt: now,
      expiresAt: now + this.config.files.retentionMs,
      entriesTotal: entries.length,
      entriesDone: 0,
      bytesDone: 0,
      errorCount: 0,
      nodeId: this.config.nodeId,
      leaseExpiresAt: now + this.config.files.leaseMs,
    };
    await this.files.insert(file);
    this.runner.start(file, entries, this.audit.zipEntries(reader));
    return toLinkDto(await this.links.createInternal(user.username, file));
  }

  /**
   * GET /api/repo/__BATCH__/file: the zip is built while it is sent (no
   * Content-Length, no Range). Parameters are checked before anything is
   * sent; entry failures go to errors.txt; a reader that goes away stops the build.
   * Each entry read is audited as `reader`'s (the zip itself is not a stored document).
   */
  streamBatch(query: Record<string, unknown>, reader: Reader): DownloadSource {
    const entries = parseLegacyBatchQuery(query, this.config.files.batchMaxEntries);
    return {
      fileName: zipName(this.clock.now()),
      mimeType: ZIP_MIME_TYPE,
      open: () => this.openStreamedZip(entries, this.audit.zipEntries(reader)),
    };
  }

  private openStreamedZip(entries: BatchEntry[], onEntryRead: ((read: EntryRead) => void) | undefined) {
    const zip = new BatchZip(this.registry, entries, { level: this.config.files.zipLevel, onEntryRead });
    zip.run().catch((e: unknown) => {
      if (e instanceof BatchHaltedError) return; // the reader went away
      this.logger.error(`Streamed batch failed: ${(e as Error)?.message ?? String(e)}`);
      zip.archive.destroy(e instanceof Error ? e : new Error(String(e)));
    });
    return zip.archive;
  }

  private checkCount(count: number, parameter: string): void {
    const max = this.config.files.batchMaxEntries;
    if (count > max) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': at most ${max} documents per batch (got ${count})`, 'TOO_MANY_ENTRIES');
    }
  }
}

/** batch-YYYYMMDD-HHMMSS.zip (UTC). */
function zipName(now: number): string {
  const iso = new Date(now).toISOString(); // 2025-01-31T10:22:33.456Z
  return `batch-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}.zip`;
}
