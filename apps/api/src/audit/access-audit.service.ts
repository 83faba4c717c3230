import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { AccessAuditRepository, type AccessOperation, type AccessRecord, type AccessResult } from '@gateway/persistence';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import type { ContentIdentity, DownloadOutcome } from '../common/download';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { BatchBuffer } from './batch-buffer';

/** A row waits at most this long in memory: what a kill -9 may lose. */
export const AUDIT_FLUSH_INTERVAL_MS = 1000;
/** Rows per INSERT; a full batch is written at once. */
export const AUDIT_FLUSH_ROWS = 500;
/** Rows kept while the database does not take them; beyond it the oldest are dropped (and logged). */
const AUDIT_MAX_PENDING = 100_000;
const DAY_MS = 86_400_000;
/** The user of a row for a download through a public link. */
export const PUBLIC_USER = 'public';

/** Who read: a user, or a public link; and from where. */
export interface Reader {
  user: string;
  linkId: string | null;
  clientAddress: string | null;
}

/** One read of a zip entry (batch exports and the streamed batch). */
export interface EntryRead {
  connectorId: string;
  documentId: string;
  path: string | null;
  bytes: number;
  result: AccessResult;
}

/**
 * The access audit: every content read the gateway serves becomes one row of access_audit. Recording
 * only appends to a buffer (BatchBuffer); rows are written in batches of one INSERT each, at most
 * AUDIT_FLUSH_INTERVAL_MS later, and the rest at shutdown once the HTTP server has closed (this
 * module's onApplicationShutdown runs before the database's, which is global and goes last).
 */
@Injectable()
export class AccessAuditService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AccessAuditService.name);
  private readonly buffer: BatchBuffer<AccessRecord>;
  private sweepTimer?: NodeJS.Timeout;

  constructor(
    private readonly repository: AccessAuditRepository,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.buffer = new BatchBuffer<AccessRecord>({
      intervalMs: AUDIT_FLUSH_INTERVAL_MS,
      maxRows: AUDIT_FLUSH_ROWS,
      maxPending: AUDIT_MAX_PENDING,
      write: (rows) => this.repository.insertMany(rows),
      onError: (e, dropped) =>
        this.logger.error(`Access audit rows not written (${this.buffer.pending} kept${dropped > 0 ? `, ${dropped} oldest dropped` : ''}): ${describe(e)}`),
    });
  }

  /** Rows recorded and not written yet. */
  get pending(): number {
    return this.buffer.pending;
  }

  get enabled(): boolean {
    return this.config.accessAudit.enabled;
  }

  /** The reader of `req`: its authenticated user, or `public` and the link when `linkKey` is given. */
  reader(req: Request, linkKey?: string): Reader {
    const user = (req as Request & { user?: AuthenticatedUser }).user;
    return {
      user: linkKey !== undefined ? PUBLIC_USER : (user?.username ?? PUBLIC_USER),
      linkId: linkKey !== undefined ? linkId(linkKey) : null,
      clientAddress: req.ip ?? null,
    };
  }

  /**
   * sendDownload's onServed for `req` reading `content`: one row when the GET ends. Undefined when the
   * audit is off, or the source names no content (a zip built on the fly records its entries instead).
   */
  watch(req: Request, content: ContentIdentity | undefined, linkKey?: string): ((outcome: DownloadOutcome) => void) | undefined {
    if (!this.enabled || content === undefined) return undefined;
    const reader = this.reader(req, linkKey);
    const base: AccessOperation = linkKey !== undefined ? 'publicDownload' : content.version ? 'versionDownload' : 'download';
    return (outcome) =>
      this.record(reader, {
        operation: outcome.offloaded ? 'offload' : outcome.ranged ? 'rangeDownload' : base,
        connectorId: content.connectorId,
        documentId: content.documentId,
        path: content.path,
        bytes: outcome.bytes,
        result: outcome.result,
      });
  }

  /** The recorder of a zip's entries, all attributed to `reader`; undefined when the audit is off. */
  zipEntries(reader: Reader): ((read: EntryRead) => void) | undefined {
    if (!this.enabled) return undefined;
    return (read) => this.record(reader, { operation: 'zipEntry', ...read });
  }

  onApplicationBootstrap(): void {
    const { retentionDays, sweepIntervalMs } = this.config.accessAudit;
    if (retentionDays <= 0 || sweepIntervalMs <= 0) return;
    this.sweepTimer = setInterval(() => {
      this.sweep().catch((e: unknown) => this.logger.error(`Access audit retention sweep failed: ${describe(e)}`));
    }, sweepIntervalMs);
    this.sweepTimer.unref();
  }

  /** Deletes the rows older than the retention; returns how many. */
  async sweep(): Promise<number> {
    const days = this.config.accessAudit.retentionDays;
    if (days <= 0) return 0;
    const removed = await this.repository.deleteBefore(this.clock.now() - days * DAY_MS);
    if (removed > 0) this.logger.log(`Access audit retention removed ${removed} row(s) older than ${days} day(s)`);
    return removed;
  }

  /** Writes every row recorded so far (tests and shutdown). */
  flush(): Promise<void> {
    return this.buffer.flush();
  }

  /** After the HTTP server closed (every answer ended), before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.buffer.close();
  }

  private record(reader: Reader, read: Omit<AccessRecord, 'time' | 'user' | 'linkId' | 'clientAddress'>): void {
    this.buffer.push({ time: this.clock.now(), ...reader, ...read });
  }
}

/**
 * What the audit calls a link: the key is the link's secret (whoever holds it downloads), so the
 * audit keeps the first 16 characters of its SHA-256 (base64url) instead. An administrator given a key computes it the same way.
 */
export function linkId(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, 16);
}

function describe(e: unknown): string {
  return ((e as Error)?.message ?? String(e)).slice(0, 500);
}
