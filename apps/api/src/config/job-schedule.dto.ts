import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export const SCHEDULE_OVERLAP = ['skip', 'queue'] as const;
export const SCHEDULE_MISSED = ['skip', 'runOnce'] as const;

/** A job's schedule as given (the expression and zone are checked by the definitions service: cron-schedule.ts). */
export class JobScheduleDto {
  @ApiProperty({ example: '0 3 * * *', description: 'Cron expression, exactly 5 fields: minute hour day-of-month month day-of-week' })
  @IsDefined({ message: 'cron is required' })
  @IsString()
  @MaxLength(200)
  cron!: string;

  @ApiPropertyOptional({
    example: 'Europe/Paris',
    default: 'UTC',
    description:
      'IANA time zone of the expression. Daylight-saving time as cron: a time in the hour skipped in spring does not run; ' +
      'with a fixed hour, a time in the hour repeated in autumn runs once (with `*` in the hour, the schedule follows elapsed time)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  timeZone?: string;

  @ApiPropertyOptional({ default: true, description: 'false keeps the schedule without running it (nextRun null)' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    enum: SCHEDULE_OVERLAP,
    default: 'skip',
    description: 'A start due while a run of the job is active (or paused): `skip` records it as skipped; `queue` starts it when the run ends (one pending start at most; later ones are skipped)',
  })
  @IsOptional()
  @IsIn(SCHEDULE_OVERLAP, { message: `overlap must be one of ${SCHEDULE_OVERLAP.join(', ')}` })
  overlap?: (typeof SCHEDULE_OVERLAP)[number];

  @ApiPropertyOptional({
    enum: SCHEDULE_MISSED,
    default: 'skip',
    description: 'Starts that fell due while no gateway was running (handled over a minute late): `skip` records them as missed; `runOnce` runs one start for all of them',
  })
  @IsOptional()
  @IsIn(SCHEDULE_MISSED, { message: `missed must be one of ${SCHEDULE_MISSED.join(', ')}` })
  missed?: (typeof SCHEDULE_MISSED)[number];
}

/** A schedule with its defaults, as stored in the definition. */
export interface JobSchedule {
  cron: string;
  timeZone: string;
  enabled: boolean;
  overlap: (typeof SCHEDULE_OVERLAP)[number];
  missed: (typeof SCHEDULE_MISSED)[number];
}

export function scheduleWithDefaults(input: JobScheduleDto): JobSchedule {
  return {
    cron: input.cron.trim().replace(/\s+/g, ' '),
    timeZone: input.timeZone ?? 'UTC',
    enabled: input.enabled ?? true,
    overlap: input.overlap ?? 'skip',
    missed: input.missed ?? 'skip',
  };
}

export class JobScheduleView {
  @ApiProperty({ example: '0 3 * * *' }) cron!: string;
  @ApiProperty({ example: 'Europe/Paris' }) timeZone!: string;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ enum: SCHEDULE_OVERLAP }) overlap!: (typeof SCHEDULE_OVERLAP)[number];
  @ApiProperty({ enum: SCHEDULE_MISSED }) missed!: (typeof SCHEDULE_MISSED)[number];
}

/** What the schedule did lately (ISO 8601 UTC instants; null when none). */
export class JobScheduleStateView {
  @ApiProperty({ type: String, nullable: true, description: 'The latest due start handled (started, skipped, queued, missed or failed)' })
  lastDue!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The latest due start skipped because a run was active (overlap `skip`, or a second pending start)' })
  lastSkipped!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The start waiting for the active run to end (overlap `queue`)' })
  queued!: string | null;
}
