import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { CONNECTOR_ID_PATTERN } from './connector-id';
import { JobDefinitionDto } from './job-definition.dto';
import { WebhookDefinitionDto } from './webhook-definition.dto';

export const ROLES = ['admin', 'user'] as const;
export type Role = (typeof ROLES)[number];

export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
/**
 * A group name: the user-name alphabet, so a principal in `acl_read` is one kind of token; it cannot
 * start with '_', which keeps `__everyone__` (and any later reserved principal) out of reach of a group.
 */
export const GROUP_PATTERN = USERNAME_PATTERN;
export const MAX_GROUPS = 64;

export class ConnectorFileEntry {
  @IsString()
  @Matches(CONNECTOR_ID_PATTERN, { message: 'must be letters, digits, _ . - (at most 64), starting with a letter or digit' })
  id!: string;

  @IsString()
  typeId!: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsObject()
  params?: Record<string, unknown>;
}

export class UserFileEntry {
  @IsString()
  @Matches(USERNAME_PATTERN, { message: 'must be letters, digits, _ . @ - (at most 128)' })
  username!: string;

  @IsString()
  @MinLength(8)
  @MaxLength(1024)
  password!: string;

  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(ROLES, { each: true })
  roles?: Role[];

  /** Principals besides the user name that permission-trimmed search matches in `acl_read`. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GROUPS)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(GROUP_PATTERN, { each: true, message: 'each group must be letters, digits, _ . @ - (at most 128), starting with a letter or digit' })
  groups?: string[];
}

/** The optional YAML file named by GATEWAY_CONFIG. Unknown keys are rejected. */
export class ConfigFile {
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ConnectorFileEntry)
  connectors?: ConnectorFileEntry[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => UserFileEntry)
  users?: UserFileEntry[];

  /** Job definitions owned by this file (created or updated at every start; read-only in the admin API). */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => JobDefinitionDto)
  jobs?: JobDefinitionDto[];

  /** Webhooks owned by this file (created or updated at every start; read-only in the admin API). */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => WebhookDefinitionDto)
  webhooks?: WebhookDefinitionDto[];
}
