import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { MongoConnectorType } from './mongodb.connector-type';

/** The `mongodb` kind for Nest: the gateway loads this module (and the driver) only for a configured mongodb connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: MongoConnectorType }] })
export class MongoConnectorModule {}
