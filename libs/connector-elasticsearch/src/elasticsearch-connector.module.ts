import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { ElasticsearchConnectorType } from './elasticsearch.connector-type';

/** The `elasticsearch` kind for Nest: the gateway loads this module (and the driver) only for a configured elasticsearch connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: ElasticsearchConnectorType }] })
export class ElasticsearchConnectorModule {}
