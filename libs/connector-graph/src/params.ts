import { InvalidArgumentError, httpUrlParam, integerParam, optionalParam, refuseUnknownParams, requiredParam } from '@gateway/connector-api';
import * as fs from 'node:fs';
import type { EntraCredentials } from '@gateway/microsoft-client';

export const DEFAULT_GRAPH_URL = 'https://graph.microsoft.com/v1.0';
export const FRAGMENT_UNIT = 320 * 1024;

export interface GraphParams extends EntraCredentials {
  graphUrl: string;
  siteId?: string;
  driveId?: string;
  /** A library (drive) name of the site, when driveId is not given. */
  library?: string;
  caFile?: string;
  /** Uploads larger than this use an upload session (default 4 MiB). */
  chunkThresholdBytes: number;
  /** Upload-session fragment size: a multiple of 320 KiB (default 10 MiB, the 32 × 320 KiB pnpjs uses too). */
  fragmentBytes: number;
  maxRetries: number;
  /** Children per Graph page when listing a whole folder (Graph's maximum is 999... its default 200). */
  pageSize: number;
  /** Establishing a connection (TCP + TLS): then 503. */
  connectTimeoutMs: number;
  /** No byte for this long, either way: 504. */
  timeoutMs: number;
}

/** Reads and validates a `graph` connector's params; errors name the param. */
const KNOWN = [
  'tenantId', 'clientId', 'clientSecret', 'certificatePath', 'certificateThumbprint', 'authorityHost', 'graphUrl', 'siteId', 'driveId',
  'library', 'caFile', 'chunkThresholdBytes', 'fragmentBytes', 'maxRetries', 'pageSize', 'connectTimeoutMs', 'timeoutMs',
];

export function parseParams(params: Record<string, unknown>): GraphParams {
  refuseUnknownParams(params, KNOWN);
  const clientSecret = optionalParam(params, 'clientSecret');
  const certificatePath = optionalParam(params, 'certificatePath');
  if (!clientSecret && !certificatePath) throw new InvalidArgumentError('clientSecret', 'give clientSecret, or certificatePath (its thumbprint, certificateThumbprint, is optional: computed from the certificate in the PEM)');
  if (clientSecret && certificatePath) throw new InvalidArgumentError('certificatePath', 'give either clientSecret or certificatePath, not both');
  if (certificatePath && !fs.existsSync(certificatePath)) throw new InvalidArgumentError('certificatePath', `no file at ${certificatePath}`);
  const caFile = optionalParam(params, 'caFile');
  if (caFile && !fs.existsSync(caFile)) throw new InvalidArgumentError('caFile', `no file at ${caFile}`);
  const siteId = optionalParam(params, 'siteId');
  const driveId = optionalParam(params, 'driveId');
  const library = optionalParam(params, 'library');
  if (!driveId && !(siteId && library)) throw new InvalidArgumentError('driveId', 'give driveId, or siteId and library (the drive name)');
  const graphUrl = params.graphUrl === undefined ? DEFAULT_GRAPH_URL : httpUrlParam(params, 'graphUrl', DEFAULT_GRAPH_URL);
  if (!graphUrl.startsWith('https://')) throw new InvalidArgumentError('graphUrl', 'must be an https URL');
  const authorityHost = optionalParam(params, 'authorityHost');
  if (authorityHost !== undefined) httpUrlParam(params, 'authorityHost', 'https://login.microsoftonline.com');
  const fragmentBytes = integerParam(params, 'fragmentBytes', 32 * FRAGMENT_UNIT, FRAGMENT_UNIT, 180 * FRAGMENT_UNIT);
  if (fragmentBytes % FRAGMENT_UNIT !== 0) throw new InvalidArgumentError('fragmentBytes', `must be a multiple of ${FRAGMENT_UNIT} (320 KiB)`);
  return {
    tenantId: requiredParam(params, 'tenantId'),
    clientId: requiredParam(params, 'clientId'),
    clientSecret,
    certificatePath,
    certificateThumbprint: optionalParam(params, 'certificateThumbprint'),
    authorityHost: authorityHost?.replace(/\/+$/, ''),
    graphUrl,
    siteId,
    driveId,
    library,
    caFile,
    chunkThresholdBytes: integerParam(params, 'chunkThresholdBytes', 4 * 1024 * 1024, 0, 250 * 1024 * 1024),
    fragmentBytes,
    maxRetries: integerParam(params, 'maxRetries', 4, 0, 20),
    pageSize: integerParam(params, 'pageSize', 200, 1, 999),
    connectTimeoutMs: integerParam(params, 'connectTimeoutMs', 10_000, 100, 600_000),
    timeoutMs: integerParam(params, 'timeoutMs', 120_000, 1000, 3_600_000),
  };
}
