import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { S3ConnectorType } from './s3.connector-type';

/** The `s3` kind for Nest: the gateway loads this module (and the driver) only for a configured s3 connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: S3ConnectorType }] })
export class S3ConnectorModule {}
