import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { SharePointConnectorType } from './sharepoint.connector-type';

/** The `sharepoint` kind for Nest: the gateway loads this module (and the driver) only for a configured sharepoint connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: SharePointConnectorType }] })
export class SharePointConnectorModule {}
