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
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { CONNECTOR_ID_PATTERN } from '../connectors/connector-id';

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
  @ApiProperty({ example: 'archive', description: 'Connector to write to' })
  @IsString()
  @Matches(CONNECTOR_ID_PATTERN, { message: 'connectorId must be a connector id' })
  connectorId!: string;

  @ApiProperty({ example: '/out', description: 'Absolute folder path in the target repository (created when missing)' })
  @IsString()
  @Matches(FOLDER_PATH, { message: 'folderPath must be an absolute path starting with /' })
  @MaxLength(4096)
  folderPath!: string;
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
  target: { connectorId: string; folderPath: string };
  options: { onExisting: OnExisting; copyVersions: boolean; maxErrors: number; removeSource: boolean; exclude: string[] };
}

class JobSourceView {
  @ApiProperty() connectorId!: string;
  @ApiProperty() folderPath!: string;
  @ApiProperty() recursive!: boolean;
}
class JobTargetView {
  @ApiProperty() connectorId!: string;
  @ApiProperty() folderPath!: string;
}
class JobOptionsView {
  @ApiProperty({ enum: ON_EXISTING }) onExisting!: OnExisting;
  @ApiProperty() copyVersions!: boolean;
  @ApiProperty() maxErrors!: number;
  @ApiProperty() removeSource!: boolean;
  @ApiProperty({ type: [String] }) exclude!: string[];
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
    target: { connectorId: input.target.connectorId, folderPath: normalizeFolder(input.target.folderPath) },
    options: {
      onExisting: input.options?.onExisting ?? 'skip',
      copyVersions: input.options?.copyVersions ?? false,
      maxErrors: input.options?.maxErrors ?? 0,
      removeSource: input.options?.removeSource ?? false,
      exclude: input.options?.exclude ?? [],
    },
  };
}

function normalizeFolder(p: string): string {
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}
