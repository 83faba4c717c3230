// The typed errors live in their own lib so services and the exception filter need not depend on the
// connector contract; a driver still finds them here.
export * from '@gateway/errors';
export * from './connector';
export * from './connector-type-token';
export * from './capabilities';
export * from './file-reads';
export * from './search';
export * from './params';
export * from './byte-slice';
export * from './content-hash';
export * from './changes';
export * from './naming-rules';
export * from './property-schema';
export { declaredMimeType, mimeTypeFor } from './mime';
export * from './query-dsl';
export * from './move';
export * from './version-stamps';
