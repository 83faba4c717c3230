export * from './opensearch.connector';
export * from './opensearch.connector-type';
export { mapOpenSearchError } from './opensearch-errors';
export { parseOpenSearchParams, type OpenSearchParams } from './params';
