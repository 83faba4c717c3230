export * from './graph.connector';
export * from './graph.connector-type';
export * from './graph-connector.module';
export type { GraphParams } from './params';
export { parseParams as parseGraphParams } from './params';
export * from './naming-rules';
