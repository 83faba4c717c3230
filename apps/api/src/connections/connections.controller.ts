import { Get, Param } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { Route, RouteFamily } from '../common/routes';
import { ConnectionDto, RepositoryInfoDto, RootFolderDto } from './connections.dto';
import { ConnectionsService } from './connections.service';

const CONNECTOR_ID = ApiParam({ name: 'connectorId', description: 'Connector id' });
const REPOSITORY_ERRORS = [404, 502, 503, 504];
/** rootfolderid and types are content calls: a search connector answers 501 there. */
const CONTENT_REPOSITORY_ERRORS = [...REPOSITORY_ERRORS, 501];

@RouteFamily('repo', { tag: 'Connections and repository calls', access: 'basic' })
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Get('connections')
  @Route({ summary: 'Get connections', results: ConnectionDto, isArray: true })
  list(): ConnectionDto[] {
    return this.connections.list();
  }

  @Get(':connectorId/repositoryInfo')
  @CONNECTOR_ID
  @Route({ summary: 'Get repository info', results: RepositoryInfoDto, errors: REPOSITORY_ERRORS })
  repositoryInfo(@Param('connectorId') connectorId: string): Promise<RepositoryInfoDto> {
    return this.connections.repositoryInfo(connectorId);
  }

  @Get(':connectorId/rootfolderid')
  @CONNECTOR_ID
  @Route({ summary: 'Get root folder info', results: RootFolderDto, errors: CONTENT_REPOSITORY_ERRORS })
  rootFolder(@Param('connectorId') connectorId: string): Promise<RootFolderDto> {
    return this.connections.rootFolder(connectorId);
  }

  @Get(':connectorId/types')
  @CONNECTOR_ID
  @Route({
    summary: 'Get repository types',
    description: 'An object mapping a type key (usable as `type`) to its name',
    results: { type: 'object', additionalProperties: { type: 'string' }, example: { file: 'File' } },
    errors: CONTENT_REPOSITORY_ERRORS,
  })
  types(@Param('connectorId') connectorId: string): Promise<Record<string, string>> {
    return this.connections.types(connectorId);
  }
}
