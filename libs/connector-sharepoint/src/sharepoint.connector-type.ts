import { Injectable } from '@nestjs/common';
import type { ConnectorContext, ConnectorDefinition, ConnectorType, ContentConnector } from '@gateway/connector-api';
import { parseParams } from './params';
import { SharePointConnector } from './sharepoint.connector';

/**
 * typeId `sharepoint` (README for the params). Nothing is contacted at start-up: the token and the
 * library are fetched at the first call, so an unreachable tenant does not stop the gateway; health
 * reports it down.
 */
@Injectable()
export class SharePointConnectorType implements ConnectorType {
  readonly typeId = 'sharepoint';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<ContentConnector> {
    return new SharePointConnector(definition, parseParams(definition.params));
  }
}
