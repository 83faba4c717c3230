import { Global, Module } from '@nestjs/common';
import { CONNECTOR_MODULES, ConnectorRegistry, type ConnectorModules } from './connector-registry.service';

/**
 * Every connector kind the gateway knows: its typeId and the loader of its lib's Nest module.
 * Adding a connector is one line here and its one-line file in kinds/.
 *
 * A lib (and its driver: AWS SDK, MSAL, MongoDB, Elasticsearch...) is required only when a configured
 * connector uses it; loading every kind at start-up cost tens of MB of idle RSS (apps/api/README.md).
 * So the modules are reached by import(), and the Nest build rewrites the `@gateway/*` path aliases in
 * static import and export declarations only: `import('@gateway/connector-cmis')` would not resolve in
 * dist/. Each kinds/ file re-exports its lib's module by a static export (rewritten by the build), and is
 * itself imported here by a path inside apps/api that is the same in dist/ as in the sources.
 */
export const GATEWAY_CONNECTOR_MODULES: ConnectorModules = {
  filesystem: async () => (await import('./kinds/filesystem')).FilesystemConnectorModule,
  cmis: async () => (await import('./kinds/cmis')).CmisConnectorModule,
  solr: async () => (await import('./kinds/solr')).SolrConnectorModule,
  elasticsearch: async () => (await import('./kinds/elasticsearch')).ElasticsearchConnectorModule,
  mongodb: async () => (await import('./kinds/mongodb')).MongoConnectorModule,
  s3: async () => (await import('./kinds/s3')).S3ConnectorModule,
  graph: async () => (await import('./kinds/graph')).GraphConnectorModule,
  sharepoint: async () => (await import('./kinds/sharepoint')).SharePointConnectorModule,
  opensearch: async () => (await import('./kinds/opensearch')).OpenSearchConnectorModule,
};

@Global()
@Module({
  providers: [{ provide: CONNECTOR_MODULES, useValue: GATEWAY_CONNECTOR_MODULES }, ConnectorRegistry],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
