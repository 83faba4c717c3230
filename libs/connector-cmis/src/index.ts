export * from './cmis.connector';
export * from './cmis.connector-type';
export * from './cmis-connector.module';
export { CmisClient } from './cmis-client';
export type { CmisParams, UserMapping } from './params';
export * from './naming-rules';
