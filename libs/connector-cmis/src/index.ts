export * from './cmis.connector';
export * from './cmis.connector-type';
export { CmisClient } from './cmis-client';
export type { CmisParams, UserMapping } from './params';
