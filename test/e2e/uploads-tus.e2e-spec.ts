import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { Clock } from '../../apps/api/src/common/clock';
import { UploadsService } from '../../apps/api/src/uploads/uploads.service';
import { createUser, listen, rawGet, type TestUser } from '../support/files';
import { ADMIN, adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { json, rawRequest } from '../support/proxy';
import { CountingProxy, makeSourceFile, MemoryUrlStorage, runTus, streamSha256, uploadIdOf, type SourceFile } from '../support/tus';

const MiB = 1024 * 1024;
const TUS = { 'Tus-Resumable': '1.0.0' };

/**
 * tus 1.0 on /api/uploads, driven by the official tus-js-client (its Node build) against the gateway in
 * this process: chunks, an interrupted upload resumed by a new client, ownership, quota, checksum, expiry,
 * and the finished upload turned into a document or a version.
 */
describe('Resumable uploads (tus) on /api/uploads', () => {
  let gw: TestGateway;
  let base: string;
  let alice: TestUser;
  let bob: TestUser;
  let rootId: string;
  let source: SourceFile;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_UPLOAD_QUOTA_BYTES: String(64 * MiB), GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    base = await listen(gw);
    alice = await createUser(gw, 'alice');
    bob = await createUser(gw, 'bob');
    rootId = (await gw.http().get(`${gw.api}/repo/fs/rootfolderid`).set('Authorization', adminAuth()).expect(200)).body.results.folderId;
    source = await makeSourceFile(8 * MiB + 12345);
  });
  afterAll(async () => {
    source?.remove();
    await gw?.close();
  });

  const endpoint = () => `${base}/api/uploads`;
  const tusRequest = (user: TestUser, url: string, method: string, headers: Record<string, string> = {}, body?: Buffer) =>
    rawRequest(url, { method, headers: { Authorization: user.auth, ...TUS, ...headers }, body });

  async function documentSha256(id: string, user: TestUser): Promise<string> {
    const res = await rawGet(`${base}/api/repo/fs/file?id=${encodeURIComponent(id)}`, { Authorization: user.auth });
    expect(res.statusCode).toBe(200);
    return (await streamSha256(res)).sha256;
  }

  async function turnIntoDocument(user: TestUser, uploadId: string, fileName?: string) {
    const query = new URLSearchParams({ uploadId, folderId: rootId, ...(fileName ? { fileName } : {}) });
    return rawRequest(`${base}/api/repo/fs/file?${query.toString()}`, { method: 'POST', headers: { Authorization: user.auth } });
  }

  it('uploads in chunks, is interrupted mid-way, and a new client resumes re-sending at most one chunk; the document has the source\'s SHA-256', async () => {
    const chunkSize = 1 * MiB;
    const urlStorage = new MemoryUrlStorage();
    const proxy = new CountingProxy({ host: '127.0.0.1', port: Number(new URL(base).port) });
    const viaProxy = `${await proxy.start()}/api/uploads`;
    try {
      // The first client is aborted once half the file has gone out.
      let aborted = false;
      const first = runTus(source, {
        endpoint: viaProxy,
        authorization: alice.auth,
        chunkSize,
        urlStorage,
        onProgress: (sent, total, upload) => {
          if (!aborted && sent >= total / 2) {
            aborted = true;
            void upload.abort();
          }
        },
      });
      await expect(Promise.race([first.done, new Promise((r) => setTimeout(r, 3000, 'stopped'))])).resolves.toBe('stopped');
      expect(aborted).toBe(true);
      const url = (await urlStorage.findAllUploads())[0].uploadUrl!;
      const head = await tusRequest(alice, url.replace(viaProxy, endpoint()), 'HEAD');
      const stored = Number(head.headers['upload-offset']);
      expect(stored).toBeGreaterThan(0);
      expect(stored).toBeLessThan(source.size);

      const second = runTus(source, { endpoint: viaProxy, authorization: alice.auth, chunkSize, urlStorage, resume: true });
      const finishedUrl = await second.done;
      expect(finishedUrl).toBe(url);
      // Everything the clients sent, heads included, beyond the file itself: at most one chunk plus ~1 KiB of head per request.
      const requests = first.requests() + second.requests();
      const extra = proxy.sent - source.size;
      expect(extra).toBeLessThanOrEqual(chunkSize + requests * 1024);

      const created = await turnIntoDocument(alice, uploadIdOf(url), 'resumed.bin');
      expect(created.status).toBe(201);
      expect(await documentSha256(json(created).results.id, alice)).toBe(source.sha256);
      // The upload is gone once it became a document.
      expect((await tusRequest(alice, url.replace(viaProxy, endpoint()), 'HEAD')).status).toBe(404);
    } finally {
      await proxy.stop();
    }
  });

  it('the README\'s curl recipe: create, send part, send the rest from HEAD\'s offset (chunked PATCH), into a document', async () => {
    const script = `
      set -e
      SIZE=$(stat -c %s "$FILE")
      URL=$(curl -s -u "$AUTH" -X POST "$GW/api/uploads" -H 'Tus-Resumable: 1.0.0' -H "Upload-Length: $SIZE" \\
        -H "Upload-Metadata: filename $(printf recipe.bin | base64)" -D - -o /dev/null | tr -d '\\r' | sed -n 's/^location: //Ip')
      send() {
        OFFSET=$(curl -s -u "$AUTH" -I "$URL" -H 'Tus-Resumable: 1.0.0' | tr -d '\\r' | sed -n 's/^upload-offset: //Ip')
        tail -c +$((OFFSET + 1)) "$FILE" | head -c "$1" | curl -s -u "$AUTH" -X PATCH "$URL" -T - -H 'Tus-Resumable: 1.0.0' \\
          -H "Upload-Offset: $OFFSET" -H 'Content-Type: application/offset+octet-stream' -o /dev/null -w '%{http_code} '
      }
      send 3000000
      send "$SIZE"
      curl -s -u "$AUTH" -X POST "$GW/api/repo/fs/file?uploadId=\${URL##*/}&folderId=$ROOT"
    `;
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) =>
      execFile('bash', ['-c', script], { env: { PATH: process.env.PATH, FILE: source.path, GW: base, AUTH: 'alice:alice-password-1', ROOT: rootId } }, (e, stdout, stderr) =>
        e ? reject(new Error(`${e.message}: ${stderr}`)) : resolve(stdout),
      ),
    );
    const [first, second, answer] = out.split(' ');
    expect([first, second]).toEqual(['204', '204']);
    const id = JSON.parse(answer).results.id as string;
    expect(await documentSha256(id, alice)).toBe(source.sha256);
    const props = await gw.http().get(`${gw.api}/repo/fs/properties?id=${encodeURIComponent(id)}`).set('Authorization', alice.auth).expect(200);
    expect(props.body.results.svc_filename.DisplayName).toBe('[recipe.bin]');
  });

  it('answers OPTIONS with the tus capabilities, checksum algorithms included', async () => {
    const res = await rawRequest(endpoint(), { method: 'OPTIONS', headers: { Authorization: alice.auth } });
    expect(res.status).toBe(204);
    expect(res.headers['tus-version']).toBe('1.0.0');
    expect(String(res.headers['tus-extension']).split(',')).toEqual(['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum']);
    expect(res.headers['tus-checksum-algorithm']).toBe('sha1,sha256');
    expect((await rawRequest(endpoint(), { method: 'OPTIONS' })).status).toBe(401);
  });

  it('an upload is its creator\'s: anyone else gets 404 on HEAD, PATCH, DELETE and when turning it into a document', async () => {
    const created = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '10', 'Upload-Metadata': `filename ${Buffer.from('a.txt').toString('base64')}` });
    expect(created.status).toBe(201);
    const url = created.headers.location!;
    expect(url).toMatch(new RegExp(`^${base}/api/uploads/[0-9a-f]{16}-[0-9a-f]{32}$`));
    // Without TRUST_PROXY a client's own X-Forwarded-* headers do not move the Location elsewhere.
    const forged = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '1', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' });
    expect(forged.headers.location!.startsWith(`${base}/api/uploads/`)).toBe(true);
    expect((await tusRequest(alice, forged.headers.location!, 'DELETE')).status).toBe(204);
    expect((await tusRequest(bob, url, 'HEAD')).status).toBe(404);
    const patch = await tusRequest(bob, url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('0123456789'));
    expect(patch.status).toBe(404);
    expect(json(patch).error).toMatchObject({ code: 'UPLOAD_NOT_FOUND' });
    expect((await tusRequest(bob, url, 'DELETE')).status).toBe(404);
    expect((await turnIntoDocument(bob, uploadIdOf(url))).status).toBe(404);
    // Unchanged for its owner.
    const head = await tusRequest(alice, url, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['upload-offset']).toBe('0');
    expect((await tusRequest(alice, url, 'DELETE')).status).toBe(204);
    expect((await tusRequest(alice, url, 'HEAD')).status).toBe(404);
    // Not a path either.
    expect((await tusRequest(alice, `${endpoint()}/..%2F..%2Fgateway.sqlite`, 'HEAD')).status).toBe(404);
  });

  it('an unfinished upload cannot become a document (409 naming uploadId); finished, it becomes a new version with updateContent', async () => {
    const created = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '6', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('new'));
    expect(created.status).toBe(201);
    expect(created.headers['upload-offset']).toBe('3');
    const uploadId = uploadIdOf(created.headers.location!);
    const early = await turnIntoDocument(alice, uploadId, 'early.txt');
    expect(early.status).toBe(409);
    expect(json(early).error).toMatchObject({ code: 'UPLOAD_UNFINISHED', parameter: 'uploadId', offset: 3, size: 6 });

    const rest = await tusRequest(alice, created.headers.location!, 'PATCH', { 'Upload-Offset': '3', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('est'));
    expect(rest.status).toBe(204);
    const doc = await gw.http().post(`${gw.api}/repo/fs/file?folderId=${encodeURIComponent(rootId)}`).set('Authorization', alice.auth).attach('file', Buffer.from('old'), 'versioned.txt').expect(201);
    const docId = doc.body.results.id as string;
    const update = await rawRequest(`${base}/api/repo/fs/updateContent?${new URLSearchParams({ fileId: docId, uploadId }).toString()}`, { method: 'PUT', headers: { Authorization: alice.auth } });
    expect(update.status).toBe(200);
    expect(await documentSha256(json(update).results.id, alice)).toBe(createHash('sha256').update('newest').digest('hex'));
    // Used up.
    expect((await rawRequest(`${base}/api/repo/fs/updateContent?${new URLSearchParams({ fileId: docId, uploadId }).toString()}`, { method: 'PUT', headers: { Authorization: alice.auth } })).status).toBe(404);
  });

  it('refuses uploadId together with a body; an empty upload makes an empty document', async () => {
    const created = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '0' });
    const uploadId = uploadIdOf(created.headers.location!);
    const both = await rawRequest(`${base}/api/repo/fs/updateContent?${new URLSearchParams({ fileId: 'x', uploadId }).toString()}`, {
      method: 'PUT',
      headers: { Authorization: alice.auth, 'Content-Type': 'text/plain' },
      body: 'body too',
    });
    expect(both.status).toBe(400);
    expect(json(both).error.parameter).toBe('uploadId');
    // No filename metadata and no fileName: 400 naming fileName, and the upload is kept for another try.
    const unnamed = await turnIntoDocument(alice, uploadId);
    expect(unnamed.status).toBe(400);
    expect(json(unnamed).error.parameter).toBe('fileName');
    // An empty upload makes an empty document; the name comes from fileName.
    const empty = await turnIntoDocument(alice, uploadId, 'empty.txt');
    expect(empty.status).toBe(201);
    expect(await documentSha256(json(empty).results.id, alice)).toBe(createHash('sha256').digest('hex'));
  });

  it('verifies Upload-Checksum (sha256): a mismatching body is refused with 460 and stores nothing', async () => {
    const created = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '8', 'Upload-Metadata': `filename ${Buffer.from('sum.txt').toString('base64')}` });
    const url = created.headers.location!;
    const body = Buffer.from('checksum');
    const patch = (digestOf: string) =>
      tusRequest(alice, url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Upload-Checksum': `sha256 ${createHash('sha256').update(digestOf).digest('base64')}` }, body);
    expect((await patch('something else')).status).toBe(460);
    expect((await tusRequest(alice, url, 'HEAD')).headers['upload-offset']).toBe('0');
    const bad = await tusRequest(alice, url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Upload-Checksum': 'md5 AAAA' }, body);
    expect(bad.status).toBe(400);
    expect(json(bad).error.parameter).toBe('Upload-Checksum');
    const good = await patch('checksum');
    expect(good.status).toBe(204);
    expect(good.headers['upload-offset']).toBe('8');
    const doc = await turnIntoDocument(alice, uploadIdOf(url));
    expect(doc.status).toBe(201);
    expect(await documentSha256(json(doc).results.id, alice)).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('counts every unexpired upload against the user\'s quota: 413 at creation beyond it, other users unaffected', async () => {
    const big = await tusRequest(bob, endpoint(), 'POST', { 'Upload-Length': String(60 * MiB) });
    expect(big.status).toBe(201);
    const over = await tusRequest(bob, endpoint(), 'POST', { 'Upload-Length': String(5 * MiB) });
    expect(over.status).toBe(413);
    expect(json(over).error).toMatchObject({ parameter: 'Upload-Length', limit: 64 * MiB });
    expect((await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': String(5 * MiB) })).status).toBe(201);
    // Not through the method override @tus/server would honour: the PATCH route stays a PATCH (no creation past the quota).
    const overridden = await tusRequest(bob, big.headers.location!, 'PATCH', { 'X-HTTP-Method-Override': 'POST', 'Upload-Length': String(5 * MiB) });
    expect(overridden.status).not.toBe(201);
    expect((await gw.app.get(UploadsService).usage('bob')).uploads).toBe(1);
    // Terminating frees the space.
    expect((await tusRequest(bob, big.headers.location!, 'DELETE')).status).toBe(204);
    const kept = await tusRequest(bob, endpoint(), 'POST', { 'Upload-Length': String(5 * MiB) });
    expect(kept.status).toBe(201);

    // On PATCH the bytes held count: after the quota was lowered (a restart with a smaller GATEWAY_UPLOAD_QUOTA_BYTES), a chunk beyond it gets 413.
    const chunk = Buffer.alloc(MiB, 1);
    const append = (offset: number) =>
      tusRequest(bob, kept.headers.location!, 'PATCH', { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }, chunk);
    expect((await append(0)).status).toBe(204);
    const quota = gw.config.uploads.quotaBytes;
    gw.config.uploads.quotaBytes = MiB + MiB / 2;
    try {
      const refused = await append(MiB);
      expect(refused.status).toBe(413);
      expect(json(refused).error).toMatchObject({ parameter: 'Content-Length', limit: MiB + MiB / 2, stored: MiB });
      expect((await tusRequest(bob, kept.headers.location!, 'HEAD')).headers['upload-offset']).toBe(String(MiB));
    } finally {
      gw.config.uploads.quotaBytes = quota;
    }
    expect((await append(MiB)).status).toBe(204);
  });

  it('another node sharing the uploads folder continues an upload this one started', async () => {
    const other = await startGateway({ env: { GATEWAY_UPLOADS_DIR: gw.config.uploads.dir, GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    try {
      const otherBase = await listen(other);
      const admin = { username: 'admin', auth: adminAuth() };
      const created = await tusRequest(admin, endpoint(), 'POST', { 'Upload-Length': '6', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('abc'));
      const onOther = created.headers.location!.replace(base, otherBase);
      expect((await tusRequest(admin, onOther, 'HEAD')).headers['upload-offset']).toBe('3');
      expect((await tusRequest(admin, onOther, 'PATCH', { 'Upload-Offset': '3', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('def'))).status).toBe(204);
      expect((await tusRequest(admin, created.headers.location!, 'HEAD')).headers['upload-offset']).toBe('6');
    } finally {
      await other.close();
    }
  });

  it('sweeps uploads older than GATEWAY_UPLOAD_EXPIRY_HOURS (by the gateway\'s clock), finished or not', async () => {
    const uploads = gw.app.get(UploadsService);
    const created = await tusRequest(alice, endpoint(), 'POST', { 'Upload-Length': '4', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('ab'));
    const url = created.headers.location!;
    const dataFile = `${gw.config.uploads.dir}/${uploadIdOf(url)}`;
    expect(fs.existsSync(dataFile)).toBe(true);
    expect(created.headers['upload-expires']).toBeDefined();
    await uploads.sweep();
    expect((await tusRequest(alice, url, 'HEAD')).status).toBe(200);
    gw.app.get(Clock).advance(24 * 3_600_000 + 1000);
    expect(await uploads.sweep()).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(dataFile)).toBe(false);
    expect(fs.existsSync(`${dataFile}.json`)).toBe(false);
    expect((await tusRequest(alice, url, 'HEAD')).status).toBe(404);
    expect((await uploads.usage('alice')).uploads).toBe(0);
  });
});

/**
 * The acceptance case through the shipped docker/nginx.conf, the gateway run as a process (the
 * built dist/, as deployed): a large upload (GATEWAY_TEST_TUS_BYTES, default 512 MiB; the acceptance run
 * sets 5 GiB) in GATEWAY_TEST_TUS_CHUNK_BYTES chunks (default 50 MiB), generated on disk as a stream.
 * Once with the client's connection cut at half the file, once with the gateway killed (-9) at half and
 * started again; each time a new tus-js-client resumes (HEAD + PATCH) re-sending at most one chunk, counted
 * on the wire by a TCP proxy in front of nginx, and the document's SHA-256 is the source's.
 */
describe('Resumable uploads behind nginx: connection cut and gateway killed at half', () => {
  const size = Number(process.env.GATEWAY_TEST_TUS_BYTES ?? 512 * MiB);
  const chunkSize = Number(process.env.GATEWAY_TEST_TUS_CHUNK_BYTES ?? 50 * MiB);
  let dataDir: string;
  let gateway: GatewayProcess;
  let nginx: NginxHandle;
  let proxy: CountingProxy;
  let viaProxy: string;
  let source: SourceFile;
  let rootId: string;
  const env = () => ({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_CONTEXT_PATH: '/gateway',
    TRUST_PROXY: '127.0.0.1',
    GATEWAY_ADMIN_USER: ADMIN.username,
    GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    GATEWAY_UPLOAD_QUOTA_BYTES: '0',
    GATEWAY_MAX_UPLOAD_BYTES: '0',
    LOG_LEVEL: 'warn',
    ...(gateway ? { PORT: String(gateway.port) } : {}),
  });

  beforeAll(async () => {
    ensureBuilt();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-tus-'));
    gateway = await spawnGateway(env());
    nginx = await startNginx({ upstreams: [{ port: gateway.port }] });
    proxy = new CountingProxy({ host: nginx.host, port: nginx.port });
    viaProxy = await proxy.start();
    source = await makeSourceFile(size, dataDir);
    const root = await rawRequest(`${nginx.url}/gateway/api/repo/fs/rootfolderid`, { headers: { Authorization: adminAuth() } });
    rootId = json(root).results.folderId;
  }, 300_000);
  afterAll(async () => {
    await proxy?.stop();
    await nginx?.stop();
    await gateway?.stop('SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Resumes with a new client, then checks the wire count and the stored document; returns the bytes sent beyond the file. */
  async function resumeAndCheck(first: ReturnType<typeof runTus>, urlStorage: MemoryUrlStorage, sentBefore: number, name: string): Promise<void> {
    await expect(first.done).rejects.toBeDefined();
    const second = runTus(source, { endpoint: `${viaProxy}/gateway/api/uploads`, authorization: adminAuth(), chunkSize, urlStorage, resume: true });
    const url = await second.done;
    // Behind nginx the Location names the address the client used (X-Forwarded-Host, trusted through TRUST_PROXY).
    expect(url.startsWith(`${viaProxy}/gateway/api/uploads/`)).toBe(true);
    const sent = proxy.sent - sentBefore;
    const requests = first.requests() + second.requests();
    const extra = sent - size;
    process.stdout.write(`[uploads-tus] ${name}: ${size} bytes, chunk ${chunkSize}: ${sent} bytes on the wire in ${requests} requests, ${extra} beyond the file\n`);
    expect(extra).toBeLessThanOrEqual(chunkSize + requests * 1024);

    const query = new URLSearchParams({ uploadId: uploadIdOf(url), folderId: rootId, fileName: `${name}.bin` });
    const created = await rawRequest(`${nginx.url}/gateway/api/repo/fs/file?${query.toString()}`, { method: 'POST', headers: { Authorization: adminAuth() } });
    expect(created.status).toBe(201);
    const download = await rawGet(`${nginx.url}/gateway/api/repo/fs/file?id=${encodeURIComponent(json(created).results.id)}`, { Authorization: adminAuth() });
    expect(download.statusCode).toBe(200);
    expect(await streamSha256(download)).toEqual({ sha256: source.sha256, bytes: size });
    // Removed from the uploads folder once it is a document.
    expect(fs.readdirSync(path.join(dataDir, 'uploads')).filter((n) => n.startsWith(uploadIdOf(url)))).toEqual([]);
  }

  it('the client connection cut at ~50%: a new client resumes', async () => {
    const urlStorage = new MemoryUrlStorage();
    const sentBefore = proxy.sent;
    proxy.when(sentBefore + size / 2, () => proxy.cutAll());
    const first = runTus(source, { endpoint: `${viaProxy}/gateway/api/uploads`, authorization: adminAuth(), chunkSize, urlStorage });
    await resumeAndCheck(first, urlStorage, sentBefore, 'cut');
  }, 600_000);

  it('the gateway killed (-9) at ~50% and started again: a new client resumes', async () => {
    const urlStorage = new MemoryUrlStorage();
    const sentBefore = proxy.sent;
    let killed: Promise<unknown> | undefined;
    proxy.when(sentBefore + size / 2, () => {
      gateway.child.kill('SIGKILL');
      killed = gateway.exited;
    });
    const first = runTus(source, { endpoint: `${viaProxy}/gateway/api/uploads`, authorization: adminAuth(), chunkSize, urlStorage });
    await first.done.catch(() => undefined);
    expect(killed).toBeDefined();
    await killed;
    gateway = await spawnGateway(env());
    await resumeAndCheck(first, urlStorage, sentBefore, 'kill-9');
  }, 600_000);
});
