import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { FILE_NAME_PATTERN, IsFileName } from '../common/file-name';
import { ArrayNotEmpty, IsArray, IsBoolean, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength, Min, ValidateNested } from 'class-validator';

const MAX_ID = 4096;
const MAX_NAME = 1024;

/** The fixed `connectorId` of links to files the gateway manages itself. */
export const INTERNAL_CONNECTOR_ID = '__internal__';

/** Values of a file handle's `type`. */
export const USER_FILE_TYPES = {
  /** A zip built by POST /api/repo/batch. */
  batch: 'batch',
  /** A job run's report saved by POST /api/job/service/{jobid}/report?save=true. */
  jobReport: 'job-report',
} as const;

export const USER_FILE_STATES = ['running', 'ready', 'stopped', 'failed'] as const;

/** 'true'/'false' (any case) become booleans; anything else stays a string and fails @IsBoolean. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : value;
};

// ---- inputs -----------------------------------------------------------------

export class UserFileIdQuery {
  @ApiProperty({ description: 'File handle id, from the user file list (or `docId` of a batch result)', example: '3f0c9a52-7d3e-4b7a-9a43-5c1a2f0e9b11' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  id!: string;
}

export class LinkKeyQuery {
  @ApiProperty({ description: 'Link key (`key` of create-link, `id` in the link list and the batch result)', example: 'k3G2x7YbQ0v1mZ8sW4pR9tL6uE5nA2cD0fH1jK3lM4o' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  key!: string;
}

export class CreateLinkQuery {
  @ApiProperty({
    description: 'internal=true: the id of one of your user files; internal=false: the repository id of a document on `connectorId`',
    example: '3f0c9a52-7d3e-4b7a-9a43-5c1a2f0e9b11',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  docId!: string;

  @ApiProperty({ description: 'true for a user file, false for a repository document', example: true })
  @Transform(toBoolean)
  @IsBoolean()
  internal!: boolean;

  @ApiPropertyOptional({
    description: `Connector that reaches the document; required when internal=false. For internal=true, absent or '${INTERNAL_CONNECTOR_ID}'`,
    example: 'fs',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  connectorId?: string;

  @ApiPropertyOptional({
    description:
      'Name offered to whoever downloads. Required when connectorId is absent (spec 4.1); otherwise it defaults to ' +
      "the user file's name (internal) or is left empty and the document's own name is used at download time (external). " +
      "One name: no '/' or '\\', not '.' or '..', no control characters",
    example: 'quarterly-report.zip',
    maxLength: MAX_NAME,
    pattern: FILE_NAME_PATTERN,
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_NAME)
  @IsFileName()
  fileName?: string;

  @ApiPropertyOptional({ description: 'Days until the link expires (default 3; 1 to GATEWAY_LINK_MAX_LIFESPAN_DAYS, default 365)', example: 3, default: 3 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  lifeSpan?: number;
}

export class BatchEntryDto {
  @ApiPropertyOptional({
    description:
      'Name (or relative path, `/`-separated) inside the zip; default the document name. Sanitised: `..`, leading `/`, drive letters, ' +
      'control and Windows-reserved characters cannot escape or break extraction. Duplicates get ` (1)`, ` (2)`... (case-insensitively); ' +
      '`errors.txt` is reserved',
    example: 'reports/q1.pdf',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_NAME)
  fileName?: string;

  @ApiProperty({ description: 'Connector id', example: 'fs' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  connId!: string;

  @ApiProperty({ description: 'Repository id of the document', example: 'fs-cmVwb3J0LnBkZg' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  id!: string;
}

export class BatchRequestDto {
  @ApiProperty({ type: [BatchEntryDto], description: 'Documents to zip, in this order (at most GATEWAY_BATCH_MAX_ENTRIES, default 10000)' })
  @IsArray()
  @ArrayNotEmpty()
  // An entry that is not an object ([[]], ["x"]) would otherwise pass nested validation (issue 16, defect 4).
  @IsObject({ each: true, message: 'each batch entry must be an object with connId and id' })
  @ValidateNested({ each: true })
  @Type(() => BatchEntryDto)
  batch!: BatchEntryDto[];
}

// ---- outputs ----------------------------------------------------------------

export class ExportProgressDto {
  @ApiProperty({ description: 'Documents requested' })
  entriesTotal!: number;

  @ApiProperty({ description: 'Documents processed so far (failed ones included)' })
  entriesDone!: number;

  @ApiProperty({ description: 'Document bytes copied into the zip so far' })
  bytesDone!: number;

  @ApiProperty({ description: 'Entries that failed so far (listed in errors.txt inside the zip)' })
  errors!: number;
}

export class UserFileDto {
  @ApiProperty({ description: 'Handle id: the `id` of download/delete/stop, the `docId` of internal links' })
  id!: string;

  @ApiProperty({ example: 'batch-20250131-102233.zip' })
  fileName!: string;

  @ApiProperty({ description: 'Epoch ms after which the periodic sweep removes the file (links to it push it later)' })
  expires!: number;

  @ApiProperty({ description: 'Epoch ms' })
  createdDate!: number;

  @ApiProperty({ description: 'Bytes; 0 until the export is ready' })
  size!: number;

  @ApiProperty({ description: 'User name of the owner' })
  createdBy!: string;

  @ApiProperty({ description: 'false while the export runs (and when it failed or was stopped), true when complete' })
  ready!: boolean;

  @ApiProperty({ example: 'application/zip' })
  mimeType!: string;

  @ApiProperty({ enum: Object.values(USER_FILE_TYPES), description: '`batch`: a zip built by POST /api/repo/batch; `job-report`: a job run\'s report (POST /api/job/service/{jobid}/report?save=true)' })
  type!: string;

  @ApiProperty({ enum: USER_FILE_STATES, description: 'Beyond the spec: running, ready, stopped (by Stop user file) or failed' })
  state!: string;

  @ApiProperty({ type: ExportProgressDto, description: 'Beyond the spec: how far the export got' })
  progress!: ExportProgressDto;

  @ApiProperty({ type: String, nullable: true, description: 'Beyond the spec: why the export failed or was stopped' })
  message!: string | null;
}

class LinkFieldsDto {
  @ApiProperty({ description: 'true: a user file of the gateway; false: a document in a repository' })
  internal!: boolean;

  @ApiProperty({ description: 'Epoch ms; from then on the link answers 410' })
  expires!: number;

  @ApiProperty({ description: 'Name offered on download; may be empty (the document name is used)' })
  fileName!: string;

  @ApiProperty({ description: 'User name of the owner' })
  createdBy!: string;

  @ApiProperty({ description: `Connector of the document, or '${INTERNAL_CONNECTOR_ID}' for user files`, example: INTERNAL_CONNECTOR_ID })
  connectorId!: string;

  @ApiProperty({ description: 'User file id (internal) or repository document id (external)' })
  docId!: string;

  @ApiProperty({ description: 'Epoch ms' })
  created!: number;

  @ApiProperty({ description: 'Downloads served: each public download answered from the first byte (200, or 206 from byte 0)' })
  used!: number;
}

/** A link as listed (and as the batch result): its identifier is `id`. */
export class DownloadLinkDto extends LinkFieldsDto {
  @ApiProperty({ description: 'The link key, passed as `key` to the link and public download calls' })
  id!: string;
}

/** A link as create-link and delete-link answer it: its identifier is `key`. */
export class DownloadLinkKeyDto extends LinkFieldsDto {
  @ApiProperty({ description: 'The link key: at least 128 random bits (256), base64url' })
  key!: string;
}

export class UserFilesListDto {
  @ApiProperty({ type: [UserFileDto], description: "The caller's files, newest first" })
  files!: UserFileDto[];

  @ApiProperty({ type: [DownloadLinkDto], description: "The caller's links, newest first (expired ones until the sweep removes them)" })
  links!: DownloadLinkDto[];
}
