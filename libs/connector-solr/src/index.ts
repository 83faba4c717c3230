export * from './solr.connector';
export * from './solr.connector-type';
export { SolrClient } from './solr-client';
export { parseSolrParams, type SolrParams } from './params';
