import { ApiProperty } from '@nestjs/swagger';
import { JOB_STATUSES, stateTableMarkdown } from './job-states';

export class JobStatusDto {
  @ApiProperty({ example: 1 }) jobId!: number;
  @ApiProperty({ example: 'archive-inbox' }) jobName!: string;
  @ApiProperty({ example: 'migration', description: 'Not in the spec record; the statuslist filter' }) jobGroup!: string;
  @ApiProperty({ example: '1_3', nullable: true, type: String, description: '`<jobId>_<run number>`; null before the first run' })
  jobRunId!: string | null;
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
  @ApiProperty() canStartJob!: boolean;
  @ApiProperty() canRestartJob!: boolean;
  @ApiProperty() canPauseJob!: boolean;
  @ApiProperty() canAbortJob!: boolean;
  @ApiProperty() canResumeJob!: boolean;
  @ApiProperty() canKillJob!: boolean;
}
