export * from './mongodb.connector';
export * from './mongodb.connector-type';
export * from './mongodb-connector.module';
export { mapMongoError } from './mongo-errors';
export { parseMongoParams, redactUri, type MongoParams } from './params';
