import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BuildMiddleware, MetadataBearer } from '@aws-sdk/types';
import { httpUrlParam, integerParam, InvalidArgumentError, optionalParam, refuseUnknownParams, requiredParam } from '@gateway/connector-api';

/** The connection settings shared by the connector and the S3 user-file store. */
export interface S3ConnectionParams {
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Sockets per client (downloads, uploads and listings share them). */
  maxSockets: number;
  /** Establishing a connection (TCP and TLS). */
  connectTimeoutMs: number;
  /** A socket that stays silent this long (no answer, or a body that stops) is closed: 504. */
  timeoutMs: number;
}

export interface S3ConnectorParams extends S3ConnectionParams {
  bucket: string;
  /** '' or a key prefix ending with '/': the repository's root inside the bucket. */
  prefix: string;
  multipartThresholdBytes: number;
  multipartConcurrency: number;
  storageClasses: string[];
  /** HEAD each listed document for its creator, content type and properties (a listing alone has none). */
  listingDetails: boolean;
}

/** The storage classes of AWS S3; `types` lists them (S3-compatible stores may accept only STANDARD). */
export const AWS_STORAGE_CLASSES = ['STANDARD', 'REDUCED_REDUNDANCY', 'STANDARD_IA', 'ONEZONE_IA', 'INTELLIGENT_TIERING', 'GLACIER', 'DEEP_ARCHIVE', 'GLACIER_IR'];
const MiB = 1024 * 1024;
/** S3's smallest part (except the last). */
export const MIN_PART_BYTES = 5 * MiB;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function booleanParam(params: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const raw = params[name];
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new InvalidArgumentError(name, 'must be true or false');
}

export function parseConnectionParams(params: Record<string, unknown>): S3ConnectionParams {
  const endpoint = params.endpoint === undefined ? undefined : httpUrlParam(params, 'endpoint', 'https://s3.example.com');
  const accessKeyId = optionalParam(params, 'accessKeyId');
  const secretAccessKey = optionalParam(params, 'secretAccessKey');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new InvalidArgumentError(accessKeyId === undefined ? 'accessKeyId' : 'secretAccessKey', 'accessKeyId and secretAccessKey go together (or neither, for the default credential chain)');
  }
  return {
    endpoint,
    region: optionalParam(params, 'region') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    // S3-compatible servers on an IP or localhost need path-style addressing; AWS prefers virtual hosts.
    forcePathStyle: booleanParam(params, 'forcePathStyle', endpoint !== undefined),
    maxSockets: integerParam(params, 'maxSockets', 64, 1, 1024),
    connectTimeoutMs: integerParam(params, 'connectTimeoutMs', 10_000, 100, 600_000),
    timeoutMs: integerParam(params, 'timeoutMs', 60_000, 100, 3_600_000),
  };
}

export function parseBucket(value: unknown, parameter: string): string {
  if (typeof value !== 'string' || !BUCKET.test(value)) throw new InvalidArgumentError(parameter, 'must be an S3 bucket name (3-63 lower-case letters, digits, . and -)');
  return value;
}

/** '' or 'a/b/': no leading '/', no empty segments. */
export function parsePrefix(value: unknown, parameter: string): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (typeof value !== 'string') throw new InvalidArgumentError(parameter, 'must be a key prefix such as team/docs');
  const trimmed = value.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new InvalidArgumentError(parameter, 'must be a key prefix without empty, . or .. segments');
  return `${trimmed}/`;
}

const CONNECTOR_PARAMS = [
  'endpoint', 'region', 'accessKeyId', 'secretAccessKey', 'forcePathStyle', 'maxSockets', 'connectTimeoutMs', 'timeoutMs',
  'bucket', 'prefix', 'multipartThresholdBytes', 'multipartConcurrency', 'storageClasses', 'listingDetails',
];

export function parseConnectorParams(params: Record<string, unknown>): S3ConnectorParams {
  refuseUnknownParams(params, CONNECTOR_PARAMS);
  const connection = parseConnectionParams(params);
  const threshold = integerParam(params, 'multipartThresholdBytes', 8 * MiB, MIN_PART_BYTES, 512 * MiB);
  let storageClasses = AWS_STORAGE_CLASSES;
  if (params.storageClasses !== undefined) {
    const list = params.storageClasses;
    if (!Array.isArray(list) || list.length === 0 || !list.every((c) => typeof c === 'string' && /^[A-Z_]{1,64}$/.test(c))) {
      throw new InvalidArgumentError('storageClasses', 'must be a non-empty list of storage class names such as STANDARD');
    }
    storageClasses = list as string[];
  }
  return {
    ...connection,
    bucket: parseBucket(requiredParam(params, 'bucket'), 'bucket'),
    prefix: parsePrefix(params.prefix, 'prefix'),
    multipartThresholdBytes: threshold,
    multipartConcurrency: integerParam(params, 'multipartConcurrency', 4, 1, 32),
    storageClasses,
    listingDetails: booleanParam(params, 'listingDetails', true),
  };
}

export function createS3Client(p: S3ConnectionParams): S3Client {
  const agentOptions = { keepAlive: true, maxSockets: p.maxSockets };
  // Required here: this file's params half is imported at start-up by the config (user-files store),
  // and the SDK is ~10 MB of idle RSS a gateway without S3 never needs (issue 16).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first use (above)
  const { S3Client } = require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: p.endpoint,
    region: p.region,
    forcePathStyle: p.forcePathStyle,
    credentials: p.accessKeyId && p.secretAccessKey ? { accessKeyId: p.accessKeyId, secretAccessKey: p.secretAccessKey } : undefined,
    // The SDK's default CRC32 checksums on every upload are refused by S3-compatible servers that
    // predate them (S3Proxy 2.7: NotImplemented); AWS accepts both. Content integrity on uploads is
    // still checked by the MD5-based ETag of each part.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { httpAgent: new HttpAgent(agentOptions), httpsAgent: new HttpsAgent(agentOptions), connectionTimeout: p.connectTimeoutMs, requestTimeout: p.timeoutMs },
    maxAttempts: 3,
  });
  client.middlewareStack.add(md5InsteadOfCrc32, { step: 'build', priority: 'low', name: 'gatewayContentMd5' });
  return client;
}

/**
 * Calls that must carry a checksum (DeleteObjects) get a CRC32 one from this SDK; S3-compatible
 * servers that predate those (S3Proxy 2.7, older MinIO) answer NotImplemented. Content-MD5, which
 * AWS accepts too, works everywhere; only small in-memory bodies (XML) are concerned.
 */
const md5InsteadOfCrc32: BuildMiddleware<object, MetadataBearer> =
  (next) =>
  async (args) => {
    const request = args.request as { headers?: Record<string, string>; body?: unknown };
    const headers = request?.headers;
    if (headers && (typeof request.body === 'string' || Buffer.isBuffer(request.body))) {
      const crc = Object.keys(headers).filter((h) => h.toLowerCase().startsWith('x-amz-checksum-') || h.toLowerCase() === 'x-amz-sdk-checksum-algorithm');
      if (crc.length > 0) {
        for (const h of crc) delete headers[h];
        headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
    }
    return next(args);
  };
