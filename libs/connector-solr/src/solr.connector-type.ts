import { Injectable } from '@nestjs/common';
import type { Connector, ConnectorContext, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import { parseSolrParams } from './params';
import { SolrConnector } from './solr.connector';

/**
 * typeId `solr`. params: `url` (base, e.g. http://host:8983/solr), optional
 * `collection`, `user`/`password` (Basic), and the common search settings
 * (`defaultFilters`, `defaultFields`, `timeoutMs`, `maxRows`). Nothing is
 * contacted at start-up: an engine that is down is reported by health.
 */
@Injectable()
export class SolrConnectorType implements ConnectorType {
  readonly typeId = 'solr';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<Connector> {
    return new SolrConnector(definition, parseSolrParams(definition.params));
  }
}
