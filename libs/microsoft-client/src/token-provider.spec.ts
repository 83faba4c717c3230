import { execFileSync } from 'node:child_process';
import { createHash, createVerify, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgents } from './agent';
import { readText } from './https-client';
import { loadCertificateCredential, MsalTokenProvider } from './token-provider';
import { makeTestCa } from '../../../test/support/test-ca';

/**
 * msal-node against a real local HTTPS token endpoint signed by a throw-away CA: proves the agent's
 * caFile reaches MSAL (no NODE_EXTRA_CA_CERTS), that knownAuthorities avoids instance discovery
 * (the test has no internet), and what the provider caches.
 */
describe('MsalTokenProvider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'msal-test-'));
  const tenant = 'contoso-tenant';
  let server: Server;
  let origin = '';
  let tokenPosts: URLSearchParams[] = [];
  let expiresIn = 3599;

  beforeAll(async () => {
    const { key, cert, openssl } = makeTestCa(dir);
    // The app's credential: an RSA (PKCS#1) key and its certificate in one PEM, as often exported.
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'app.key', '-out', 'app.crt', '-days', '2', '-subj', '/CN=gateway app');
    const pkcs1 = execFileSync('openssl', ['rsa', '-in', join(dir, 'app.key'), '-traditional'], { stdio: 'pipe' }).toString();
    writeFileSync(join(dir, 'app.pem'), pkcs1 + readFileSync(join(dir, 'app.crt'), 'utf8'));

    server = createServer({ key, cert }, async (req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'GET' && req.url === `/${tenant}/v2.0/.well-known/openid-configuration`) {
        return json(200, {
          issuer: `${origin}/${tenant}/v2.0`,
          authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/authorize`,
          token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
          jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
        });
      }
      if (req.method === 'POST' && req.url?.split('?')[0] === `/${tenant}/oauth2/v2.0/token`) {
        tokenPosts.push(new URLSearchParams(await readText(req, 1 << 16)));
        return json(200, { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: `tok-${tokenPosts.length}` });
      }
      json(404, { error: 'not_found' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    tokenPosts = [];
    expiresIn = 3599;
  });

  const agent = () => createAgents({ caFile: join(dir, 'ca.pem') }).https;

  it('gets a token with a client secret through the connector CA, caches it, and refreshes after invalidate()', async () => {
    const provider = new MsalTokenProvider({ tenantId: tenant, clientId: 'app-1', clientSecret: 's3cret', authorityHost: origin, scope: 'https://contoso.sharepoint.com/.default', agent: agent() });
    expect(await provider.getToken()).toBe('tok-1');
    expect(await provider.getToken()).toBe('tok-1');
    expect(tokenPosts).toHaveLength(1);
    expect(Object.fromEntries(tokenPosts[0])).toMatchObject({
      grant_type: 'client_credentials',
      client_id: 'app-1',
      client_secret: 's3cret',
      scope: 'https://contoso.sharepoint.com/.default',
    });
    provider.invalidate();
    expect(await provider.getToken()).toBe('tok-2');
    expect(tokenPosts).toHaveLength(2);
  });

  it('shares one acquisition between concurrent callers', async () => {
    const provider = new MsalTokenProvider({ tenantId: tenant, clientId: 'app-1', clientSecret: 's', authorityHost: origin, scope: 'x/.default', agent: agent() });
    const got = await Promise.all([provider.getToken(), provider.getToken(), provider.getToken()]);
    expect(new Set(got).size).toBe(1);
    expect(tokenPosts).toHaveLength(1);
  });

  it('renews a token that comes within the margin of its expiry', async () => {
    let now = Date.now();
    expiresIn = 3600;
    const provider = new MsalTokenProvider({ tenantId: tenant, clientId: 'app-1', clientSecret: 's', authorityHost: origin, scope: 'y/.default', agent: agent(), now: () => now });
    expect(await provider.getToken()).toBe('tok-1');
    now += 3000_000; // 50 min: still more than 5 min left
    expect(await provider.getToken()).toBe('tok-1');
    now += 400_000; // 56.7 min: inside the 5-minute margin
    expect(await provider.getToken()).toBe('tok-2');
  });

  it('signs a client assertion with the certificate whose SHA-1 thumbprint it names (x5t)', async () => {
    const cert = new X509Certificate(readFileSync(join(dir, 'app.crt')));
    const sha1 = createHash('sha1').update(cert.raw).digest('hex');
    const provider = new MsalTokenProvider({
      tenantId: tenant,
      clientId: 'app-2',
      certificatePath: join(dir, 'app.pem'),
      certificateThumbprint: sha1.toUpperCase(),
      authorityHost: origin,
      scope: 'https://contoso.sharepoint.com/.default',
      agent: agent(),
    });
    await provider.getToken();
    const form = Object.fromEntries(tokenPosts[0]);
    expect(form.client_assertion_type).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(form.client_secret).toBeUndefined();
    const [h, p, sig] = form.client_assertion.split('.');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    expect(header).toMatchObject({ alg: 'RS256', x5t: Buffer.from(sha1, 'hex').toString('base64url') });
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toMatchObject({ iss: 'app-2', sub: 'app-2', aud: `${origin}/${tenant}/oauth2/v2.0/token` });
    const ok = createVerify('RSA-SHA256').update(`${h}.${p}`).verify(cert.publicKey, Buffer.from(sig, 'base64url'));
    expect(ok).toBe(true);
  });

  it('refuses bad configuration naming the parameter', () => {
    expect(() => new MsalTokenProvider({ tenantId: tenant, clientId: 'a', authorityHost: origin, scope: 's' })).toThrow(expect.objectContaining({ details: { parameter: 'clientSecret' } }));
    expect(() => new MsalTokenProvider({ tenantId: tenant, clientId: 'a', clientSecret: 's', authorityHost: origin.replace('https', 'http'), scope: 's' })).toThrow(
      expect.objectContaining({ details: { parameter: 'authorityHost' } }),
    );
    expect(() => loadCertificateCredential(join(dir, 'missing.pem'))).toThrow(expect.objectContaining({ details: { parameter: 'certificatePath' } }));
    expect(() => loadCertificateCredential(join(dir, 'app.pem'), 'abc')).toThrow(expect.objectContaining({ details: { parameter: 'certificateThumbprint' } }));
    expect(loadCertificateCredential(join(dir, 'app.pem'))).toMatchObject({ thumbprintSha256: expect.stringMatching(/^[0-9a-f]{64}$/), privateKey: expect.stringContaining('BEGIN PRIVATE KEY') });
  });
});
