import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsDefined,
  IsInt,
  IsISO8601,
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
import { AclMappingDto, type AclMapping } from './acl-mapping.dto';
import { CONNECTOR_ID_PATTERN } from './connector-id';
import { DELETIONS, JOB_MODES, TARGET_CHANGED, type SyncOptions, type Deletions, type JobMode, type TargetChanged } from './sync-options';
import { JobScheduleDto, JobScheduleStateView, JobScheduleView, scheduleWithDefaults, type JobSchedule } from './job-schedule.dto';
import { PropertyMappingDto, type PropertyMapping } from './property-mapping.dto';

/** Defaults of an indexing job's options (a job whose target connector has the `index` group). */
export const INDEX_JOB_DEFAULTS = { extract: true, maxContentChars: 1_000_000, defaultAcl: '__everyone__' } as const;

export const ON_EXISTING = ['version', 'overwrite', 'skip'] as const;
export type OnExisting = (typeof ON_EXISTING)[number];

/** What a copy job does with a source name its target refuses (apps/api/src/jobs/target-names.ts). */
export const NAMES_MODES = ['sanitize', 'refuse'] as const;
export type NamesMode = (typeof NAMES_MODES)[number];

/** How a copy job checks each document it wrote (apps/api/src/jobs/copy-verification.ts). */
export const VERIFY_MODES = ['hash', 'size', 'none'] as const;
export type VerifyMode = (typeof VERIFY_MODES)[number];
/** What becomes of a copy that failed its check: removed from the target (a later run writes it again), or kept. */
export const ON_MISMATCH = ['remove', 'keep'] as const;
export type OnMismatch = (typeof ON_MISMATCH)[number];

const FOLDER_PATH = /^\/.*$/;

export class JobSourceDto {
  @ApiProperty({ example: 'fs', description: 'Connector to read from' })
  @IsDefined({ message: 'connectorId is required' })
  @IsString()
  @Matches(CONNECTOR_ID_PATTERN, { message: 'connectorId must be a connector id' })
  connectorId!: string;

  @ApiProperty({ example: '/in', description: 'Absolute folder path in the source repository' })
  @IsDefined({ message: 'folderPath is required' })
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
  @IsDefined({ message: 'connectorId is required' })
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

  @ApiPropertyOptional({
    enum: VERIFY_MODES,
    default: 'hash',
    description:
      'Copy jobs: how each written document is checked. `hash` compares the SHA-256 of the bytes read from the source (hashed as they stream) ' +
      "with the hash the target reports (S3 ETag as MD5, Graph quickXorHash, filesystem SHA-256 computed while writing) or, where it reports none " +
      '(CMIS, SharePoint REST), with the written content read back; `size` compares sizes; `none` checks nothing. A failed check is an error (e) naming both hashes',
  })
  @IsOptional()
  @IsIn(VERIFY_MODES, { message: `verify must be one of ${VERIFY_MODES.join(', ')}` })
  verify?: VerifyMode;

  @ApiPropertyOptional({
    enum: ON_MISMATCH,
    default: 'remove',
    description: 'Copy jobs: a copy that failed its check is `remove`d from the target (a later run writes it again) or `keep`t as written',
  })
  @IsOptional()
  @IsIn(ON_MISMATCH, { message: `onMismatch must be one of ${ON_MISMATCH.join(', ')}` })
  onMismatch?: OnMismatch;

  @ApiPropertyOptional({
    enum: NAMES_MODES,
    default: 'sanitize',
    description:
      "Copy jobs: a source name the target's naming rules refuse is `sanitize`d (a fixed table: forbidden characters become full-width look-alikes, " +
      'reserved names get a `_`, too long names are cut with a hash; the original kept as property `source_name`) or `refuse`d as an error of the document',
  })
  @IsOptional()
  @IsIn(NAMES_MODES, { message: `names must be one of ${NAMES_MODES.join(', ')}` })
  names?: NamesMode;

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

  @ApiPropertyOptional({
    type: [String],
    example: ['*.pdf', '*.docx'],
    description: 'File-name patterns (as `exclude`): only matching documents are taken, the others recorded as skipped (s); `exclude` wins',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  include?: string[];

  @ApiPropertyOptional({ example: '2025-01-01T00:00:00Z', description: 'ISO 8601: only documents modified after this instant; the others are skipped (s)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'modifiedAfter must be an ISO 8601 date-time' })
  modifiedAfter?: string;

  @ApiPropertyOptional({ example: '2026-01-01T00:00:00Z', description: 'ISO 8601: only documents modified before this instant; the others are skipped (s)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'modifiedBefore must be an ISO 8601 date-time' })
  modifiedBefore?: string;

  @ApiPropertyOptional({ minimum: 0, description: 'Bytes: smaller documents are skipped (s)' })
  @IsOptional()
  @IsInt()
  @Min(0)
  minSize?: number;

  @ApiPropertyOptional({ minimum: 0, description: 'Bytes: larger documents are skipped (s)' })
  @IsOptional()
  @IsInt()
  @Min(0)
  maxSize?: number;

  @ApiPropertyOptional({
    default: false,
    description: "Copy jobs: carry each document's permissions (source and target need the `acls` group: CMIS, SharePoint REST, Graph), mapped by aclMapping",
  })
  @IsOptional()
  @IsBoolean()
  copyAcls?: boolean;

  @ApiPropertyOptional({ type: AclMappingDto, description: 'Copy jobs with copyAcls: how principals and permissions map (jobs README, permission mapping)' })
  @IsOptional()
  @ValidateNested()
  @Type(() => AclMappingDto)
  aclMapping?: AclMappingDto;

  @ApiPropertyOptional({
    enum: JOB_MODES,
    default: 'copy',
    description:
      'Copy jobs: `copy` writes every listed document each run; `sync` keeps per document what it wrote and follows the source: ' +
      'unchanged documents are skipped without reading them, changed ones written again, moved ones moved at the target (jobs README, "Sync jobs")',
  })
  @IsOptional()
  @IsIn(JOB_MODES, { message: `mode must be one of ${JOB_MODES.join(', ')}` })
  mode?: JobMode;

  @ApiPropertyOptional({
    enum: TARGET_CHANGED,
    default: 'keep',
    description: 'Sync jobs: a document changed at the target since the job wrote it is `keep`t (an error e naming both stamps), `overwrite`n, or given the source content as a new `version`',
  })
  @IsOptional()
  @IsIn(TARGET_CHANGED, { message: `targetChanged must be one of ${TARGET_CHANGED.join(', ')}` })
  targetChanged?: TargetChanged;

  @ApiPropertyOptional({
    enum: DELETIONS,
    default: 'keep',
    description: 'Sync jobs: a document gone from the source stays at the target (`keep`), is deleted there (`delete`), or moved into `archiveFolder` (`archive`); only after a complete listing',
  })
  @IsOptional()
  @IsIn(DELETIONS, { message: `deletions must be one of ${DELETIONS.join(', ')}` })
  deletions?: Deletions;

  @ApiPropertyOptional({ example: '/archive', description: 'Sync jobs with `deletions: archive`: the target folder (absolute, outside target.folderPath) deleted documents are moved into' })
  @IsOptional()
  @IsString()
  @Matches(FOLDER_PATH, { message: 'archiveFolder must be an absolute path starting with /' })
  @MaxLength(4096)
  archiveFolder?: string;

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

  @ApiPropertyOptional({ type: PropertyMappingDto, description: 'Property and type mapping, copy and indexing jobs (jobs README, "Property and type mapping")' })
  @IsOptional()
  @IsObject({ message: 'mapping must be an object' })
  @ValidateNested()
  @Type(() => PropertyMappingDto)
  mapping?: PropertyMappingDto;
}

export class JobDefinitionDto {
  @ApiProperty({ example: 'archive-inbox', description: 'Unique name' })
  @IsDefined({ message: 'jobName is required' })
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

  @ApiPropertyOptional({ type: JobScheduleDto, description: 'Start the job on its own, by a cron expression (jobs README, "Schedules")' })
  @IsOptional()
  @IsObject({ message: 'schedule must be an object with cron' })
  @ValidateNested()
  @Type(() => JobScheduleDto)
  schedule?: JobScheduleDto;
}

/** A definition with every default applied, as stored and returned. */
export interface JobDefinition {
  jobName: string;
  jobGroup: string;
  source: { connectorId: string; folderPath: string; recursive: boolean };
  /** A repository target has folderPath; an indexing target (a search connector) has collection instead. */
  target: { connectorId: string; folderPath?: string; collection?: string };
  /** Sync options (sync-options.ts) are stored only when given. */
  options: SyncOptions & {
    onExisting: OnExisting;
    copyVersions: boolean;
    /** Copy jobs; stored only when given (the copier's defaults: hash, remove). */
    verify?: VerifyMode;
    onMismatch?: OnMismatch;
    /** Copy jobs; stored only when given (the copier's default: sanitize). */
    names?: NamesMode;
    maxErrors: number;
    removeSource: boolean;
    exclude: string[];
    /** Filters (document-filter.ts), stored only when given. */
    include?: string[];
    modifiedAfter?: string;
    modifiedBefore?: string;
    minSize?: number;
    maxSize?: number;
    /** Copy jobs; stored only when given (jobs/mapping/acl-mapping.ts). */
    copyAcls?: boolean;
    aclMapping?: AclMapping;
    /** Indexing jobs only (INDEX_JOB_DEFAULTS applied by the definitions service). */
    extract?: boolean;
    maxContentChars?: number;
    defaultAcl?: string;
    /** Stored only when given (config/property-mapping.dto.ts). */
    mapping?: PropertyMapping;
  };
  /** Stored only when given. */
  schedule?: JobSchedule;
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
  @ApiPropertyOptional({ enum: VERIFY_MODES, description: 'Copy jobs; absent: hash' }) verify?: VerifyMode;
  @ApiPropertyOptional({ enum: ON_MISMATCH, description: 'Copy jobs; absent: remove' }) onMismatch?: OnMismatch;
  @ApiPropertyOptional({ enum: NAMES_MODES, description: 'Copy jobs; absent: sanitize' }) names?: NamesMode;
  @ApiProperty() maxErrors!: number;
  @ApiProperty() removeSource!: boolean;
  @ApiProperty({ type: [String] }) exclude!: string[];
  @ApiPropertyOptional({ type: [String] }) include?: string[];
  @ApiPropertyOptional() modifiedAfter?: string;
  @ApiPropertyOptional() modifiedBefore?: string;
  @ApiPropertyOptional() minSize?: number;
  @ApiPropertyOptional() maxSize?: number;
  @ApiPropertyOptional({ description: 'Copy jobs' }) copyAcls?: boolean;
  @ApiPropertyOptional({ type: AclMappingDto, description: 'Copy jobs with copyAcls' }) aclMapping?: AclMappingDto;

  @ApiPropertyOptional({ enum: JOB_MODES, description: 'Copy jobs; absent: copy' }) mode?: JobMode;
  @ApiPropertyOptional({ enum: TARGET_CHANGED, description: 'Sync jobs; absent: keep' }) targetChanged?: TargetChanged;
  @ApiPropertyOptional({ enum: DELETIONS, description: 'Sync jobs; absent: keep' }) deletions?: Deletions;
  @ApiPropertyOptional({ description: 'Sync jobs with deletions archive' }) archiveFolder?: string;
  @ApiPropertyOptional({ description: 'Indexing jobs' }) extract?: boolean;
  @ApiPropertyOptional({ description: 'Indexing jobs' }) maxContentChars?: number;
  @ApiPropertyOptional({ description: 'Indexing jobs' }) defaultAcl?: string;
  @ApiPropertyOptional({ type: PropertyMappingDto }) mapping?: PropertyMappingDto;
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
  @ApiPropertyOptional({ type: JobScheduleView }) schedule?: JobScheduleView;
  @ApiProperty({ type: String, nullable: true, example: '2026-03-01T02:00:00.000Z', description: 'The next scheduled start (ISO 8601 UTC); null without an enabled schedule' })
  nextRun!: string | null;
  @ApiProperty({ type: JobScheduleStateView, nullable: true, description: 'null without a schedule' }) scheduleState!: JobScheduleStateView | null;
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
      ...pick(input.options, ['include', 'modifiedAfter', 'modifiedBefore', 'minSize', 'maxSize', 'verify', 'onMismatch', 'names', 'mapping', 'mode', 'targetChanged', 'deletions']),
      ...(input.options?.copyAcls !== undefined ? { copyAcls: input.options.copyAcls } : {}),
      ...(input.options?.aclMapping !== undefined ? { aclMapping: { ...input.options.aclMapping, unmapped: input.options.aclMapping.unmapped ?? 'drop' } } : {}),
      ...(input.options?.archiveFolder !== undefined ? { archiveFolder: normalizeFolder(input.options.archiveFolder) } : {}),
      ...(input.options?.extract !== undefined ? { extract: input.options.extract } : {}),
      ...(input.options?.maxContentChars !== undefined ? { maxContentChars: input.options.maxContentChars } : {}),
      ...(input.options?.defaultAcl !== undefined ? { defaultAcl: input.options.defaultAcl } : {}),
    },
    ...(input.schedule !== undefined ? { schedule: scheduleWithDefaults(input.schedule) } : {}),
  };
}

/** The keys of `o` that are set. */
function pick<T extends object, K extends keyof T>(o: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => o?.[k] !== undefined).map((k) => [k, o![k]])) as Partial<Pick<T, K>>;
}

function normalizeFolder(p: string): string {
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}
