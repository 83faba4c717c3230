/**
 * An Entra-like identity provider for the simulators, served by the simulator's own HTTPS server:
 *
 *   GET  /{tenant}/v2.0/.well-known/openid-configuration   what MSAL reads before its first token call
 *   GET  /{tenant}/discovery/v2.0/keys                     the JWKS of the token-signing key
 *   POST /{tenant}/oauth2/v2.0/token                       client_credentials with client_secret (post or
 *                                                          HTTP Basic) or a client_assertion JWT signed by a
 *                                                          registered certificate
 *
 * Access tokens are RS256 JWTs with `aud` = the scope's resource, `tid`, `appid`/`azp`, `roles`, `exp`,
 * `uti`. The simulated APIs call verifyBearer() and answer 401 in their own error shape. The Microsoft
 * instance-discovery endpoint is deliberately not served: clients must pass `knownAuthorities` (or
 * `authorityMetadata`), as the real connectors do, and a client that does not fails loudly here.
 * Wire facts: /work/shared/reference/sharepoint-graph/sharepoint-graph-wire.md §2.
 */
import * as crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { certificateThumbprints } from './tls';

export interface AppRegistration {
  clientId: string;
  /** Accepted as client_secret (form) or HTTP Basic. */
  clientSecret?: string;
  /** PEM certificates whose key may sign a client_assertion. */
  certificates?: string[];
  /** App roles put in the token's `roles` claim (e.g. Sites.ReadWrite.All). */
  roles?: string[];
  displayName?: string;
}

export interface IdentityOptions {
  /** https://127.0.0.1:PORT — the issuer, token and keys URLs are built on it. */
  origin: string;
  tenantId: string;
  /** Other names the tenant answers to (e.g. contoso.onmicrosoft.com). */
  tenantAliases?: string[];
  apps: AppRegistration[];
  /** Resources (`aud` values) a token may be asked for: `<resource>/.default`. */
  resources: string[];
  tokenLifetimeSeconds?: number;
}

export type BearerCheck =
  | { ok: true; claims: TokenClaims }
  | { ok: false; code: 'missing' | 'malformed' | 'signature' | 'expired' | 'audience' | 'revoked'; message: string };

export interface TokenClaims {
  aud: string;
  iss: string;
  iat: number;
  nbf: number;
  exp: number;
  tid: string;
  appid: string;
  azp: string;
  oid: string;
  sub: string;
  roles: string[];
  uti: string;
  ver: string;
  app_displayname?: string;
  /** v2 tokens: how the app authenticated, "1" client secret, "2" certificate (SharePoint refuses "1" app-only). */
  azpacr?: '1' | '2';
}

function b64url(input: Buffer | string): string {
  return Buffer.from(input).toString('base64url');
}

function decodeJson(part: string): Record<string, unknown> {
  const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
  return value as Record<string, unknown>;
}

async function readForm(req: IncomingMessage, limit = 64 * 1024): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

export class IdentityProvider {
  private readonly keyPair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  private readonly kid = crypto.randomBytes(12).toString('base64url');
  /** Tokens still honoured; expireAll() empties it (the "expire tokens early" fault). */
  private readonly live = new Set<string>();
  private readonly tenants: Set<string>;
  private readonly lifetime: number;
  /** How many tokens were issued (tests assert a refresh happened). */
  issuedCount = 0;

  constructor(private readonly options: IdentityOptions) {
    this.tenants = new Set([options.tenantId, ...(options.tenantAliases ?? [])].map((t) => t.toLowerCase()));
    this.lifetime = options.tokenLifetimeSeconds ?? 3599;
  }

  /** The authority URL a client configures: https://host:port/{tenantId}. */
  get authority(): string {
    return `${this.options.origin}/${this.options.tenantId}`;
  }

  get issuer(): string {
    return `${this.options.origin}/${this.options.tenantId}/v2.0`;
  }

  get tokenEndpoint(): string {
    return `${this.options.origin}/${this.options.tenantId}/oauth2/v2.0/token`;
  }

  /** The openid-configuration document (clients may pass it as MSAL's `authorityMetadata`). */
  openIdConfiguration(): Record<string, unknown> {
    const base = `${this.options.origin}/${this.options.tenantId}`;
    return {
      token_endpoint: `${base}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${base}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: this.issuer,
      request_uri_parameter_supported: false,
      userinfo_endpoint: `${this.options.origin}/oidc/userinfo`,
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${base}/oauth2/v2.0/logout`,
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'tid', 'ver', 'oid', 'roles', 'appid', 'azp'],
      tenant_region_scope: 'EU',
      cloud_instance_name: 'microsoftonline.com',
      cloud_graph_host_name: 'graph.windows.net',
      msgraph_host: 'graph.microsoft.com',
      rbac_url: 'https://pas.windows.net',
    };
  }

  jwks(): { keys: Record<string, unknown>[] } {
    const jwk = this.keyPair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    return { keys: [{ kty: 'RSA', use: 'sig', kid: this.kid, x5t: this.kid, n: jwk.n, e: jwk.e, issuer: this.issuer }] };
  }

  /** Every token issued so far stops being accepted (the next API call gets 401). */
  expireAll(): void {
    this.live.clear();
  }

  /** Answers the identity routes; false when the request is not one of them. */
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): boolean | Promise<boolean> {
    const match = /^\/([^/]+)\/(v2\.0\/\.well-known\/openid-configuration|discovery\/v2\.0\/keys|oauth2\/v2\.0\/token)$/.exec(pathname);
    if (!match) return false;
    if (!this.tenants.has(decodeURIComponent(match[1]).toLowerCase())) {
      this.oauthError(res, 400, 'invalid_tenant', 90002, `Tenant '${match[1]}' not found. Check to make sure you have the correct tenant ID.`);
      return true;
    }
    if (match[2] === 'oauth2/v2.0/token') {
      if (req.method !== 'POST') {
        this.oauthError(res, 405, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
        return true;
      }
      return this.token(req, res).then(() => true);
    }
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'invalid_request' });
      return true;
    }
    sendJson(res, 200, match[2].startsWith('discovery') ? this.jwks() : this.openIdConfiguration());
    return true;
  }

  private oauthError(res: ServerResponse, status: number, error: string, code: number, description: string): void {
    const traceId = crypto.randomUUID();
    sendJson(res, status, {
      error,
      error_description: `AADSTS${code}: ${description} Trace ID: ${traceId} Correlation ID: ${traceId} Timestamp: ${new Date().toISOString().replace('T', ' ').slice(0, 19)}Z`,
      error_codes: [code],
      timestamp: new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z',
      trace_id: traceId,
      correlation_id: traceId,
    });
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let form: URLSearchParams;
    try {
      form = await readForm(req);
    } catch {
      this.oauthError(res, 400, 'invalid_request', 900144, "The request body must contain the parameter: 'grant_type'.");
      return;
    }
    const grantType = form.get('grant_type');
    if (grantType !== 'client_credentials') {
      this.oauthError(res, 400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${grantType ?? ''}'.`);
      return;
    }
    let clientId = form.get('client_id') ?? '';
    let secret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const [id, ...rest] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id);
      secret = decodeURIComponent(rest.join(':'));
    }
    const app = this.options.apps.find((a) => a.clientId === clientId);
    if (!app) {
      this.oauthError(res, 400, 'unauthorized_client', 700016, `Application with identifier '${clientId}' was not found in the directory.`);
      return;
    }
    const assertion = form.get('client_assertion');
    if (secret !== null && secret !== undefined) {
      const digest = (text: string) => crypto.createHash('sha256').update(text).digest();
      if (!app.clientSecret || !crypto.timingSafeEqual(digest(secret), digest(app.clientSecret))) {
        this.oauthError(res, 401, 'invalid_client', 7000215, 'Invalid client secret provided.');
        return;
      }
    } else if (assertion) {
      if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
        this.oauthError(res, 400, 'invalid_request', 50027, 'client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer.');
        return;
      }
      const problem = this.checkAssertion(assertion, app);
      if (problem) {
        this.oauthError(res, 401, 'invalid_client', problem.code, problem.message);
        return;
      }
    } else {
      this.oauthError(res, 401, 'invalid_client', 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
      return;
    }
    const scope = (form.get('scope') ?? '').trim();
    const resource = scope.endsWith('/.default') && !scope.includes(' ') ? scope.slice(0, -'/.default'.length) : undefined;
    if (!resource) {
      this.oauthError(res, 400, 'invalid_scope', 1002012, `The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`);
      return;
    }
    if (!this.options.resources.includes(resource)) {
      this.oauthError(res, 400, 'invalid_resource', 500011, `The resource principal named ${resource} was not found in the tenant named ${this.options.tenantId}.`);
      return;
    }
    const token = this.issue(app, resource, assertion && (secret === null || secret === undefined) ? '2' : '1');
    sendJson(res, 200, { token_type: 'Bearer', expires_in: this.lifetime, ext_expires_in: this.lifetime, access_token: token });
  }

  /** Verifies a client_assertion against the app's registered certificates; undefined when valid. */
  private checkAssertion(assertion: string, app: AppRegistration): { code: number; message: string } | undefined {
    const parts = assertion.split('.');
    if (parts.length !== 3) return { code: 50027, message: 'JWT token is invalid or malformed.' };
    let header: Record<string, unknown>;
    let payload: Record<string, unknown>;
    try {
      header = decodeJson(parts[0]);
      payload = decodeJson(parts[1]);
    } catch {
      return { code: 50027, message: 'JWT token is invalid or malformed.' };
    }
    const certs = (app.certificates ?? []).map((pem) => ({ pem, ...certificateThumbprints(pem) }));
    const x5t = typeof header.x5t === 'string' ? Buffer.from(header.x5t, 'base64url').toString('hex').toUpperCase() : undefined;
    const x5t256 = typeof header['x5t#S256'] === 'string' ? Buffer.from(header['x5t#S256'], 'base64url').toString('hex').toUpperCase() : undefined;
    const cert = certs.find((c) => (x5t !== undefined && c.sha1 === x5t) || (x5t256 !== undefined && c.sha256 === x5t256));
    if (!cert) {
      return { code: 700027, message: `The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '${x5t ?? x5t256 ?? ''}']` };
    }
    const key = new crypto.X509Certificate(cert.pem).publicKey;
    const data = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = Buffer.from(parts[2], 'base64url');
    let valid = false;
    if (header.alg === 'RS256') valid = crypto.verify('sha256', data, key, signature);
    else if (header.alg === 'PS256') valid = crypto.verify('sha256', data, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_AUTO }, signature);
    if (!valid) return { code: 700027, message: 'Client assertion failed signature validation.' };
    const now = Math.floor(Date.now() / 1000);
    if (payload.iss !== app.clientId || payload.sub !== app.clientId) {
      return { code: 700021, message: 'Client assertion application identifier does not match client_id parameter.' };
    }
    const aud = payload.aud;
    const tokenUrls = [this.tokenEndpoint, this.issuer];
    if (typeof aud !== 'string' || !tokenUrls.includes(aud)) {
      return { code: 700212, message: `No matching federated identity record found for presented assertion audience '${String(aud)}'.` };
    }
    if (typeof payload.exp !== 'number' || payload.exp < now - 300) return { code: 700024, message: 'Client assertion is not within its valid time range.' };
    return undefined;
  }

  private issue(app: AppRegistration, resource: string, azpacr: '1' | '2' = '1'): string {
    const now = Math.floor(Date.now() / 1000);
    const uti = crypto.randomBytes(16).toString('base64url');
    const oid = crypto.createHash('sha256').update(app.clientId).digest('hex');
    const objectId = `${oid.slice(0, 8)}-${oid.slice(8, 12)}-${oid.slice(12, 16)}-${oid.slice(16, 20)}-${oid.slice(20, 32)}`;
    const claims: TokenClaims = {
      aud: resource,
      iss: this.issuer,
      iat: now,
      nbf: now,
      exp: now + this.lifetime,
      tid: this.options.tenantId,
      appid: app.clientId,
      azp: app.clientId,
      oid: objectId,
      sub: objectId,
      roles: app.roles ?? [],
      uti,
      ver: '2.0',
      app_displayname: app.displayName ?? app.clientId,
      azpacr,
    };
    const head = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', kid: this.kid, x5t: this.kid }));
    const body = b64url(JSON.stringify(claims));
    const signature = crypto.sign('sha256', Buffer.from(`${head}.${body}`), this.keyPair.privateKey).toString('base64url');
    this.live.add(uti);
    this.issuedCount++;
    return `${head}.${body}.${signature}`;
  }

  /**
   * Checks an `Authorization` header: a Bearer JWT signed by this provider, not expired, not revoked
   * by expireAll(), for this tenant and one of `audiences`.
   */
  verifyBearer(header: string | undefined, audiences: string | readonly string[]): BearerCheck {
    const match = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(header ?? '');
    if (!header) return { ok: false, code: 'missing', message: 'Access token is empty.' };
    if (!match) return { ok: false, code: 'malformed', message: 'Invalid JWT token. The token is not in a valid format.' };
    const valid = crypto.verify('sha256', Buffer.from(`${match[1]}.${match[2]}`), this.keyPair.publicKey, Buffer.from(match[3], 'base64url'));
    if (!valid) return { ok: false, code: 'signature', message: 'Invalid JWT token. Token signature is not valid.' };
    let claims: TokenClaims;
    try {
      claims = decodeJson(match[2]) as unknown as TokenClaims;
    } catch {
      return { ok: false, code: 'malformed', message: 'Invalid JWT token. The token is not in a valid format.' };
    }
    if (claims.exp <= Math.floor(Date.now() / 1000)) return { ok: false, code: 'expired', message: 'Lifetime validation failed, the token is expired.' };
    if (!this.live.has(claims.uti)) return { ok: false, code: 'revoked', message: 'Lifetime validation failed, the token is expired.' };
    const allowed = typeof audiences === 'string' ? [audiences] : audiences;
    if (!allowed.includes(claims.aud) || claims.tid !== this.options.tenantId) {
      return { ok: false, code: 'audience', message: 'Invalid audience.' };
    }
    return { ok: true, claims };
  }
}
