import { Injectable } from '@nestjs/common';
import type { Connector, ConnectorContext, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import { OpenSearchConnector } from './opensearch.connector';
import { parseOpenSearchParams } from './params';

/**
 * typeId `opensearch`. params: `url`, optional `collection` (default index), `user`/`password`,
 * `caFile`, and the common search settings. Nothing is contacted at start-up: an engine that is
 * down is reported by health.
 */
@Injectable()
export class OpenSearchConnectorType implements ConnectorType {
  readonly typeId = 'opensearch';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<Connector> {
    return new OpenSearchConnector(definition, parseOpenSearchParams(definition.params));
  }
}
