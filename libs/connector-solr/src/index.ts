export * from './solr.connector';
export * from './solr.connector-type';
export * from './solr-connector.module';
export { SolrClient } from './solr-client';
export { parseSolrParams, type SolrParams } from './params';
