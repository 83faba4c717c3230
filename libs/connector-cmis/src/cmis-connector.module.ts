import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { CmisConnectorType } from './cmis.connector-type';

/** The `cmis` kind for Nest: the gateway loads this module (and the driver) only for a configured cmis connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: CmisConnectorType }] })
export class CmisConnectorModule {}
