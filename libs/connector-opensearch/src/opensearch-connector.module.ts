import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { OpenSearchConnectorType } from './opensearch.connector-type';

/** The `opensearch` kind for Nest: the gateway loads this module (and the driver) only for a configured opensearch connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: OpenSearchConnectorType }] })
export class OpenSearchConnectorModule {}
