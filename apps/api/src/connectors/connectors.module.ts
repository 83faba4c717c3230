import { Global, Module } from '@nestjs/common';
import { CONNECTOR_TYPES } from '@gateway/connector-api';
import { CmisConnectorType } from '@gateway/connector-cmis';
import { ElasticsearchConnectorType } from '@gateway/connector-elasticsearch';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import { GraphConnectorType } from '@gateway/connector-graph';
import { MongoConnectorType } from '@gateway/connector-mongodb';
import { S3ConnectorType } from '@gateway/connector-s3';
import { SharePointConnectorType } from '@gateway/connector-sharepoint';
import { SolrConnectorType } from '@gateway/connector-solr';
import { ConnectorRegistry } from './connector-registry.service';

/** Every connector kind the gateway knows. Adding a connector is one line here. */
const CONNECTOR_TYPE_PROVIDERS = [
  FilesystemConnectorType,
  CmisConnectorType,
  SolrConnectorType,
  ElasticsearchConnectorType,
  MongoConnectorType,
  S3ConnectorType,
  GraphConnectorType,
  SharePointConnectorType,
];

@Global()
@Module({
  providers: [
    ...CONNECTOR_TYPE_PROVIDERS,
    { provide: CONNECTOR_TYPES, useFactory: (...types: unknown[]) => types, inject: CONNECTOR_TYPE_PROVIDERS },
    ConnectorRegistry,
  ],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
