import { Global, Module } from '@nestjs/common';
import type { Connector, ConnectorContext, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import { CONNECTOR_TYPES } from '@gateway/connector-api';
import { ConnectorRegistry } from './connector-registry.service';

/**
 * A connector kind whose lib (and its driver: AWS SDK, MSAL, MongoDB, Elasticsearch...) is
 * required only when a configured connector uses it. Loading every kind at start-up cost
 * tens of MB of idle RSS (issue 16). Params are still validated at start-up: the registry
 * calls create() for every configured connector in onModuleInit.
 * The imports are relative: the Nest build rewrites `@gateway/*` aliases only in static
 * imports, so a dynamic `import('@gateway/...')` would not resolve in dist/.
 */
export class LazyConnectorType implements ConnectorType {
  private loaded?: Promise<ConnectorType>;
  constructor(
    readonly typeId: string,
    private readonly importType: () => Promise<new () => ConnectorType>,
  ) {}

  /** The real kind, required on first use. */
  load(): Promise<ConnectorType> {
    this.loaded ??= this.importType().then((Type) => new Type());
    return this.loaded;
  }

  async create(definition: ConnectorDefinition, context: ConnectorContext): Promise<Connector> {
    return (await this.load()).create(definition, context);
  }
}

/** Every connector kind the gateway knows. Adding a connector is one line here. */
export const CONNECTOR_KINDS: LazyConnectorType[] = [
  new LazyConnectorType('filesystem', async () => (await import('../../../../libs/connector-filesystem/src')).FilesystemConnectorType),
  new LazyConnectorType('cmis', async () => (await import('../../../../libs/connector-cmis/src')).CmisConnectorType),
  new LazyConnectorType('solr', async () => (await import('../../../../libs/connector-solr/src')).SolrConnectorType),
  new LazyConnectorType('elasticsearch', async () => (await import('../../../../libs/connector-elasticsearch/src')).ElasticsearchConnectorType),
  new LazyConnectorType('opensearch', async () => (await import('../../../../libs/connector-opensearch/src')).OpenSearchConnectorType),
  new LazyConnectorType('mongodb', async () => (await import('../../../../libs/connector-mongodb/src')).MongoConnectorType),
  new LazyConnectorType('s3', async () => (await import('../../../../libs/connector-s3/src')).S3ConnectorType),
  new LazyConnectorType('graph', async () => (await import('../../../../libs/connector-graph/src')).GraphConnectorType),
  new LazyConnectorType('sharepoint', async () => (await import('../../../../libs/connector-sharepoint/src')).SharePointConnectorType),
];

@Global()
@Module({
  providers: [{ provide: CONNECTOR_TYPES, useValue: CONNECTOR_KINDS }, ConnectorRegistry],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
