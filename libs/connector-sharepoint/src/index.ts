export * from './sharepoint.connector';
export * from './sharepoint.connector-type';
export * from './sharepoint-connector.module';
export { parseParams, type SharePointParams } from './params';
export * from './naming-rules';
