import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';

export interface AgentOptions {
  /** PEM file of a private CA to trust in addition to the public roots (test CA of the simulators, corporate CAs). */
  caFile?: string;
  maxSockets?: number;
}

/** A connector's agents, and the trust its https agent was made with (its content transport trusts the same). */
export interface ConnectorAgents {
  https: https.Agent;
  http: http.Agent;
  /** The public roots and the connector's caFile; undefined: the public roots only (Node's default). */
  ca?: string[];
}

/**
 * One keep-alive agent per connector for both its API and MSAL's token calls. The CA is given to
 * the agent rather than through NODE_EXTRA_CA_CERTS, which Node reads only at process start and
 * would apply to every outbound connection of the gateway, not just this connector's.
 *
 * The trust goes in as a secure context made once, not as `ca`: an agent keys its sockets by a name
 * built from the request's TLS options on every request (https.Agent.getName), and a `ca` of the ~140
 * public roots plus the CA made that name a 216 KB string, about 0.35 ms of CPU per API call (7.5 % of
 * a Graph sync run's profile), and had each new connection parse the roots again.
 */
export function createAgents(options: AgentOptions = {}): ConnectorAgents {
  const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
  const common = { keepAlive: true, maxSockets: options.maxSockets ?? 64, scheduling: 'lifo' as const };
  return {
    https: new https.Agent({ ...common, ...(ca ? { secureContext: createSecureContext({ ca }) } : {}) }),
    http: new http.Agent(common),
    ...(ca ? { ca } : {}),
  };
}
