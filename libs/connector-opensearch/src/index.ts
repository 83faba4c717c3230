export * from './opensearch.connector';
export * from './opensearch.connector-type';
export * from './opensearch-connector.module';
export { mapOpenSearchError } from './opensearch-errors';
export { parseOpenSearchParams, type OpenSearchParams } from './params';
