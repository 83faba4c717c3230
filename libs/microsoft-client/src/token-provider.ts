import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { ConfidentialClientApplication, type Configuration, type INetworkModule, type NetworkRequestOptions, type NetworkResponse } from '@azure/msal-node';
import { InvalidArgumentError, UpstreamError, UpstreamUnavailableError } from '@gateway/errors';
import type { TokenSource } from './https-client';

export const DEFAULT_AUTHORITY_HOST = 'https://login.microsoftonline.com';

export interface TokenProviderOptions {
  tenantId: string;
  clientId: string;
  clientSecret?: string;
  /** PEM holding the private key (and usually the certificate, from which a missing thumbprint is computed). */
  certificatePath?: string;
  /** Hex SHA-1 (40 digits: JWT header x5t) or SHA-256 (64 digits: x5t#S256) thumbprint of the certificate. */
  certificateThumbprint?: string;
  authorityHost?: string;
  /** One resource's `.default` scope: `https://contoso.sharepoint.com/.default`, `https://graph.microsoft.com/.default`. */
  scope: string;
  /** The agent MSAL's own calls go through (the connector's, so they trust its caFile). */
  agent?: https.Agent;
  /** Renew this long before expiry so no request leaves with a token about to lapse. */
  refreshMarginSeconds?: number;
  now?: () => number;
}

/** The Entra app credentials a connector's params carry (the token provider's options without the wiring). */
export type EntraCredentials = Pick<TokenProviderOptions, 'tenantId' | 'clientId' | 'clientSecret' | 'certificatePath' | 'certificateThumbprint' | 'authorityHost'>;

/**
 * MSAL's network module on node:https with the connector's agent. msal-node 7 calls global fetch,
 * which trusts only the public roots plus NODE_EXTRA_CA_CERTS read at process start; giving MSAL
 * this module lets each connector trust its own `caFile` (the simulators' test CA, a corporate CA)
 * without a process-wide setting.
 */
export class AgentNetworkModule implements INetworkModule {
  constructor(private readonly agent?: https.Agent) {}

  sendGetRequestAsync<T>(url: string, options?: NetworkRequestOptions, timeout?: number): Promise<NetworkResponse<T>> {
    return this.send<T>('GET', url, options, timeout);
  }

  sendPostRequestAsync<T>(url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    return this.send<T>('POST', url, options);
  }

  private send<T>(method: string, url: string, options: NetworkRequestOptions = {}, timeout = 30_000): Promise<NetworkResponse<T>> {
    const target = new URL(url);
    const body = method === 'POST' ? (options.body ?? '') : undefined;
    const headers: Record<string, string | number> = { ...options.headers };
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    return new Promise((resolve, reject) => {
      const req = (target.protocol === 'https:' ? https : http).request(
        target,
        { method, headers, ...(target.protocol === 'https:' && this.agent ? { agent: this.agent } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = {};
            try {
              parsed = text ? JSON.parse(text) : {};
            } catch {
              return reject(new UpstreamError(`The identity provider sent a non-JSON answer (HTTP ${res.statusCode}) from ${target.origin}`));
            }
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve({ headers: h, body: parsed as T, status: res.statusCode ?? 0 });
          });
        },
      );
      req.setTimeout(timeout, () => req.destroy(new Error(`no answer within ${timeout} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** The certificate credential MSAL wants, from a PEM file: key, thumbprint (given or computed) and, when present, the chain. */
export function loadCertificateCredential(
  certificatePath: string,
  thumbprint?: string,
): { privateKey: string; thumbprint?: string; thumbprintSha256?: string; x5c?: string } {
  let pem: string;
  try {
    pem = readFileSync(certificatePath, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError('certificatePath', `certificatePath '${certificatePath}' cannot be read: ${(e as Error).message}`);
  }
  const keyMatch = pem.match(/-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----/);
  if (!keyMatch) throw new InvalidArgumentError('certificatePath', `certificatePath '${certificatePath}' holds no PEM private key`);
  // MSAL signs with the key as PKCS#8 ("BEGIN PRIVATE KEY"); an RSA (PKCS#1) key is converted.
  const privateKey = createPrivateKey(keyMatch[0]).export({ type: 'pkcs8', format: 'pem' }).toString();
  const certMatch = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/);
  let hex = thumbprint?.replace(/[^0-9a-fA-F]/g, '').toLowerCase();
  if (!hex && certMatch) hex = createHash('sha256').update(new X509Certificate(certMatch[0]).raw).digest('hex');
  if (!hex) throw new InvalidArgumentError('certificateThumbprint', 'certificateThumbprint is required when certificatePath holds no certificate');
  if (hex.length !== 40 && hex.length !== 64) {
    throw new InvalidArgumentError('certificateThumbprint', 'certificateThumbprint must be a hex SHA-1 (40 digits) or SHA-256 (64 digits) thumbprint');
  }
  return {
    privateKey,
    ...(hex.length === 40 ? { thumbprint: hex } : { thumbprintSha256: hex }),
    ...(certMatch ? { x5c: certMatch[0] } : {}),
  };
}

/**
 * Client-credential tokens through @azure/msal-node's ConfidentialClientApplication. The token is
 * kept here until `refreshMarginSeconds` before it expires and concurrent callers share one
 * acquisition. This is the one cache: MSAL's own is skipped when this one asks, so a renewal or an
 * invalidate() (after a 401) always reaches the token endpoint.
 */
export class MsalTokenProvider implements TokenSource {
  private readonly app: ConfidentialClientApplication;
  private cached?: { token: string; expiresAt: number };
  private pending?: Promise<string>;
  private readonly margin: number;
  private readonly now: () => number;

  constructor(private readonly options: TokenProviderOptions) {
    if (!options.clientSecret && !options.certificatePath) {
      throw new InvalidArgumentError('clientSecret', 'Either clientSecret or certificatePath (+ certificateThumbprint) is required');
    }
    const host = new URL(options.authorityHost ?? DEFAULT_AUTHORITY_HOST);
    if (host.protocol !== 'https:') throw new InvalidArgumentError('authorityHost', 'authorityHost must be an https URL (MSAL refuses others)');
    const config: Configuration = {
      auth: {
        clientId: options.clientId,
        authority: `${host.origin}/${encodeURIComponent(options.tenantId)}`,
        // knownAuthorities (host:port) turns off instance discovery against login.microsoftonline.com,
        // which a private cloud or the simulator could not answer.
        knownAuthorities: [host.host],
        ...(options.certificatePath
          ? { clientCertificate: loadCertificateCredential(options.certificatePath, options.certificateThumbprint) }
          : { clientSecret: options.clientSecret }),
      },
      system: { networkClient: new AgentNetworkModule(options.agent) },
    };
    this.app = new ConfidentialClientApplication(config);
    this.margin = (options.refreshMarginSeconds ?? 300) * 1000;
    this.now = options.now ?? Date.now;
  }

  async getToken(): Promise<string> {
    if (this.cached && this.cached.expiresAt - this.margin > this.now()) return this.cached.token;
    this.pending ??= this.acquire().finally(() => (this.pending = undefined));
    return this.pending;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async acquire(): Promise<string> {
    let result;
    try {
      result = await this.app.acquireTokenByClientCredential({ scopes: [this.options.scope], skipCache: true });
    } catch (e) {
      const err = e as { errorCode?: string; errorMessage?: string; message?: string };
      const text = err.errorMessage || err.message || String(e);
      if (/network|ECONNREFUSED|ENOTFOUND|timeout/i.test(`${err.errorCode} ${text}`)) {
        throw new UpstreamUnavailableError(`The identity provider at ${this.options.authorityHost ?? DEFAULT_AUTHORITY_HOST} is unreachable: ${text}`, {}, e);
      }
      throw new UpstreamError(`The identity provider refused the connector's credentials (${err.errorCode ?? 'error'}): ${text}`, { errorCode: err.errorCode }, e);
    }
    if (!result?.accessToken) throw new UpstreamError('The identity provider returned no access token');
    const expiresAt = result.expiresOn ? result.expiresOn.getTime() : this.now() + 3_600_000;
    // A token shorter-lived than twice the margin would never be reused: keep it for half its life then.
    const life = expiresAt - this.now();
    this.cached = { token: result.accessToken, expiresAt: life < 2 * this.margin ? this.now() + life / 2 + this.margin : expiresAt };
    return result.accessToken;
  }
}
