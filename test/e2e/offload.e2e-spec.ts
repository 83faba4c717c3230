import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { createUser, listen, listFiles, seedDocument, startBatch, waitForExport, type TestUser } from '../support/files';
import { AccessAuditService, linkId } from '../../apps/api/src/audit/access-audit.service';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { rawRequest, type RawAnswer } from '../support/proxy';

const ADMIN_USER = { username: 'admin', auth: adminAuth() };
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Download offload (GATEWAY_ACCEL_REDIRECT): the gateway decides, nginx (the shipped
 * docker/nginx.conf) sends the bytes from its internal locations.
 */
describe('Download offload through nginx (X-Accel-Redirect)', () => {
  let gw: TestGateway;
  let nginx: NginxHandle;
  let direct: string;
  let alice: TestUser;
  let bob: TestUser;
  const content = randomBytes(200_000);
  let docId: string;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1', GATEWAY_ACCEL_REDIRECT: '/_offload' } });
    direct = await listen(gw);
    nginx = await startNginx({
      upstreams: [{ port: Number(new URL(direct).port) }],
      userFilesDir: gw.config.files.dir,
      connectorRoots: { fs: path.join(gw.dataDir, 'repository') },
    });
    alice = await createUser(gw, 'alice');
    bob = await createUser(gw, 'bob');
    docId = await seedDocument(gw, 'docs/report.bin', content);
  });
  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
  });

  const file = (id: string) => `/gateway/api/repo/fs/file?id=${encodeURIComponent(id)}`;
  const viaProxy = (p: string, user: TestUser | undefined, headers: Record<string, string> = {}) =>
    rawRequest(`${nginx.url}${p}`, { headers: { ...(user ? { Authorization: user.auth } : {}), ...headers } });
  const atGateway = (p: string, user: TestUser | undefined, headers: Record<string, string> = {}) =>
    rawRequest(`${direct}${p}`, { headers: { ...(user ? { Authorization: user.auth } : {}), ...headers } });

  it('a document: the gateway answers with the headers and X-Accel-Redirect, nginx sends the bytes', async () => {
    const handedOff = await atGateway(file(docId), alice);
    expect(handedOff.status).toBe(200);
    expect(handedOff.headers['x-accel-redirect']).toBe('/_offload/repo/fs/docs/report.bin');
    expect(handedOff.body.length).toBe(0);

    const res = await viaProxy(file(docId), alice);
    expect(res.status).toBe(200);
    expect(sha256(res.body)).toBe(sha256(content));
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    // The gateway's headers, not nginx's guesses.
    for (const name of ['etag', 'last-modified', 'content-disposition', 'content-type', 'cache-control', 'content-security-policy']) {
      expect([name, res.headers[name]]).toEqual([name, handedOff.headers[name]]);
    }
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-length']).toBe(String(content.length));
  });

  it('markup is offloaded with the same protection as when streamed: attachment, sandboxing CSP, ASCII fallback name', async () => {
    const id = await seedDocument(gw, 'docs/Übersicht Q3.html', '<script>alert(document.cookie)</script>');
    const handedOff = await atGateway(file(id), alice);
    expect(handedOff.headers['x-accel-redirect']).toBeDefined();
    const res = await viaProxy(file(id), alice);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('<script>alert(document.cookie)</script>');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const disposition = res.headers['content-disposition']!;
    expect(disposition).toMatch(/^attachment; /);
    // Old clients read the plain filename: ASCII only.
    expect(disposition).toContain('filename="_bersicht Q3.html"');
    expect(disposition).toContain("filename*=UTF-8''%C3%9Cbersicht%20Q3.html");
  });

  it('Range and conditional requests: 206 from nginx, 304 from the gateway', async () => {
    const whole = await viaProxy(file(docId), alice);
    const part = await viaProxy(file(docId), alice, { Range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${content.length}`);
    expect(part.body.equals(content.subarray(100, 200))).toBe(true);
    const suffix = await viaProxy(file(docId), alice, { Range: 'bytes=-50' });
    expect(suffix.body.equals(content.subarray(content.length - 50))).toBe(true);

    expect((await viaProxy(file(docId), alice, { 'If-None-Match': whole.headers.etag! })).status).toBe(304);
    expect((await viaProxy(file(docId), alice, { 'If-Modified-Since': whole.headers['last-modified']! })).status).toBe(304);
    // If-Range naming another version: the whole (current) content, never a piece of it spliced onto old bytes.
    const stale = await viaProxy(file(docId), alice, { Range: 'bytes=100-199', 'If-Range': '"some-older-version"' });
    expect(stale.status).toBe(200);
    expect(sha256(stale.body)).toBe(sha256(content));
    expect((await viaProxy(file(docId), alice, { Range: `bytes=${content.length}-` })).status).toBe(416);
  });

  it('an older version is offloaded from its own file', async () => {
    const id = await seedDocument(gw, 'docs/versioned.txt', 'first version');
    const update = await rawRequest(`${nginx.url}/gateway/api/repo/fs/updateContent?fileId=${encodeURIComponent(id)}`, {
      method: 'PUT',
      headers: { Authorization: alice.auth, 'Content-Type': 'text/plain' },
      body: 'second version, longer',
    });
    expect(update.status).toBe(200);
    const versions = JSON.parse((await viaProxy(`/gateway/api/repo/fs/listversions?id=${encodeURIComponent(id)}`, alice)).body.toString()).results;
    const oldest = versions.find((v: { versionLength: number }) => v.versionLength === 'first version'.length);
    const oldHandOff = (await atGateway(file(oldest.docId), alice)).headers['x-accel-redirect'];
    expect(oldHandOff).toMatch(/^\/_offload\/repo\/fs\//);
    expect(oldHandOff).not.toBe('/_offload/repo/fs/docs/versioned.txt');
    const bodies = await Promise.all([viaProxy(file(id), alice), viaProxy(file(oldest.docId), alice)]);
    expect(bodies[0].body.toString()).toBe('second version, longer');
    expect(bodies[1].body.toString()).toBe('first version');
  });

  it('user files and public links: counted once per download, resumption and revalidation not counted', async () => {
    const batch = await startBatch(gw, alice, [{ fileName: 'inside.bin', connId: 'fs', id: docId }]);
    await waitForExport(gw, alice, batch.docId);
    const own = `/gateway/api/files/user/download?id=${batch.docId}`;
    expect((await atGateway(own, alice)).headers['x-accel-redirect']).toBe(`/_offload/files/${batch.docId}`);
    const mine = await viaProxy(own, alice);
    expect(mine.status).toBe(200);
    expect(mine.body.subarray(0, 2).toString('latin1')).toBe('PK');

    const pub = `/gateway/api/public/download?key=${encodeURIComponent(batch.id)}`;
    expect((await viaProxy(pub, undefined)).status).toBe(200);
    const again = await viaProxy(pub, undefined);
    expect(sha256(again.body)).toBe(sha256(mine.body));
    expect(again.headers['content-disposition']).toMatch(/^attachment; filename=.*\.zip/);
    const resumed = await viaProxy(pub, undefined, { Range: 'bytes=10-' });
    expect(resumed.status).toBe(206);
    expect(resumed.body.equals(mine.body.subarray(10))).toBe(true);
    expect((await viaProxy(pub, undefined, { 'If-None-Match': again.headers.etag! })).status).toBe(304);
    expect((await listFiles(gw, alice)).links.find((l) => l.id === batch.id).used).toBe(2);

    // External links to documents are offloaded too, and counted.
    const link = JSON.parse((await viaProxy(`/gateway/api/files/external/link?docId=${encodeURIComponent(docId)}&internal=false&connectorId=fs&lifeSpan=1`, alice)).body.toString()).results;
    const external = await viaProxy(`/gateway/api/public/download?key=${encodeURIComponent(link.key)}`, undefined);
    expect(sha256(external.body)).toBe(sha256(content));
    expect((await listFiles(gw, alice)).links.find((l) => l.id === link.key).used).toBe(1);
  });

  it('the access audit records each hand-off once: offload, with the bytes handed to the proxy, the user or the link', async () => {
    const bytes = randomBytes(30_000);
    const id = await seedDocument(gw, 'docs/audited-offload.bin', bytes);
    expect((await viaProxy(file(id), alice)).body.equals(bytes)).toBe(true);
    expect((await viaProxy(file(id), alice, { Range: 'bytes=1000-1999' })).status).toBe(206);
    const link = JSON.parse((await viaProxy(`/gateway/api/files/external/link?docId=${encodeURIComponent(id)}&internal=false&connectorId=fs&lifeSpan=1`, alice)).body.toString()).results;
    expect((await viaProxy(`/gateway/api/public/download?key=${encodeURIComponent(link.key)}`, undefined)).status).toBe(200);
    await gw.app.get(AccessAuditService).flush();
    const audit = await atGateway(`/gateway/api/admin/audit?documentId=${encodeURIComponent(id)}`, ADMIN_USER);
    expect(JSON.parse(audit.body.toString()).results).toEqual([
      expect.objectContaining({ operation: 'offload', user: 'alice', linkId: null, bytes: bytes.length, result: 'complete', clientAddress: '127.0.0.1', path: '/docs/audited-offload.bin' }),
      expect.objectContaining({ operation: 'offload', user: 'alice', bytes: 1000, result: 'complete' }),
      expect.objectContaining({ operation: 'offload', user: 'public', linkId: linkId(link.key), bytes: bytes.length, result: 'complete' }),
    ]);
  });

  it('nothing is handed off before authentication and authorization', async () => {
    const anonymous = await atGateway(file(docId), undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-accel-redirect']).toBeUndefined();
    const batch = await startBatch(gw, alice, [{ connId: 'fs', id: docId }]);
    await waitForExport(gw, alice, batch.docId);
    const others = await atGateway(`/gateway/api/files/user/download?id=${batch.docId}`, bob);
    expect(others.status).toBe(404);
    expect(others.headers['x-accel-redirect']).toBeUndefined();
  });

  it('no escape: links in the repository are refused, internal locations are unreachable from outside', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'offload-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(gw.dataDir, 'repository', 'docs', 'secret-link.txt'));
      fs.symlinkSync(outside, path.join(gw.dataDir, 'repository', 'outside-dir'));
      // A link is not a document of the repository, whatever it points at.
      for (const [folderPath, fileName] of [['/docs', 'secret-link.txt'], ['/outside-dir', 'secret.txt']]) {
        const res = await viaProxy(`/gateway/api/repo/fs/idbypath?folderPath=${encodeURIComponent(folderPath)}&fileName=${fileName}`, alice);
        expect(res.status).toBe(404);
      }
      for (const p of ['/_offload/repo/fs/docs/report.bin', '/_offload/files/', '/gateway/../_offload/repo/fs/docs/report.bin', '/gateway/%2e%2e/_offload/repo/fs/docs/report.bin']) {
        const res = await rawRequest(`${nginx.url}${p}`);
        expect([p, res.status]).toEqual([p, 404]);
        expect(res.body.toString()).not.toContain(content.subarray(0, 16).toString('latin1'));
      }
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

/**
 * The internal locations of the shipped nginx.conf on their own, behind an upstream that answers
 * whatever X-Accel-Redirect a test wants: what if a file became a link after the gateway checked it,
 * or a redirect carried a traversal?
 */
describe('docker/nginx.conf offload locations refuse links and traversal', () => {
  let upstream: http.Server;
  let nginx: NginxHandle;
  let root: string;
  let outside: string;
  let redirect = '';

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'offload-root-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'offload-outside-'));
    fs.writeFileSync(path.join(root, 'plain.txt'), 'plain');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'swapped.txt'));
    fs.symlinkSync(outside, path.join(root, 'dir-link'));
    upstream = http.createServer((_req, res) => {
      res.setHeader('X-Accel-Redirect', redirect);
      res.end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    nginx = await startNginx({ upstreams: [{ port: (upstream.address() as AddressInfo).port }], userFilesDir: root, connectorRoots: { fs: root } });
  });
  afterAll(async () => {
    await nginx?.stop();
    upstream?.close();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const through = async (target: string): Promise<RawAnswer> => {
    redirect = target;
    return rawRequest(`${nginx.url}/gateway/api/anything`);
  };

  it('serves a plain file and refuses links, whichever area', async () => {
    expect((await through('/_offload/files/plain.txt')).body.toString()).toBe('plain');
    expect((await through('/_offload/repo/fs/plain.txt')).body.toString()).toBe('plain');
    for (const target of ['/_offload/files/swapped.txt', '/_offload/repo/fs/swapped.txt', '/_offload/repo/fs/dir-link/secret.txt']) {
      const res = await through(target);
      // 403 for a link, 404 for a path through a linked folder (nginx's ELOOP): refused either way.
      expect([target, [403, 404].includes(res.status)]).toEqual([target, true]);
      expect(res.body.toString()).not.toContain('top secret');
    }
  });

  it('refuses traversal in the redirect', async () => {
    const secretRel = path.relative(root, path.join(outside, 'secret.txt'));
    for (const target of [`/_offload/files/${secretRel}`, `/_offload/repo/fs/%2e%2e/${path.basename(outside)}/secret.txt`]) {
      const res = await through(target);
      expect(res.body.toString()).not.toContain('top secret');
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
  });
});
