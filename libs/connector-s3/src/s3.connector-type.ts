import { Injectable } from '@nestjs/common';
import type { ConnectorContext, ConnectorDefinition, ConnectorType, ContentConnector } from '@gateway/connector-api';
import { createS3Client, parseConnectorParams } from './client';
import { S3Connector } from './s3.connector';

/**
 * typeId `s3`. params: `bucket`, optional `prefix`, `endpoint` (S3-compatible stores), `region`,
 * `accessKeyId`/`secretAccessKey` (else the SDK's default credential chain), `forcePathStyle`,
 * `multipartThresholdBytes`, `multipartConcurrency`, `storageClasses`, `maxSockets`, `connectTimeoutMs`, `timeoutMs`.
 */
@Injectable()
export class S3ConnectorType implements ConnectorType {
  readonly typeId = 's3';

  async create(definition: ConnectorDefinition, _context: ConnectorContext): Promise<ContentConnector> {
    const params = parseConnectorParams(definition.params);
    const client = createS3Client(params);
    try {
      // Asked once: which capability groups the connector has follows from it.
      const versioned = await S3Connector.bucketVersioned(client, params.bucket);
      return new S3Connector(definition, client, params, versioned);
    } catch (e) {
      client.destroy();
      throw e;
    }
  }
}
