import { Injectable } from '@nestjs/common';
import type { Connector, ConnectorContext, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import { ElasticsearchConnector } from './elasticsearch.connector';
import { parseElasticsearchParams } from './params';

/**
 * typeId `elasticsearch`. params: `url`, optional `collection` (default
 * index), `user`/`password` or `apiKey`, and the common search settings.
 * Nothing is contacted at start-up: an engine that is down is reported by health.
 */
@Injectable()
export class ElasticsearchConnectorType implements ConnectorType {
  readonly typeId = 'elasticsearch';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<Connector> {
    return new ElasticsearchConnector(definition, parseElasticsearchParams(definition.params));
  }
}
