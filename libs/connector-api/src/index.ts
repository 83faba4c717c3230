export * from './errors';
export * from './connector';
export * from './capabilities';
