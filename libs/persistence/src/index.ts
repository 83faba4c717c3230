export * from './database';
export * from './schema';
export * from './tokens';
export * from './users.repository';
export * from './persistence.module';
