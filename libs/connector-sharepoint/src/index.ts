export * from './sharepoint.connector';
export * from './sharepoint.connector-type';
export { parseParams, type SharePointParams } from './params';
