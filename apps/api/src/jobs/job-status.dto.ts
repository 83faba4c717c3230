import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { JOB_STATUSES, stateTableMarkdown } from './job-states';

/** The audit record types of spec 4.5 (the job service's RECORD_TYPES spells them out). */
const RECORD_TYPE_CODES = ['p', 'r', 'e', 'd', 's'] as const;

export class JobGroupQuery {
  @ApiPropertyOptional({ description: 'Only jobs of this group' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  jobGroup?: string;
}

export class StartJobQuery {
  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Beyond the spec: true plans the run instead (a dry run): every document gets the outcome a real run would record, with the action ' +
      '(create, skip, overwrite, version, rename, fail) in the run report\'s `plan`; no content is read and nothing is written to the target. ' +
      'A run of its own (`<jobId>_<n>`, `dryRun: true` in the status record), never counted as the job\'s last real run. Default false',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'dryRun must be true or false' })
  dryRun?: boolean;
}

export class RecordStatusQuery {
  @ApiProperty({ description: 'Source id of the document' })
  @IsString({ message: 'required, the source id of the document' })
  @IsNotEmpty({ message: 'required, the source id of the document' })
  @MaxLength(4096)
  docId!: string;

  @ApiProperty({ enum: [...RECORD_TYPE_CODES], description: 'p Processed, r Read, e Error, d Duplicate, s Skipped' })
  @IsIn([...RECORD_TYPE_CODES], { message: `required, one of ${RECORD_TYPE_CODES.join(', ')}` })
  recordType!: (typeof RECORD_TYPE_CODES)[number];
}

export class JobStatusDto {
  @ApiProperty({ example: 1 }) jobId!: number;
  @ApiProperty({ example: 'archive-inbox' }) jobName!: string;
  @ApiProperty({ example: 'migration', description: 'Not in the spec record; the statuslist filter' }) jobGroup!: string;
  @ApiProperty({ example: '1_3', nullable: true, type: String, description: '`<jobId>_<run number>`; null before the first run' })
  jobRunId!: string | null;
  @ApiProperty({
    description: 'Beyond the spec: the run is a dry run (`start?dryRun=true`): its counters say what a real run would do (written: would write), nothing was written',
  })
  dryRun!: boolean;
  @ApiProperty({ enum: JOB_STATUSES, description: `Upper-case code. The state table:\n\n${stateTableMarkdown()}` })
  status!: string;
  @ApiProperty({ example: 'Running' }) statusName!: string;
  @ApiProperty({ example: '2025-03-01T14:05:09', nullable: true, type: String, description: 'ISO 8601 local date-time of the gateway, no zone' })
  startTime!: string | null;
  @ApiProperty({ example: '2025-03-01T14:07:41', nullable: true, type: String, description: 'null while the run is open (running, paused)' })
  endTime!: string | null;
  @ApiProperty({ example: '2m32s', description: 'Active time of the run (pauses excluded): `12.3s`, `2m32s`, `1h02m03s`' })
  time!: string;
  @ApiProperty({ example: '657.89', description: 'Finished documents (written + skipped + failed) per second of active time, 2 decimals' })
  perSec!: string;
  @ApiProperty({ description: 'Documents read (claimed) from the source' }) read!: number;
  @ApiProperty({ description: 'Documents written to the target (new, new version, overwritten)' }) written!: number;
  @ApiProperty({ description: 'Duplicates left alone (onExisting=skip) and excluded documents' }) skipped!: number;
  @ApiProperty({ description: 'Documents that ended in error' }) failed!: number;
  @ApiProperty({ description: 'Source documents deleted after their copy (options.removeSource)' }) removed!: number;
  @ApiProperty({ description: 'Beyond the spec: documents the listing has discovered so far (for run-errors, the documents it re-runs)' }) total!: number;
  @ApiProperty({
    description:
      'Beyond the spec: bytes the finished documents streamed from the source, counted as they stream (every outcome; a direct copy between ' +
      'two filesystem connections, which the kernel makes, reads nothing in the gateway and counts none)',
  })
  bytesRead!: number;
  @ApiProperty({ description: 'Beyond the spec: the sizes of the documents written, as listed (a run-errors run, which fetches its documents again, counts none)' })
  bytesWritten!: number;
  @ApiProperty({ description: 'Beyond the spec: the listing has ended (no folder page left to list), so `total` is final' }) listingComplete!: boolean;
  @ApiProperty({ nullable: true, type: Number, example: 42.5, description: 'Beyond the spec: finished documents (written + skipped + failed) per 100 of `total`, 1 decimal; null until the listing is complete' })
  percent!: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'PT2M5S',
    description: 'Beyond the spec: ISO 8601 duration left at the throughput so far (`perSec`); null unless RUNNING, the listing complete and at least 5 s of active time known',
  })
  eta!: string | null;
  @ApiProperty() canStartJob!: boolean;
  @ApiProperty() canRestartJob!: boolean;
  @ApiProperty() canPauseJob!: boolean;
  @ApiProperty() canAbortJob!: boolean;
  @ApiProperty() canResumeJob!: boolean;
  @ApiProperty() canKillJob!: boolean;
}
