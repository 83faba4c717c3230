import { Injectable } from '@nestjs/common';
import { deriveCapabilities, isContentConnector, type Connector, type RepositoryDescription } from '@gateway/connector-api';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { ConnectionDto, RepositoryInfoDto, RootFolderDto } from './connections.dto';

@Injectable()
export class ConnectionsService {
  constructor(private readonly registry: ConnectorRegistry) {}

  list(): ConnectionDto[] {
    return this.registry.list().map((c) => ({ id: c.id, description: c.description, connectorId: c.id, typeId: c.typeId }));
  }

  async repositoryInfo(connectorId: string): Promise<RepositoryInfoDto> {
    const connector = this.registry.any(connectorId);
    const repo = isContentConnector(connector) ? await connector.describeRepository() : describeWithoutContent(connector);
    return {
      capabilities: deriveCapabilities(connector),
      repositoryId: repo.repositoryId,
      repositoryDescription: repo.repositoryDescription,
      rootFolderId: repo.rootFolderId,
      repositoryName: repo.repositoryName,
      params: connector.publicParams,
    };
  }

  rootFolder(connectorId: string): Promise<RootFolderDto> {
    return this.registry.get(connectorId).rootFolder();
  }

  types(connectorId: string): Promise<Record<string, string>> {
    return this.registry.get(connectorId).types();
  }
}

/** A search engine has no repository of its own to describe: its connection stands for it (no root folder). */
function describeWithoutContent(connector: Connector): RepositoryDescription {
  return { repositoryId: connector.id, repositoryName: connector.description || connector.id, repositoryDescription: connector.description, rootFolderId: '' };
}
