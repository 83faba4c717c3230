export * from './errors';
export * from './connector';
export * from './capabilities';
export * from './file-reads';
export * from './search';
