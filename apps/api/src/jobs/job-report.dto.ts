import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import type { ReportOutcome } from '@gateway/persistence';

export const REPORT_OUTCOMES = ['p', 'r', 'e', 'd', 's'] as const satisfies readonly ReportOutcome[];
export const REPORT_FORMATS = ['json', 'csv', 'ndjson'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];
export const REPORT_PAGE_SIZE = 1000;
const MAX_REPORT_PAGE_SIZE = 10_000;

/** `outcome=e&outcome=r` and `outcome=e,r` both give ['e', 'r']. */
const toList = ({ value }: { value: unknown }) => (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).filter((v) => v !== '');

export class JobReportQuery {
  @ApiPropertyOptional({ description: 'The run, `<jobId>_<n>`; default the latest. Kept for the latest two runs of a job', example: '3_2' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,9}_[1-9]\d{0,9}$/, { message: "runId must be a run id '<jobId>_<n>'" })
  runId?: string;

  @ApiPropertyOptional({
    enum: REPORT_OUTCOMES,
    isArray: true,
    description: 'Only these outcomes (repeatable, or comma-separated): p processed, e error, d duplicate, s skipped, r read and not finished',
  })
  @IsOptional()
  @Transform(toList)
  @IsIn([...REPORT_OUTCOMES], { each: true, message: `outcome must be among ${REPORT_OUTCOMES.join(', ')}` })
  outcome?: ReportOutcome[];

  @ApiPropertyOptional({ enum: REPORT_FORMATS, description: 'json (default; paged), csv or ndjson (the whole run, streamed)' })
  @IsOptional()
  @IsIn([...REPORT_FORMATS], { message: `format must be one of ${REPORT_FORMATS.join(', ')}` })
  format?: ReportFormat;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_REPORT_PAGE_SIZE, description: `json: rows per page (default ${REPORT_PAGE_SIZE})` })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MAX_REPORT_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'json: the X-Next-Cursor value of the previous page (opaque)' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(8192)
  cursor?: string;
}

export class SaveJobReportQuery extends JobReportQuery {
  @ApiProperty({ enum: ['true'], description: 'Must be true: saves the report (CSV, or ndjson with format=ndjson) as a user file' })
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'save is required and must be true' })
  save!: boolean;
}

export class ReportRowDto {
  @ApiProperty({ description: 'Source id of the document' }) docId!: string;
  @ApiProperty({ description: 'Path below the source folder' }) relPath!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Source path; null once audit retention pruned the record' }) sourcePath!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Target id (copies) or index document id (indexing)' }) targetId!: string | null;
  @ApiProperty({ enum: REPORT_OUTCOMES, description: 'p processed, e error, d duplicate, s skipped, r read and not finished' }) outcome!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The error, skip reason or note of the outcome' }) message!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Copy jobs: SHA-256 (hex) of the bytes written, hashed as they streamed from the source; null when nothing was written' })
  checksum!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'md5-etag',
    description: "How the copy was verified (the job's `verify`): the target's own hash (`sha256`, `md5-etag`, `quickxor`), `read-back`, `size` or `none`",
  })
  verified!: string | null;
  @ApiProperty({ example: '2025-03-01T13:05:09.120Z', description: 'When the run read (claimed) the document, ISO 8601 UTC' }) readAt!: string;
  @ApiProperty({ nullable: true, type: String, example: '2025-03-01T13:05:09.480Z', description: 'When its outcome was recorded; null while unfinished' })
  finishedAt!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    enum: ['create', 'skip', 'overwrite', 'version', 'rename', 'fail'],
    description:
      'Dry runs only (`start?dryRun=true`): what a real run would do with the document, its reason or target name in `message`; ' +
      'outcome p for create/overwrite/version/rename, d for skip (exists), s for skip (excluded, unchanged), e for fail. Null on a real run',
  })
  plan!: string | null;
}

export class ReportCountsDto {
  @ApiProperty() p!: number;
  @ApiProperty() e!: number;
  @ApiProperty() d!: number;
  @ApiProperty() s!: number;
  @ApiProperty({ description: 'Read and not finished' }) r!: number;
}

export class JobReportDto {
  @ApiProperty() jobId!: number;
  @ApiProperty({ example: '3_2' }) runId!: string;
  @ApiProperty({ example: 'COMPLETED' }) status!: string;
  @ApiProperty({ description: "A dry run: the rows are plans (`plan`), the counters what a real run would have done; nothing was written" }) dryRun!: boolean;
  @ApiProperty({ description: 'The run counters: read, written, skipped, failed, removed', example: { read: 5, written: 3, skipped: 1, failed: 1, removed: 0 } })
  counters!: Record<string, number>;
  @ApiPropertyOptional({
    type: ReportCountsDto,
    description: 'First page only (no cursor): rows by outcome, whatever the filter. p+e+d+s+r = read, p = written, e = failed, d+s = skipped (an indexing run that swept also has its `removed` documents under p)',
  })
  counts?: ReportCountsDto;
  @ApiPropertyOptional({
    description:
      'Dry runs, first page only: every distinct property, type, principal and permission a mapping could not map, with the documents that had it ' +
      '(each kind present, empty without mappings)',
    example: { property: { 'cm:title': 12 }, type: {}, principal: { GROUP_site_x: 3 }, permission: {} },
  })
  unmapped?: Record<'property' | 'type' | 'principal' | 'permission', Record<string, number>>;
  @ApiProperty({ type: ReportRowDto, isArray: true }) rows!: ReportRowDto[];
}
