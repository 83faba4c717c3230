import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/**
 * The shape of a copy job's `options.aclMapping` (the semantics, the default permission table and the
 * CSV files: apps/api/src/jobs/mapping/acl-mapping.ts). It lives in config/ because the job definition
 * does, and config/ imports no feature module.
 */
export const ACL_UNMAPPED = ['drop', 'fail'] as const;
export type AclUnmapped = (typeof ACL_UNMAPPED)[number];

/** A file under `<dataDir>/mappings/`: a relative path without `..` segments. */
export const MAPPING_FILE = /^(?!.*(?:^|\/)\.\.(?:\/|$))[^/\\\u0000-\u001f][^\\\u0000-\u001f]{0,254}$/;

const MAP_SCHEMA = (what: string, example: Record<string, string>) => ({
  type: 'object' as const,
  additionalProperties: { type: 'string' as const, minLength: 1, maxLength: 256 },
  maxProperties: 10_000,
  example,
  description: `${what}; keys and values non-empty, at most 256 characters, no key given twice (compared case-insensitively)`,
});

export class AclMappingDto {
  @ApiPropertyOptional(MAP_SCHEMA('Source user → target user', { alice: 'alice@contoso.com' }))
  @IsOptional()
  @IsObject({ message: 'principals must be an object mapping source users to target users' })
  principals?: Record<string, string>;

  @ApiPropertyOptional(MAP_SCHEMA('Source group → target group', { GROUP_EVERYONE: 'Gateway Visitors' }))
  @IsOptional()
  @IsObject({ message: 'groups must be an object mapping source groups to target groups' })
  groups?: Record<string, string>;

  @ApiPropertyOptional(
    MAP_SCHEMA('Source permission → target permission, over the default table of the connector pair (jobs README)', { 'cmis:write': 'Edit' }),
  )
  @IsOptional()
  @IsObject({ message: 'permissions must be an object mapping source permissions to target permissions' })
  permissions?: Record<string, string>;

  @ApiPropertyOptional({
    example: 'users.csv',
    maxLength: 255,
    description: 'A CSV file of `source,target` lines under `<GATEWAY_DATA_DIR>/mappings/`, merged over `principals`; read at run start (a bad line fails the run naming it)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @Matches(MAPPING_FILE, { message: 'principalsFile must be a relative path under the mappings folder, without ..' })
  principalsFile?: string;

  @ApiPropertyOptional({ example: 'groups.csv', maxLength: 255, description: 'As principalsFile, for groups (merged over `groups`)' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @Matches(MAPPING_FILE, { message: 'groupsFile must be a relative path under the mappings folder, without ..' })
  groupsFile?: string;

  @ApiPropertyOptional({
    enum: ACL_UNMAPPED,
    default: 'drop',
    description: 'An entry whose principal (or permission) no map names: `drop` it (the outcome message warns, naming them) or `fail` the document naming the first',
  })
  @IsOptional()
  @IsIn(ACL_UNMAPPED, { message: `unmapped must be one of ${ACL_UNMAPPED.join(', ')}` })
  unmapped?: AclUnmapped;
}

/** `options.aclMapping` as stored: unmapped defaulted. */
export interface AclMapping {
  principals?: Record<string, string>;
  groups?: Record<string, string>;
  permissions?: Record<string, string>;
  principalsFile?: string;
  groupsFile?: string;
  unmapped: AclUnmapped;
}
