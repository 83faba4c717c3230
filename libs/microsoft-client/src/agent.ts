import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { rootCertificates } from 'node:tls';

export interface AgentOptions {
  /** PEM file of a private CA to trust in addition to the public roots (test CA of the simulators, corporate CAs). */
  caFile?: string;
  maxSockets?: number;
}

/**
 * One keep-alive agent per connector for both its API and MSAL's token calls. The CA is given to
 * the agent rather than through NODE_EXTRA_CA_CERTS, which Node reads only at process start and
 * would apply to every outbound connection of the gateway, not just this connector's.
 */
export function createAgents(options: AgentOptions = {}): { https: https.Agent; http: http.Agent } {
  const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
  const common = { keepAlive: true, maxSockets: options.maxSockets ?? 64, scheduling: 'lifo' as const };
  return { https: new https.Agent({ ...common, ...(ca ? { ca } : {}) }), http: new http.Agent(common) };
}
