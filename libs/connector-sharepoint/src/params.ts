import { InvalidArgumentError, integerParam, optionalParam, refuseUnknownParams, requiredParam } from '@gateway/connector-api';
import type { EntraCredentials } from '@gateway/microsoft-client';

/** The `params` of a `sharepoint` connector definition (README: configuration). */
export interface SharePointParams extends EntraCredentials {
  authorityHost: string;
  /** https://contoso.sharepoint.com/sites/team (no trailing slash). */
  siteUrl: string;
  /** Title of the document library the connector's root is. */
  library: string;
  caFile?: string;
  chunkThresholdBytes: number;
  chunkSizeBytes: number;
  maxRetries: number;
  pageSize: number;
  timeoutMs: number;
  /** Establishing a connection (TCP + TLS): then 503. */
  connectTimeoutMs: number;
}

export const DEFAULTS = {
  authorityHost: 'https://login.microsoftonline.com',
  library: 'Documents',
  chunkThresholdBytes: 4 * 1024 * 1024,
  chunkSizeBytes: 10 * 1024 * 1024,
  maxRetries: 4,
  pageSize: 1000,
  timeoutMs: 120_000,
  connectTimeoutMs: 10_000,
};

const KNOWN = [
  'tenantId',
  'clientId',
  'clientSecret',
  'certificatePath',
  'certificateThumbprint',
  'authorityHost',
  'siteUrl',
  'library',
  'caFile',
  'chunkThresholdBytes',
  'chunkSizeBytes',
  'maxRetries',
  'pageSize',
  'timeoutMs',
  'connectTimeoutMs',
];

function httpsUrl(params: Record<string, unknown>, name: string, fallback?: string): string {
  const raw = params[name] === undefined && fallback !== undefined ? fallback : requiredParam(params, name);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError(name, `must be an absolute https URL`);
  }
  if (url.protocol !== 'https:') throw new InvalidArgumentError(name, 'must be an https URL');
  if (url.username || url.password || url.search || url.hash) throw new InvalidArgumentError(name, 'must not carry credentials, a query or a fragment');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** Validates the params of a sharepoint connector definition; errors name the parameter. */
export function parseParams(params: Record<string, unknown>): SharePointParams {
  refuseUnknownParams(params, KNOWN);
  const clientSecret = optionalParam(params, 'clientSecret');
  const certificatePath = optionalParam(params, 'certificatePath');
  if (!clientSecret && !certificatePath) {
    throw new InvalidArgumentError('certificatePath', 'give certificatePath (+ certificateThumbprint): SharePoint app-only access needs a certificate (clientSecret is refused by SharePoint Online)');
  }
  if (clientSecret && certificatePath) throw new InvalidArgumentError('clientSecret', 'give either clientSecret or certificatePath, not both');
  const chunkSizeBytes = integerParam(params, 'chunkSizeBytes', DEFAULTS.chunkSizeBytes, 64 * 1024, 250 * 1024 * 1024);
  return {
    tenantId: requiredParam(params, 'tenantId'),
    clientId: requiredParam(params, 'clientId'),
    ...(clientSecret ? { clientSecret } : {}),
    ...(certificatePath ? { certificatePath } : {}),
    ...(optionalParam(params, 'certificateThumbprint') ? { certificateThumbprint: optionalParam(params, 'certificateThumbprint') } : {}),
    authorityHost: httpsUrl(params, 'authorityHost', DEFAULTS.authorityHost),
    siteUrl: httpsUrl(params, 'siteUrl'),
    library: params.library === undefined ? DEFAULTS.library : requiredParam(params, 'library'),
    ...(optionalParam(params, 'caFile') ? { caFile: optionalParam(params, 'caFile') } : {}),
    chunkThresholdBytes: integerParam(params, 'chunkThresholdBytes', DEFAULTS.chunkThresholdBytes, 0, 250 * 1024 * 1024),
    chunkSizeBytes,
    maxRetries: integerParam(params, 'maxRetries', DEFAULTS.maxRetries, 0, 20),
    // Above 5000 SharePoint answers the list view threshold error.
    pageSize: integerParam(params, 'pageSize', DEFAULTS.pageSize, 1, 5000),
    timeoutMs: integerParam(params, 'timeoutMs', DEFAULTS.timeoutMs, 1000, 3_600_000),
    connectTimeoutMs: integerParam(params, 'connectTimeoutMs', DEFAULTS.connectTimeoutMs, 100, 600_000),
  };
}
