import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { FilesystemConnectorType } from './filesystem.connector-type';

/** The `filesystem` kind for Nest: the gateway loads this module (and the driver) only for a configured filesystem connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: FilesystemConnectorType }] })
export class FilesystemConnectorModule {}
