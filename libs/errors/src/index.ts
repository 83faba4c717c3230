export * from './errors';
export * from './upstream-answers';
