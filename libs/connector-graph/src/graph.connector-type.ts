import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { GatewayError, type ConnectorContext, type ConnectorDefinition, type ConnectorType, type ContentConnector } from '@gateway/connector-api';
import { GraphConnector } from './graph.connector';
import { parseParams } from './params';

/**
 * typeId `graph`: a SharePoint document library (a drive) through Microsoft Graph v1.0. params in
 * ../README.md. The drive is contacted at start-up; an unreachable service or identity provider does
 * not stop the start (the connector connects at its first use and health reports it down), while a
 * definition the service refuses (unknown library) does.
 */
@Injectable()
export class GraphConnectorType implements ConnectorType {
  readonly typeId = 'graph';

  async create(definition: ConnectorDefinition, context: ConnectorContext): Promise<ContentConnector> {
    const connector = new GraphConnector(definition, parseParams(definition.params), path.join(context.dataDir, 'graph-spool'));
    try {
      await connector.connect();
    } catch (e) {
      if (!(e instanceof GatewayError) || !['upstream_unavailable', 'upstream_timeout', 'upstream_error', 'upstream_throttled'].includes(e.kind)) throw e;
    }
    return connector;
  }
}
