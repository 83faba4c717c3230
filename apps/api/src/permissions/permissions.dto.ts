import type { PipeTransform } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { InvalidArgumentError } from '@gateway/errors';

const MAX_ID = 4096;
const MAX_PRINCIPALS = 8192;
const MAX_ENTRIES = 256;

/** Principal ids end at the first ':' of an entry and are listed with ',' on delete, so they may contain neither. */
export const PRINCIPAL = /^[^\s:,][^:,\u0000-\u001f\u007f]{0,255}$/;
const PERMISSION = /^[^\s,\u0000-\u001f\u007f]{1,256}$/;

export class AclItemQuery {
  @ApiProperty({ description: 'Repository id of the item', example: '112' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID)
  id!: string;
}

export class AclDeleteQuery extends AclItemQuery {
  @ApiPropertyOptional({ description: 'Comma-delimited principal ids whose entries are removed', example: 'alice,finance-team' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PRINCIPALS)
  aclId?: string;

  @ApiPropertyOptional({ description: 'Alias of aclId (the spec names the parameter both ways); give one of the two' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PRINCIPALS)
  acls?: string;

  @ApiPropertyOptional({
    description:
      'Removing a principal the item only inherits is a 409 naming where it is inherited from; true breaks the inheritance first ' +
      '(the item gets its own copy of the inherited entries), then removes. SharePoint REST only: Microsoft Graph v1.0 and CMIS have no call for it (501).',
    type: Boolean,
    default: false,
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'breakInheritance must be true or false' })
  breakInheritance?: boolean;
}

/** OpenAPI shape of the Post ACLs body: principal id → comma-separated permissions. */
export const ACL_BODY_SCHEMA = {
  type: 'object' as const,
  additionalProperties: { type: 'string' as const, description: 'Comma-separated permission names' },
  minProperties: 1,
  example: { alice: 'cmis:read,cmis:write', 'finance-team': 'cmis:read' },
};

export const ACL_ENTRY_SCHEMA = {
  type: 'string' as const,
  description: '<principal id>:<permission>[,<permission>...]',
  example: 'alice:cmis:read,cmis:write',
};

/** The Post ACLs body, parsed: principal id → permission names (the repository's). */
export type AclEntries = Record<string, string[]>;

/**
 * The Post ACLs body is a free-form map, which no class-validator DTO can describe: this pipe
 * parses it into AclEntries, or throws a 400 naming the offending principal (or `body`).
 */
export class AclBodyPipe implements PipeTransform<unknown, AclEntries> {
  transform(body: unknown): AclEntries {
    return parseAclBody(body);
  }
}

/** The Post ACLs body: a JSON object mapping principal ids to comma-separated permission lists. */
export function parseAclBody(body: unknown): AclEntries {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidArgumentError('body', "Invalid parameter 'body': must be a JSON object mapping principal ids to comma-separated permissions", 'INVALID_ACL');
  }
  const pairs = Object.entries(body as Record<string, unknown>);
  if (pairs.length === 0) throw new InvalidArgumentError('body', "Invalid parameter 'body': give at least one principal", 'INVALID_ACL');
  if (pairs.length > MAX_ENTRIES) throw new InvalidArgumentError('body', `Invalid parameter 'body': at most ${MAX_ENTRIES} principals`, 'INVALID_ACL');
  const entries: AclEntries = {};
  for (const [principal, value] of pairs) {
    const parameter = principal.slice(0, 256) || 'body';
    if (!PRINCIPAL.test(principal)) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': a principal id is 1 to 256 characters without ':', ',' or control characters`, 'INVALID_ACL');
    }
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': the permissions are a comma-separated string, e.g. "cmis:read,cmis:write"`, 'INVALID_ACL');
    }
    const permissions = [...new Set(value.split(',').map((p) => p.trim()))];
    if (permissions.some((p) => !PERMISSION.test(p))) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': give one or more permission names separated by commas`, 'INVALID_ACL');
    }
    entries[principal] = permissions;
  }
  return entries;
}

