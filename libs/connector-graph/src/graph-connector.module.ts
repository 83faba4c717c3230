import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { GraphConnectorType } from './graph.connector-type';

/** The `graph` kind for Nest: the gateway loads this module (and the driver) only for a configured graph connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: GraphConnectorType }] })
export class GraphConnectorModule {}
