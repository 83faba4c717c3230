// '@gateway/connector-s3/params': the connection settings alone, for the S3 user-file store. The lib's index
// loads the connector and the AWS SDK (~10 MB of idle RSS), which a gateway without S3 never needs (issue 16).
export { parseBucket, parseConnectionParams, parsePrefix, type S3ConnectionParams } from './client';
