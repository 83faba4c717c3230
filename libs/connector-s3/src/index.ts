export * from './client';
export { MultipartWriter } from './multipart-writer';
export * from './s3.connector';
export * from './s3.connector-type';
export * from './s3-connector.module';
export { encodeId as encodeS3Id } from './keys';
export { SignedGetObject } from './signed-get-object';
export { ObjectReader } from './object-reader';
export * from './naming-rules';
