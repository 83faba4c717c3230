import { Injectable } from '@nestjs/common';
import { GatewayError, type ConnectorContext, type ConnectorDefinition, type ConnectorType, type ContentConnector } from '@gateway/connector-api';
import { CmisConfigurationError, CmisConnector } from './cmis.connector';
import { parseParams } from './params';

/**
 * typeId `cmis`. params: `url` (browser binding), `repositoryId`, `user`,
 * `password` (secret), and optionally `timeoutMs`, `pageSize`, `userMapping`
 * ('technical' | 'actor'), `documentType` (the type of uploads without `type`).
 *
 * The repository is contacted at start-up: a definition that does not fit it
 * (unknown repository, refused credentials, unknown document type) stops the
 * start naming the parameter. A repository that cannot be reached does not:
 * the connector then connects at its first use, and health reports it down.
 */
@Injectable()
export class CmisConnectorType implements ConnectorType {
  readonly typeId = 'cmis';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<ContentConnector> {
    const connector = new CmisConnector(definition, parseParams(definition.params));
    try {
      await connector.connect();
    } catch (e) {
      if (e instanceof CmisConfigurationError) throw e;
      if (!(e instanceof GatewayError) || !['upstream_unavailable', 'upstream_timeout', 'upstream_error'].includes(e.kind)) throw e;
      // Unreachable for now: connect at the first call.
    }
    return connector;
  }
}
