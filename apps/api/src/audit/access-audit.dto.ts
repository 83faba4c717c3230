import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ACCESS_OPERATIONS, ACCESS_RESULTS, type AccessOperation } from '@gateway/persistence';

export const AUDIT_FORMATS = ['json', 'csv', 'ndjson'] as const;
export type AuditFormat = (typeof AUDIT_FORMATS)[number];
export const AUDIT_PAGE_SIZE = 1000;
const MAX_AUDIT_PAGE_SIZE = 10_000;
/** A date alone is read as UTC; a date-time without a zone would be read in the server's zone, so it needs one. */
const WITH_ZONE = /^\d{4}-\d\d-\d\d$|(Z|[+-]\d\d(:?\d\d)?)$/;

export class AccessAuditQuery {
  @ApiPropertyOptional({ description: "Only this user's reads (`public` for downloads through links)", example: 'alice' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  user?: string;

  @ApiPropertyOptional({ description: 'Only reads of this document id (as the connector names it; a user file id for connector `__internal__`)' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  documentId?: string;

  @ApiPropertyOptional({ description: 'Only reads through this connector', example: 'fs' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  connectorId?: string;

  @ApiPropertyOptional({ description: 'Reads that ended at or after this time: ISO 8601, a date (UTC) or a date-time with its zone', example: '2026-11-01T00:00:00Z' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date-time' })
  @Matches(WITH_ZONE, { message: 'from must be a date (UTC) or a date-time with its zone (Z or ±hh:mm)' })
  from?: string;

  @ApiPropertyOptional({ description: 'Reads that ended before this time: ISO 8601, a date (UTC) or a date-time with its zone', example: '2026-12-01T00:00:00Z' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date-time' })
  @Matches(WITH_ZONE, { message: 'to must be a date (UTC) or a date-time with its zone (Z or ±hh:mm)' })
  to?: string;

  @ApiPropertyOptional({ enum: ACCESS_OPERATIONS, description: 'Only this operation' })
  @IsOptional()
  @IsIn([...ACCESS_OPERATIONS], { message: `operation must be one of ${ACCESS_OPERATIONS.join(', ')}` })
  operation?: AccessOperation;

  @ApiPropertyOptional({ enum: AUDIT_FORMATS, description: 'json (default; paged), csv or ndjson (every matching row, streamed)' })
  @IsOptional()
  @IsIn([...AUDIT_FORMATS], { message: `format must be one of ${AUDIT_FORMATS.join(', ')}` })
  format?: AuditFormat;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE_SIZE, description: `json: rows per page (default ${AUDIT_PAGE_SIZE})` })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MAX_AUDIT_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'json: the X-Next-Cursor value of the previous page (opaque)' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,15}$/, { message: 'cursor must be a cursor of this listing' })
  cursor?: string;
}

export class AccessAuditRowDto {
  @ApiProperty({ example: '2026-11-29T09:12:03.481Z', description: 'When the answer ended (last byte, cut, failure or hand-off), ISO 8601 UTC' })
  time!: string;
  @ApiProperty({ example: 'alice', description: 'The authenticated user; `public` for a download through a link' })
  user!: string;
  @ApiProperty({ nullable: true, type: String, description: "The link of a public download: the first 16 characters of the SHA-256 (base64url) of its key; null otherwise" })
  linkId!: string | null;
  @ApiProperty({ nullable: true, type: String, example: '203.0.113.7', description: 'Client address as TRUST_PROXY determines it' })
  clientAddress!: string | null;
  @ApiProperty({ enum: ACCESS_OPERATIONS }) operation!: string;
  @ApiProperty({ example: 'fs', description: 'Connector of the document; `__internal__` for user files (export zips)' }) connectorId!: string;
  @ApiProperty() documentId!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Path of the document (the name, for a user file); null where the repository would pay a call for it (CMIS)' })
  path!: string | null;
  @ApiProperty({ type: 'integer', description: 'Bytes sent (for an offload: handed to the proxy to send)' }) bytes!: number;
  @ApiProperty({ enum: ACCESS_RESULTS, description: 'complete, cut (the client went away) or error (the source failed)' }) result!: string;
}
