import { Controller, Get, Param } from '@nestjs/common';
import { ApiBasicAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { ConnectionDto, RepositoryInfoDto, RootFolderDto } from './connections.dto';
import { ConnectionsService } from './connections.service';

@ApiTags('Connections and repository calls')
@ApiBasicAuth()
@ApiErrors(401)
@Controller('repo')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Get('connections')
  @ApiOperation({ summary: 'Get connections' })
  @ApiEnvelope(ConnectionDto, { isArray: true })
  list(): ConnectionDto[] {
    return this.connections.list();
  }

  @Get(':connectorId/repositoryInfo')
  @ApiOperation({ summary: 'Get repository info' })
  @ApiParam({ name: 'connectorId', description: 'Connector id' })
  @ApiEnvelope(RepositoryInfoDto)
  @ApiErrors(404, 502, 503, 504)
  repositoryInfo(@Param('connectorId') connectorId: string): Promise<RepositoryInfoDto> {
    return this.connections.repositoryInfo(connectorId);
  }

  @Get(':connectorId/rootfolderid')
  @ApiOperation({ summary: 'Get root folder info' })
  @ApiParam({ name: 'connectorId', description: 'Connector id' })
  @ApiEnvelope(RootFolderDto)
  @ApiErrors(404, 502, 503, 504)
  rootFolder(@Param('connectorId') connectorId: string): Promise<RootFolderDto> {
    return this.connections.rootFolder(connectorId);
  }

  @Get(':connectorId/types')
  @ApiOperation({ summary: 'Get repository types', description: 'An object mapping a type key (usable as `type`) to its name' })
  @ApiParam({ name: 'connectorId', description: 'Connector id' })
  @ApiEnvelope({ type: 'object', additionalProperties: { type: 'string' }, example: { file: 'File' } })
  @ApiErrors(404, 502, 503, 504)
  types(@Param('connectorId') connectorId: string): Promise<Record<string, string>> {
    return this.connections.types(connectorId);
  }
}
