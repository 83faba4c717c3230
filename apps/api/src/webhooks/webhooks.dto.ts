import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { RUN_EVENTS } from '@gateway/persistence';

export const DELIVERIES_PAGE_SIZE = 100;
const MAX_DELIVERIES_PAGE_SIZE = 1000;

export class WebhookDto {
  @ApiProperty({ example: '0b6c7d1e-4f5a-4b3c-9d2e-1f0a9b8c7d6e', description: 'A UUID (admin API), or `config-<hash of the url>` for a webhook of the configuration file' })
  id!: string;

  @ApiProperty({ example: 'https://ops.example.com/hooks/gateway' })
  url!: string;

  @ApiProperty({ enum: RUN_EVENTS, isArray: true })
  events!: string[];

  @ApiProperty({ enum: ['api', 'config'], description: 'config: declared in the configuration file, read-only here' })
  origin!: string;

  @ApiProperty({ example: '2026-11-29T08:00:00.000Z' })
  createdAt!: string;

  @ApiProperty({ description: 'Deliveries not ended yet: waiting, in back-off or in flight' })
  pendingDeliveries!: number;
}

export class WebhookAttemptDto {
  @ApiProperty({ description: 'Attempt id: attempts are listed newest first, and `cursor` pages on it' })
  id!: number;

  @ApiProperty({ example: '2026-11-29T08:00:01.250Z', description: 'When the attempt started' })
  time!: string;

  @ApiProperty({ example: 'evt_5b0f2c3e-9d0a-4c1e-8a7b-2f3e4d5c6b7a', description: 'The event id (Gateway-Event-Id): the same on every attempt of the event' })
  eventId!: string;

  @ApiProperty({ enum: RUN_EVENTS })
  event!: string;

  @ApiProperty() jobId!: number;
  @ApiProperty({ example: '3_2' }) runId!: string;

  @ApiProperty({ description: '1 for the first attempt of the event at this endpoint' })
  attempt!: number;

  @ApiProperty({ nullable: true, type: Number, description: "The endpoint's HTTP status; null when there was no answer (see error)" })
  statusCode!: number | null;

  @ApiProperty({ nullable: true, type: String, example: 'timed out after 10000 ms', description: 'Why there was no answer' })
  error!: string | null;

  @ApiProperty({ enum: ['delivered', 'retry', 'failed'], description: 'delivered (2xx); retry (5xx, time-out or network error: next attempt at nextAttempt); failed (4xx or redirect, or the retry window is over: not retried)' })
  outcome!: string;

  @ApiProperty({ nullable: true, type: String, example: '2026-11-29T08:00:21.250Z', description: 'outcome retry: when the next attempt is due' })
  nextAttempt!: string | null;

  @ApiProperty({ description: 'The exchange, ms' })
  durationMs!: number;
}

export class WebhookDeliveriesQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_DELIVERIES_PAGE_SIZE, description: `Attempts per page (default ${DELIVERIES_PAGE_SIZE})` })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MAX_DELIVERIES_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The X-Next-Cursor value of the previous page' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,15}$/, { message: 'cursor must be the X-Next-Cursor value of a previous page' })
  cursor?: string;
}
