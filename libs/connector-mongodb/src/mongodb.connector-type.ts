import { Injectable } from '@nestjs/common';
import type { Connector, ConnectorContext, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import { MongoConnector } from './mongodb.connector';
import { parseMongoParams } from './params';

/**
 * typeId `mongodb`. params: `uri`, `database`, optional `collection`, and the
 * common search settings. The driver connects at the first call; an engine
 * that is down is reported by health.
 */
@Injectable()
export class MongoConnectorType implements ConnectorType {
  readonly typeId = 'mongodb';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<Connector> {
    return new MongoConnector(definition, parseMongoParams(definition.params));
  }
}
