import { createHash, randomBytes } from 'node:crypto';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { createUser, listen, listFiles, startBatch, waitForExport, type TestUser } from '../support/files';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { json, multipartFile, rawRequest } from '../support/proxy';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The gateway behind Debian's nginx running the shipped docker/nginx.conf (test/engines/nginx.ts),
 * as an operator deploys it: GATEWAY_CONTEXT_PATH=/gateway, TRUST_PROXY naming nginx's address.
 * Different clients are different source addresses (127.0.0.2, 127.0.0.3: all of 127/8 reaches nginx).
 */
describe('Behind nginx (docker/nginx.conf)', () => {
  let gw: TestGateway;
  let nginx: NginxHandle;
  let alice: TestUser;
  let rootId: string;
  const content = randomBytes(300_000);

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1', GATEWAY_LOGIN_MAX_FAILURES: '2' } });
    const direct = new URL(await listen(gw));
    nginx = await startNginx({ upstreams: [{ port: Number(direct.port) }] });
    alice = await createUser(gw, 'alice');
    rootId = (await gw.http().get(`${gw.api}/repo/fs/rootfolderid`).set('Authorization', adminAuth()).expect(200)).body.results.folderId;
  });
  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
  });

  const viaProxy = (path: string, options: Parameters<typeof rawRequest>[1] = {}) =>
    rawRequest(`${nginx.url}${path}`, { ...options, headers: { Authorization: alice.auth, ...options.headers } });

  async function upload(name: string, body: Buffer): Promise<string> {
    const form = multipartFile(name, body);
    const res = await viaProxy(`/gateway/api/repo/fs/file?folderId=${encodeURIComponent(rootId)}`, { method: 'POST', headers: form.headers, body: form.body });
    expect(res.status).toBe(201);
    return json(res).results.id;
  }

  it('content routes: upload, folder listing, download with Range and 304', async () => {
    const id = await upload('through-proxy.bin', content);
    const listing = await viaProxy(`/gateway/api/repo/fs/folderitems?id=${encodeURIComponent(rootId)}`);
    expect(listing.status).toBe(200);
    expect(JSON.stringify(json(listing))).toContain('through-proxy.bin');

    const file = `/gateway/api/repo/fs/file?id=${encodeURIComponent(id)}`;
    const whole = await viaProxy(file);
    expect(whole.status).toBe(200);
    expect(sha256(whole.body)).toBe(sha256(content));
    expect(whole.headers['content-disposition']).toContain('through-proxy.bin');
    const etag = whole.headers.etag!;
    expect(etag).toMatch(/^"/);

    const part = await viaProxy(file, { headers: { Range: 'bytes=1000-1999' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1000-1999/${content.length}`);
    expect(part.body.equals(content.subarray(1000, 2000))).toBe(true);

    const unchanged = await viaProxy(file, { headers: { 'If-None-Match': etag } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body.length).toBe(0);
    const since = await viaProxy(file, { headers: { 'If-Modified-Since': whole.headers['last-modified']! } });
    expect(since.status).toBe(304);

    const beyond = await viaProxy(file, { headers: { Range: `bytes=${content.length}-` } });
    expect(beyond.status).toBe(416);
  });

  it('file service: an export downloaded by its owner, and through a public link counted once per download', async () => {
    const id = await upload('for-export.bin', content);
    const batch = await startBatch(gw, alice, [{ fileName: 'inside.bin', connId: 'fs', id }]);
    await waitForExport(gw, alice, batch.docId);
    const own = await viaProxy(`/gateway/api/files/user/download?id=${batch.docId}`);
    expect(own.status).toBe(200);
    expect(own.body.subarray(0, 2).toString('latin1')).toBe('PK');

    const pub = `/gateway/api/public/download?key=${encodeURIComponent(batch.id)}`;
    const first = await rawRequest(`${nginx.url}${pub}`);
    expect(first.status).toBe(200);
    expect(sha256(first.body)).toBe(sha256(own.body));
    const resumed = await rawRequest(`${nginx.url}${pub}`, { headers: { Range: 'bytes=10-' } });
    expect(resumed.status).toBe(206);
    expect(resumed.body.equals(own.body.subarray(10))).toBe(true);
    const notModified = await rawRequest(`${nginx.url}${pub}`, { headers: { 'If-None-Match': first.headers.etag! } });
    expect(notModified.status).toBe(304);
    // One download; the resumption and the revalidation are not new downloads.
    expect((await listFiles(gw, alice)).links.find((l) => l.id === batch.id).used).toBe(1);
  });

  it('the login lock-out counts the address nginx saw, whatever X-Forwarded-For a client sends', async () => {
    await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'mallory', password: 'mallory-pass-1', roles: ['user'] }).expect(201);
    const attempt = (localAddress: string, password: string, forged?: string) =>
      rawRequest(`${nginx.url}/gateway/api/repo/connections`, {
        localAddress,
        headers: { Authorization: basic('mallory', password), ...(forged ? { 'X-Forwarded-For': forged } : {}) },
      });
    expect((await attempt('127.0.0.2', 'wrong-1')).status).toBe(401);
    // A forged X-Forwarded-For does not make the same client a new one: nginx appends the real address, the gateway takes that.
    expect((await attempt('127.0.0.2', 'wrong-2', '10.9.8.7')).status).toBe(401);
    const locked = await attempt('127.0.0.2', 'mallory-pass-1', '10.9.8.6');
    expect(locked.status).toBe(429);
    expect(json(locked).error.code).toBe('TOO_MANY_REQUESTS');
    // Another client of the same nginx is not locked out: the gateway does not see nginx's own address as the client.
    expect((await attempt('127.0.0.3', 'mallory-pass-1')).status).toBe(200);
  });

  it('OpenAPI behind the proxy: the server URL is the public context path, the docs page loads its assets through it', async () => {
    const doc = await rawRequest(`${nginx.url}/gateway/api/docs-json`, { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(doc.status).toBe(200);
    // Relative: the browser resolves it against the scheme and host it used (https://public-host), never the gateway's own.
    expect(json(doc).servers).toEqual([{ url: '/gateway' }]);
    const page = await rawRequest(`${nginx.url}/gateway/api/docs`, { headers: { Host: 'gw.example.org' } });
    const html = page.status === 200 ? page.body.toString('utf8') : '';
    if (page.status !== 200) {
      // A redirect must stay on the public host (relative, or naming the Host the client used).
      expect(page.status).toBeGreaterThanOrEqual(300);
      expect(String(page.headers.location)).toMatch(/^(\/gateway\/|https?:\/\/gw\.example\.org\/gateway\/|\.\/)/);
    } else {
      expect(html).toContain('swagger-ui');
      expect(html).not.toMatch(/https?:\/\/127\.0\.0\.1/);
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => !u.startsWith('data:'));
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) {
        const res = await rawRequest(new URL(asset, `${nginx.url}/gateway/api/docs`).href);
        expect([asset, res.status]).toEqual([asset, 200]);
      }
    }
  });

  it('forwards nothing outside /gateway: no metrics, no internal offload locations, no other path', async () => {
    for (const path of ['/metrics', '/gateway/metrics', '/gateway/api/metrics', '/_offload/files/x', '/api/health', '/']) {
      expect([path, (await rawRequest(`${nginx.url}${path}`)).status]).toEqual([path, 404]);
    }
    expect((await rawRequest(`${nginx.url}/gateway/api/health`)).status).toBe(200);
    // nginx's own redirect keeps the client's scheme and host: it is relative.
    const bare = await rawRequest(`${nginx.url}/gateway`, { headers: { Host: 'gw.example.org' } });
    expect([bare.status, bare.headers.location]).toEqual([301, '/gateway/']);
  });
});
