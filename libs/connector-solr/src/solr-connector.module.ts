import { Module } from '@nestjs/common';
import { CONNECTOR_TYPE } from '@gateway/connector-api';
import { SolrConnectorType } from './solr.connector-type';

/** The `solr` kind for Nest: the gateway loads this module (and the driver) only for a configured solr connector. */
@Module({ providers: [{ provide: CONNECTOR_TYPE, useClass: SolrConnectorType }] })
export class SolrConnectorModule {}
