import { Inject, Injectable, StreamableFile } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConflictError, GoneError, InvalidArgumentError, NotFoundError } from '@gateway/connector-api';
import { JobsRepository, UserFilesRepository, type JobRunRecord, type ReportQuery, type ReportRow } from '@gateway/persistence';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import { Page } from '../common/paging';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { USER_FILE_TYPES, type DownloadLinkDto } from '../files/files.dto';
import { toLinkDto } from '../files/files.mapping';
import { LinksService } from '../files/links.service';
import { UserFileStore } from '../files/user-file.store';
import { REPORT_PAGE_SIZE, type JobReportDto, type JobReportQuery, type ReportFormat, type ReportRowDto } from './job-report.dto';
import { unmappedSummary } from './document-planner';
import type { JobStore } from './job-store';
import type { JobStatus } from './job-states';

/** Rows read from the database per statement while a report streams (1,000 left some gateways at twice the peak RSS: jobs README). */
const STREAM_BATCH = 500;
/** Characters of a streamed chunk: 64 KiB at most even as UTF-16, below V8's large-object size. */
const CHUNK_CHARS = 32 * 1024;
const FINISHED: readonly JobStatus[] = ['ABORTED', 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS'];
const CSV_COLUMNS = ['docId', 'relPath', 'sourcePath', 'targetId', 'outcome', 'message', 'checksum', 'verified', 'readAt', 'finishedAt', 'plan'] as const satisfies ReadonlyArray<keyof ReportRowDto>;
const MEDIA_TYPES: Record<Exclude<ReportFormat, 'json'>, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' };

/**
 * A run's report: one row per document of the run (job_run_docs with the audit record of its outcome), read
 * from the database a batch at a time by document id, so no report is ever held whole.
 */
@Injectable()
export class JobReportService {
  constructor(
    @Inject(JobsRepository) private readonly repo: JobStore,
    private readonly files: UserFilesRepository,
    private readonly store: UserFileStore,
    private readonly links: LinksService,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** format=json: one page, the next one's cursor in X-Next-Cursor. */
  async page(jobId: number, query: JobReportQuery): Promise<Page<JobReportDto>> {
    const run = await this.resolveRun(jobId, query.runId);
    const limit = query.limit ?? REPORT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    // One row more than asked says whether another page follows.
    const rows = await this.repo.reportRows(jobId, run.id, { outcomes: query.outcome, after, limit: limit + 1 });
    const more = rows.length > limit;
    const shown = more ? rows.slice(0, limit) : rows;
    const result: JobReportDto = { jobId, runId: run.id, status: run.status, dryRun: run.dryRun, counters: counters(run), rows: shown.map((row) => toRowDto(row)) };
    if (query.cursor === undefined) {
      result.counts = await this.repo.reportCounts(run.id);
      if (run.dryRun) result.unmapped = unmappedSummary(await this.repo.unmappedCounts(run.id));
    }
    return new Page(result, more ? encodeCursor(shown[shown.length - 1].docId) : undefined);
  }

  /** format=csv|ndjson: the whole run, streamed with backpressure (the next batch is read once the socket took the last). */
  async stream(jobId: number, query: JobReportQuery & { format: Exclude<ReportFormat, 'json'> }): Promise<StreamableFile> {
    const run = await this.resolveRun(jobId, query.runId);
    // At most one batch waits beside the one being written (the default would read 16 ahead).
    const body = Readable.from(this.lines(jobId, run.id, query.format, query.outcome), { highWaterMark: 1 });
    return new StreamableFile(body, { type: MEDIA_TYPES[query.format], disposition: `attachment; filename="${reportName(run, query.format)}"` });
  }

  /** POST …/report?save=true: the report of a finished run as a user file (CSV, or ndjson), answered as an internal link to it. */
  async save(jobId: number, query: JobReportQuery, user: AuthenticatedUser): Promise<DownloadLinkDto> {
    const format = query.format === 'ndjson' ? 'ndjson' : 'csv';
    const run = await this.resolveRun(jobId, query.runId);
    if (!FINISHED.includes(run.status)) {
      throw new ConflictError(`Run ${run.id} is ${run.status}: only a finished run's report can be saved`, 'JOB_STATE_CONFLICT', { runId: run.id, status: run.status });
    }
    await this.store.ensureDir();
    const now = this.clock.now();
    const file = {
      id: randomUUID(),
      owner: user.username,
      fileName: reportName(run, format),
      type: USER_FILE_TYPES.jobReport,
      mimeType: MEDIA_TYPES[format].split(';')[0],
      state: 'running' as const,
      size: 0,
      createdAt: now,
      expiresAt: now + this.config.files.retentionMs,
      entriesTotal: run.read,
      entriesDone: 0,
      bytesDone: 0,
      errorCount: 0,
      nodeId: this.config.nodeId,
      leaseExpiresAt: now + this.config.files.leaseMs,
    };
    await this.files.insert(file);
    try {
      const progress = { rows: 0 };
      await pipeline(Readable.from(this.lines(jobId, run.id, format, query.outcome, progress), { highWaterMark: 1 }), this.store.createPartial(file.id));
      const size = await this.store.commit(file.id);
      await this.files.markReady(file.id, size, this.clock.now(), { entriesDone: progress.rows, bytesDone: size, errorCount: 0 });
      return toLinkDto(await this.links.createInternal(user.username, { ...file, state: 'ready', size }));
    } catch (e) {
      await this.files.markEnded(file.id, 'failed', this.clock.now(), (e as Error)?.message ?? String(e));
      await this.store.remove(file.id);
      throw e;
    }
  }

  private async *lines(
    jobId: number,
    runId: string,
    format: Exclude<ReportFormat, 'json'>,
    outcomes: ReportQuery['outcomes'],
    progress = { rows: 0 },
  ): AsyncGenerator<Buffer> {
    const times = new IsoTimes();
    const line = format === 'csv' ? (row: ReportRow) => csvLine(row, times) : (row: ReportRow) => `${JSON.stringify(toRowDto(row, times))}\n`;
    if (format === 'csv') yield Buffer.from(`${CSV_COLUMNS.join(',')}\r\n`);
    let after: string | undefined;
    for (;;) {
      const rows = await this.repo.reportRows(jobId, runId, { outcomes, after, limit: STREAM_BATCH });
      if (rows.length === 0) return;
      // One flat buffer a batch: a string grown row by row is a tree of pieces that lives on the heap until written.
      progress.rows += rows.length;
      // Chunks of flat text, each small enough to die young: a string grown row by row is a tree of pieces,
      // and one over V8's large-object size (128 KiB) is allocated in the old generation, freed only by a full collection.
      let parts: string[] = [];
      let chars = 0;
      for (const row of rows) {
        const text = line(row);
        parts.push(text);
        chars += text.length;
        if (chars >= CHUNK_CHARS) {
          yield Buffer.from(parts.join(''), 'utf8');
          parts = [];
          chars = 0;
        }
      }
      if (parts.length > 0) yield Buffer.from(parts.join(''), 'utf8');
      if (rows.length < STREAM_BATCH) return;
      after = rows[rows.length - 1].docId;
    }
  }

  private async resolveRun(jobId: number, runId: string | undefined): Promise<JobRunRecord> {
    const job = await this.repo.findJob(jobId);
    if (!job) throw new NotFoundError('job', String(jobId));
    if (runId !== undefined && !runId.startsWith(`${jobId}_`)) throw new NotFoundError('run', runId, `Run '${runId}' is not a run of job ${jobId}`);
    const run = runId === undefined ? await this.repo.latestRun(jobId) : await this.repo.findRun(runId);
    if (!run) throw new NotFoundError('run', runId ?? String(jobId), runId ? `Run '${runId}' not found` : `Job ${jobId} has not run yet`);
    // Per-document state is kept for the latest two runs (run-errors needs the previous one).
    if (run.runNumber < job.runCount - 1) {
      throw new GoneError(`The report of run ${run.id} is no longer kept: reports exist for the latest two runs of a job`, 'REPORT_GONE', { runId: run.id });
    }
    return run;
  }
}

export function toRowDto(row: ReportRow, times = new IsoTimes()): ReportRowDto {
  return {
    docId: row.docId,
    relPath: row.relPath,
    sourcePath: row.sourcePath,
    targetId: row.targetId,
    outcome: row.outcome,
    message: row.message,
    checksum: row.checksum,
    verified: row.verified,
    readAt: times.format(row.readAt),
    finishedAt: row.finishedAt === null ? null : times.format(row.finishedAt),
    plan: row.plan,
  };
}

/** One CSV line of CSV_COLUMNS, straight from the row (a report streams a million of them: no object in between). */
export function csvLine(row: ReportRow, times: IsoTimes): string {
  return (
    `${csvField(row.docId)},${csvField(row.relPath)},${csvField(row.sourcePath)},${csvField(row.targetId)},${row.outcome},` +
    `${csvField(row.message)},${csvField(row.checksum)},${csvField(row.verified)},${times.format(row.readAt)},${row.finishedAt === null ? '' : times.format(row.finishedAt)},${csvField(row.plan)}\r\n`
  );
}

const DAY_MS = 86_400_000;

/**
 * ISO 8601 UTC of epoch milliseconds, as Date.prototype.toISOString writes it: the date part is kept from the
 * previous call of the same day (a run's rows share a few days at most), the time computed, so a million rows
 * make no Date. A third of the report's CPU went to toISOString before.
 */
export class IsoTimes {
  private day = Number.NaN;
  private date = '';

  format(ms: number): string {
    const day = Math.floor(ms / DAY_MS);
    if (day !== this.day) {
      this.day = day;
      this.date = new Date(day * DAY_MS).toISOString().slice(0, 11);
    }
    let rest = ms - day * DAY_MS;
    const hours = Math.floor(rest / 3_600_000);
    rest -= hours * 3_600_000;
    const minutes = Math.floor(rest / 60_000);
    rest -= minutes * 60_000;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    return `${this.date}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`;
  }
}

function pad(n: number, width: number): string {
  return n >= (width === 2 ? 10 : 100) ? String(n) : String(n).padStart(width, '0');
}

function counters(run: JobRunRecord): Record<string, number> {
  return { read: run.read, written: run.written, skipped: run.skipped, failed: run.failed, removed: run.removed };
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; null is empty. */
function csvField(value: string | null): string {
  if (value === null) return '';
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function reportName(run: JobRunRecord, format: string): string {
  return `job-${run.jobId}-run-${run.id}-${run.dryRun ? 'plan' : 'report'}.${format}`;
}

function encodeCursor(docId: string): string {
  return Buffer.from(docId, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor of this report");
  return Buffer.from(cursor, 'base64url').toString('utf8');
}
