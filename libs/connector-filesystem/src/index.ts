export * from './filesystem.connector';
export * from './filesystem.connector-type';
export * from './filesystem-connector.module';
export * from './naming-rules';
