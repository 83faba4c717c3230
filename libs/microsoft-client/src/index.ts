export * from './agent';
export * from './https-client';
export * from './retry';
export * from './service-errors';
export * from './token-provider';
export * from './attribution';
