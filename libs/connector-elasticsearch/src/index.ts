export * from './elasticsearch.connector';
export * from './elasticsearch.connector-type';
export * from './elasticsearch-connector.module';
export { mapElasticsearchError } from './elasticsearch-errors';
export { parseElasticsearchParams, type ElasticsearchParams } from './params';
