import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { GatewayConfig } from '../config/gateway-config';

/**
 * What an operator checks first once the gateway listens, in a few lines: where it answers, the
 * connectors with their kinds, the database and the job queue. Never a credential: URLs are shown
 * as host, port and database only.
 */
export function startUpSummary(config: GatewayConfig, address: AddressInfo | string | null): string[] {
  const listening = address && typeof address === 'object' ? `${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}` : `${config.host}:${config.port}`;
  const connectors = config.connectors.map((c) => `${c.id} (${c.typeId})`).join(', ');
  return [
    `Listening on http://${listening}${config.contextPath}/api (OpenAPI at ${config.contextPath}/api/docs)`,
    `Connectors: ${connectors || 'none'}${config.connectorSource === 'declared' ? ` (declared in GATEWAY_CONFIG; the default 'fs' repository at ${path.join(config.dataDir, 'repository')} is not served)` : ''}`,
    `Database: ${config.databaseUrl ? `PostgreSQL at ${withoutCredentials(config.databaseUrl)}` : `SQLite at ${path.join(config.dataDir, 'gateway.sqlite')}`}`,
    `Job queue: ${config.jobs.redisUrl ? `BullMQ on Redis at ${withoutCredentials(config.jobs.redisUrl)}` : 'in-process (this process only)'}`,
  ];
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}
