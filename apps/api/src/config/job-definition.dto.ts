import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { COLLECTION_NAME } from '@gateway/connector-api';
import { CONNECTOR_ID_PATTERN } from './connector-id';

/** Defaults of an indexing job's options (a job whose target connector has the `index` group). */
export const INDEX_JOB_DEFAULTS = { extract: true, maxContentChars: 1_000_000, defaultAcl: '__everyone__' } as const;

export const ON_EXISTING = ['version', 'overwrite', 'skip'] as const;
export type OnExisting = (typeof ON_EXISTING)[number];

const FOLDER_PATH = /^\/.*$/;

export class JobSourceDto {
  @ApiProperty({ example: 'fs', description: 'Connector to read from' })
  @IsString()
  @Matches(CONNECTOR_ID_PATTERN, { message: 'connectorId must be a connector id' })
  connectorId!: string;

  @ApiProperty({ example: '/in', description: 'Absolute folder path in the source repository' })
  @IsString()
  @Matches(FOLDER_PATH, { message: 'folderPath must be an absolute path starting with /' })
  @MaxLength(4096)
  folderPath!: string;

  @ApiPropertyOptional({ default: true, description: 'Also read the documents of every subfolder (the tree is recreated at the target)' })
  @IsOptional()
  @IsBoolean()
  recursive?: boolean;
}

export class JobTargetDto {
  @ApiProperty({ example: 'archive', description: 'Connector to write to: a content repository, or a search connector (an indexing job)' })
  @IsString()
  @Matches(CONNECTOR_ID_PATTERN, { message: 'connectorId must be a connector id' })
  connectorId!: string;

  // Optional here because an indexing target has none; a repository target without it is refused by the service (400 naming it).
  @ApiPropertyOptional({ example: '/out', description: 'Absolute folder path in the target repository (created when missing); required unless the target is a search connector' })
  @IsOptional()
  @IsString()
  @Matches(FOLDER_PATH, { message: 'folderPath must be an absolute path starting with /' })
  @MaxLength(4096)
  folderPath?: string;

  @ApiPropertyOptional({ example: 'documents', description: "Indexing jobs only: the collection (core, index) to fill; default: the search connector's configured collection" })
  @IsOptional()
  @IsString()
  @Matches(COLLECTION_NAME, { message: 'collection must be a collection name (letters, digits, . _ -; not starting with . or _)' })
  collection?: string;
}

export class JobOptionsDto {
  @ApiPropertyOptional({
    enum: ON_EXISTING,
    default: 'skip',
    description:
      'A document that already exists at the target path: `version` adds a new version (target needs content update), ' +
      '`overwrite` replaces it (its versions are deleted), `skip` leaves it and records a duplicate',
  })
  @IsOptional()
  @IsIn(ON_EXISTING, { message: `onExisting must be one of ${ON_EXISTING.join(', ')}` })
  onExisting?: OnExisting;

  @ApiPropertyOptional({ default: false, description: 'Carry every version, oldest first (source needs versioning, target content update)' })
  @IsOptional()
  @IsBoolean()
  copyVersions?: boolean;

  @ApiPropertyOptional({ default: 0, minimum: 0, description: 'The run fails once this many documents failed; 0 = unlimited' })
  @IsOptional()
  @IsInt()
  @Min(0)
  maxErrors?: number;

  @ApiPropertyOptional({ default: false, description: 'Move instead of copy: delete each source document once written (counted as removed)' })
  @IsOptional()
  @IsBoolean()
  removeSource?: boolean;

  @ApiPropertyOptional({
    type: [String],
    example: ['*.tmp', '~*'],
    description: 'File-name patterns (`*` any run, `?` one character) of documents to skip; recorded as skipped (s)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  exclude?: string[];

  @ApiPropertyOptional({ default: true, description: 'Indexing jobs only: extract the text of each document into `content` (false: metadata only)' })
  @IsOptional()
  @IsBoolean()
  extract?: boolean;

  @ApiPropertyOptional({ default: 1_000_000, minimum: 1, description: 'Indexing jobs only: longer extracted text is cut (the run records a warning)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000_000)
  maxContentChars?: number;

  @ApiPropertyOptional({ default: '__everyone__', description: 'Indexing jobs only: the `acl_read` value of documents from a source without the `acls` group' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  defaultAcl?: string;
}

export class JobDefinitionDto {
  @ApiProperty({ example: 'archive-inbox', description: 'Unique name' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  jobName!: string;

  @ApiPropertyOptional({ example: 'migration', default: 'default', description: 'Group, the statuslist filter' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  jobGroup?: string;

  @ApiProperty({ type: JobSourceDto })
  // Without these a missing source passed validation and failed later as a 500 (issue 16, defect 2).
  @IsDefined({ message: 'source is required: an object with connectorId and folderPath' })
  @IsObject({ message: 'source must be an object with connectorId and folderPath' })
  @ValidateNested()
  @Type(() => JobSourceDto)
  source!: JobSourceDto;

  @ApiProperty({ type: JobTargetDto })
  // Without these a missing target passed validation and failed later as a 500 (issue 16, defect 2).
  @IsDefined({ message: 'target is required: an object with connectorId and folderPath' })
  @IsObject({ message: 'target must be an object with connectorId and folderPath' })
  @ValidateNested()
  @Type(() => JobTargetDto)
  target!: JobTargetDto;

  @ApiPropertyOptional({ type: JobOptionsDto })
  @IsOptional()
  @IsObject({ message: 'options must be an object' })
  @ValidateNested()
  @Type(() => JobOptionsDto)
  options?: JobOptionsDto;
}

/** A definition with every default applied, as stored and returned. */
export interface JobDefinition {
  jobName: string;
  jobGroup: string;
  source: { connectorId: string; folderPath: string; recursive: boolean };
  /** A repository target has folderPath; an indexing target (a search connector) has collection instead. */
  target: { connectorId: string; folderPath?: string; collection?: string };
  options: {
    onExisting: OnExisting;
    copyVersions: boolean;
    maxErrors: number;
    removeSource: boolean;
    exclude: string[];
    /** Indexing jobs only (INDEX_JOB_DEFAULTS applied by the definitions service). */
    extract?: boolean;
    maxContentChars?: number;
    defaultAcl?: string;
  };
}

/** An indexing job's definition: its target names a collection, its index options are set. */
export function isIndexingJob(def: JobDefinition): boolean {
  return def.target.collection !== undefined;
}

class JobSourceView {
  @ApiProperty() connectorId!: string;
  @ApiProperty() folderPath!: string;
  @ApiProperty() recursive!: boolean;
}
class JobTargetView {
  @ApiProperty() connectorId!: string;
  @ApiPropertyOptional({ description: 'Repository targets' }) folderPath?: string;
  @ApiPropertyOptional({ description: 'Indexing targets' }) collection?: string;
}
class JobOptionsView {
  @ApiProperty({ enum: ON_EXISTING }) onExisting!: OnExisting;
  @ApiProperty() copyVersions!: boolean;
  @ApiProperty() maxErrors!: number;
  @ApiProperty() removeSource!: boolean;
  @ApiProperty({ type: [String] }) exclude!: string[];
  @ApiPropertyOptional({ description: 'Indexing jobs' }) extract?: boolean;
  @ApiPropertyOptional({ description: 'Indexing jobs' }) maxContentChars?: number;
  @ApiPropertyOptional({ description: 'Indexing jobs' }) defaultAcl?: string;
}

export class JobDto {
  @ApiProperty({ example: 1 }) jobId!: number;
  @ApiProperty() jobName!: string;
  @ApiProperty() jobGroup!: string;
  @ApiProperty({ enum: ['api', 'config'], description: '`config`: declared in the configuration file, which owns it (read-only here)' })
  origin!: 'api' | 'config';
  @ApiProperty({ type: JobSourceView }) source!: JobSourceView;
  @ApiProperty({ type: JobTargetView }) target!: JobTargetView;
  @ApiProperty({ type: JobOptionsView }) options!: JobOptionsView;
  @ApiProperty({ description: 'epoch ms' }) createdDate!: number;
  @ApiProperty({ description: 'epoch ms' }) modifiedDate!: number;
}

export function withDefaults(input: JobDefinitionDto): JobDefinition {
  return {
    jobName: input.jobName,
    jobGroup: input.jobGroup ?? 'default',
    source: { connectorId: input.source.connectorId, folderPath: normalizeFolder(input.source.folderPath), recursive: input.source.recursive ?? true },
    target: {
      connectorId: input.target.connectorId,
      ...(input.target.folderPath !== undefined ? { folderPath: normalizeFolder(input.target.folderPath) } : {}),
      ...(input.target.collection !== undefined ? { collection: input.target.collection } : {}),
    },
    options: {
      onExisting: input.options?.onExisting ?? 'skip',
      copyVersions: input.options?.copyVersions ?? false,
      maxErrors: input.options?.maxErrors ?? 0,
      removeSource: input.options?.removeSource ?? false,
      exclude: input.options?.exclude ?? [],
      ...(input.options?.extract !== undefined ? { extract: input.options.extract } : {}),
      ...(input.options?.maxContentChars !== undefined ? { maxContentChars: input.options.maxContentChars } : {}),
      ...(input.options?.defaultAcl !== undefined ? { defaultAcl: input.options.defaultAcl } : {}),
    },
  };
}

function normalizeFolder(p: string): string {
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}
