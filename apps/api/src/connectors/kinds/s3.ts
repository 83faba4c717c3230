export { S3ConnectorModule } from '@gateway/connector-s3';
