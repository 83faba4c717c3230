import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

const MAX_ID = 4096;
const MAX_PRINCIPALS = 8192;

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
