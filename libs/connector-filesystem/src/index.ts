export * from './filesystem.connector';
export * from './filesystem.connector-type';
