import { ApiProperty } from '@nestjs/swagger';
import { CAPABILITY_NAMES } from '@gateway/connector-api';

export class ConnectionDto {
  @ApiProperty({ example: 'fs', description: 'Connection id, used as <connectorid> in paths' })
  id!: string;

  @ApiProperty({ example: 'Default filesystem repository' })
  description!: string;

  @ApiProperty({ example: 'fs', description: 'The connector id (same as id)' })
  connectorId!: string;

  @ApiProperty({ example: 'filesystem', description: 'The kind of connector' })
  typeId!: string;
}

export class RepositoryInfoDto {
  @ApiProperty({
    description: 'What this connector kind supports, derived from the operations its driver implements',
    type: 'object',
    properties: Object.fromEntries(CAPABILITY_NAMES.map((n) => [n, { type: 'boolean' }])),
  })
  capabilities!: Record<string, boolean>;

  @ApiProperty()
  repositoryId!: string;

  @ApiProperty()
  repositoryDescription!: string;

  @ApiProperty()
  rootFolderId!: string;

  @ApiProperty()
  repositoryName!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Connection parameters, secrets left out' })
  params!: Record<string, unknown>;
}

export class RootFolderDto {
  @ApiProperty()
  folderId!: string;

  @ApiProperty()
  folderName!: string;

  @ApiProperty({ example: '/' })
  folderPath!: string;
}
