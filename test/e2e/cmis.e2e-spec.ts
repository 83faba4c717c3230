import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CmisConnectorType } from '@gateway/connector-cmis';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { listen, rawGet, readAll } from '../support/files';
import { rawBody, sha256 } from '../contract/support';

/**
 * The CMIS connector end to end, against the real OpenCMIS InMemory server of
 * the engine harness: version series, ACLs (spec 4.3), paging across server
 * pages, streaming, and how CMIS failures reach the client.
 */

// InMemory evaluates ACEs in principal order and stops at the first that matches, `anyone` included:
// Alice's own entry must sort before `anyone` to count.
const ALICE = { username: 'alice-cmis', password: 'alice-password-1' };
const BOB = { username: 'bob-cmis', password: 'bob-password-123' };
const alice = () => basic(ALICE.username, ALICE.password);
const bob = () => basic(BOB.username, BOB.password);
const DOCUMENT_TYPE = 'gw:e2eDocument';
const PAGE_SIZE = 5;

describe('CMIS connector (OpenCMIS InMemory)', () => {
  let engine: CmisEngine;
  let setup: CmisSetup;
  let gw: TestGateway;
  let configDir: string;
  let stalled: net.Server;
  let metered: net.Server;
  /** Bytes the gateway has read from the CMIS server through the metering proxy. */
  let bytesFromUpstream = 0;
  const sockets = new Set<net.Socket>();
  let folderId: string;
  let folderPath: string;
  let seq = 0;
  const unique = (stem: string) => `${stem}-${++seq}-${randomBytes(3).toString('hex')}.txt`;

  beforeAll(async () => {
    engine = await useCmisEngine();
    setup = new CmisSetup(engine.info);
    await setup.ensureDocumentType(DOCUMENT_TYPE, 'VersionableType', ['department']);
    const folder = await setup.createTestFolder('e2e');
    folderPath = folder.path;

    // A port nothing listens on, and a server that accepts connections but never answers.
    const closedPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    stalled = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const stalledPort = (stalled.address() as net.AddressInfo).port;

    // A plain TCP relay to the CMIS server that counts what the gateway pulls through it; pipe() keeps the
    // relay itself backpressured, so the count is what the gateway asked for.
    const upstream = new URL(engine.info.browserUrl);
    metered = net.createServer((client) => {
      const server = net.connect(Number(upstream.port), upstream.hostname);
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      server.on('data', (chunk: Buffer) => (bytesFromUpstream += chunk.length));
      client.pipe(server);
      server.pipe(client);
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => metered.listen(0, '127.0.0.1', resolve));
    const meteredUrl = new URL(engine.info.browserUrl);
    meteredUrl.port = String((metered.address() as net.AddressInfo).port);

    const params = { url: engine.info.browserUrl, repositoryId: engine.info.repositoryId, user: engine.info.username, password: '${CMIS_PASSWORD}' };
    const connectors = [
      { id: 'cmis', typeId: 'cmis', description: 'OpenCMIS InMemory', params: { ...params, userMapping: 'actor', documentType: DOCUMENT_TYPE, pageSize: PAGE_SIZE } },
      { id: 'cmis-down', typeId: 'cmis', params: { ...params, url: `http://127.0.0.1:${closedPort}/cmis/browser` } },
      { id: 'cmis-stalled', typeId: 'cmis', params: { ...params, url: `http://127.0.0.1:${stalledPort}/cmis/browser`, timeoutMs: 300 } },
      { id: 'cmis-metered', typeId: 'cmis', params: { ...params, url: meteredUrl.toString().replace(/\/$/, '') } },
    ];
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmis-e2e-'));
    const configFile = path.join(configDir, 'gateway.yaml');
    fs.writeFileSync(configFile, `connectors:\n${connectors.map((c) => `  - ${JSON.stringify(c)}`).join('\n')}\n`);
    gw = await startGateway({ env: { GATEWAY_CONFIG: configFile, CMIS_PASSWORD: engine.info.password } });
    for (const u of [ALICE, BOB]) {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...u, roles: ['user'] }).expect(201);
    }
    folderId = (await api('get', 'idbypath', { folderPath: '/', fileName: folderPath.slice(1) }).expect(200)).body.results.id;
  });

  afterAll(async () => {
    await gw?.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => (stalled ? stalled.close(resolve) : resolve(undefined)));
    await new Promise((resolve) => (metered ? metered.close(resolve) : resolve(undefined)));
    await engine?.release();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  function api(method: 'get' | 'post' | 'put' | 'delete', route: string, query: Record<string, string> = {}, auth = adminAuth(), connector = 'cmis') {
    return gw.http()[method](`${gw.api}/repo/${connector}/${route}`).query(query).set('Authorization', auth);
  }

  async function upload(content: Buffer | string, fileName: string, auth = adminAuth(), query: Record<string, string> = {}): Promise<string> {
    const res = await api('post', 'file', { folderId, fileName, ...query }, auth)
      .attach('file', Buffer.isBuffer(content) ? content : Buffer.from(content), { filename: fileName, contentType: 'text/plain' })
      .expect(201);
    return res.body.results.id;
  }

  function download(id: string, headers: Record<string, string> = {}) {
    let req = api('get', 'file', { id });
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req.buffer(true).parse(rawBody);
  }

  async function text(id: string): Promise<string> {
    const res = await download(id);
    expect(res.status).toBe(200);
    return (res.body as Buffer).toString('utf8');
  }

  // ---- repository info ---------------------------------------------------------

  it('sends its credentials: a wrong password stops the connector at its first contact, naming password', async () => {
    const params = { url: engine.info.browserUrl, repositoryId: engine.info.repositoryId, user: engine.info.username };
    const create = (password: string) => new CmisConnectorType().create({ id: 'cmis-credentials', typeId: 'cmis', description: 'credentials check', params: { ...params, password } }, { dataDir: configDir });
    await expect(create(`not-${engine.info.password}`)).rejects.toMatchObject({ parameter: 'password' });
    const connector = await create(engine.info.password);
    expect((await connector.rootFolder()).folderId).toBeTruthy();
  });

  it('derives its capabilities from the groups the repository supports', async () => {
    const info = (await api('get', 'repositoryInfo').expect(200)).body.results;
    expect(info.repositoryId).toBe(engine.info.repositoryId);
    expect(info.capabilities).toMatchObject({
      checkIn: true,
      checkOut: true,
      listVersions: true,
      updateFile: true,
      updateProperties: true,
      createFolder: true,
      deleteFolder: false,
      getSubSites: false,
    });
    expect(info.params).toMatchObject({ url: engine.info.browserUrl, repositoryId: 'A1', userMapping: 'actor', pageSize: PAGE_SIZE });
    expect(info.params.password).toBeUndefined();
    const types = (await api('get', 'types').expect(200)).body.results;
    expect(types).toHaveProperty('cmis:document');
    expect(types).toHaveProperty(DOCUMENT_TYPE);
    expect(types).not.toHaveProperty('cmis:folder');
  });

  // ---- versions ------------------------------------------------------------------

  it('keeps a version series through check-out and check-in; version ids carry ;<label>', async () => {
    const id = await upload('first version', unique('series'), alice());
    await api('post', 'checkout', { id }, alice()).expect(200);
    const listed = Object.values((await api('get', 'folderitems', { id: folderId }).expect(200)).body.results as Record<string, Record<string, string>>).find((e) => e.Id === id)!;
    expect(listed).toMatchObject({ CheckedOut: 'true', VersionLabel: '1.0', VersionSeriesId: id });

    // Another user cannot change, check out, check in or delete it; the answer names the holder.
    for (const res of [
      await api('put', 'updateContent', { fileId: id }, bob()).set('Content-Type', 'text/plain').send('bob'),
      await api('post', 'checkout', { id }, bob()),
      await api('post', 'checkin', { id }, bob()),
      await api('delete', 'delete', { id }, bob()),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: { code: 'CHECKED_OUT', checkedOutBy: ALICE.username } });
    }

    // The holder's update goes to the working copy: readers still get the checked-in version.
    await api('put', 'updateContent', { fileId: id }, alice()).set('Content-Type', 'text/plain').send('second version').expect(200);
    expect(await text(id)).toBe('first version');
    expect((await api('post', 'checkin', { id, comment: 'Zweite Fassung ✓' }, alice()).expect(200)).body.results.id).toBe(id);
    expect(await text(id)).toBe('second version');
    expect((await api('post', 'checkin', { id }, alice())).body.error.code).toBe('NOT_CHECKED_OUT');

    // An update outside a check-out makes a version too (check-out, set content, check-in).
    await api('put', 'updateContent', { fileId: id }, bob()).set('Content-Type', 'text/plain').send('third version').expect(200);
    const versions = (await api('get', 'listversions', { id }).expect(200)).body.results as Array<Record<string, unknown>>;
    expect(versions.map((v) => [v.docId, v.versionLabel, v.versionSeriesId, v.versionLength])).toEqual([
      [`${id};3.0`, '3.0', id, 13],
      [`${id};2.0`, '2.0', id, 14],
      [`${id};1.0`, '1.0', id, 13],
    ]);
    expect(await text(`${id};1.0`)).toBe('first version');
    expect(await text(`${id};2.0`)).toBe('second version');
    const props = (await api('get', 'properties', { id: `${id};2.0` }).expect(200)).body.results;
    expect(props.svc_length.DisplayName).toBe('[14]');
    const entry = Object.values((await api('get', 'folderitems', { id: folderId }).expect(200)).body.results as Record<string, Record<string, string>>).find((e) => e.Id === id)!;
    expect(entry).toMatchObject({ CheckedOut: 'false', VersionLabel: '3.0', ModifiedBy: BOB.username });

    // Changes through an older version's id are refused; an unknown label is not found.
    expect((await api('put', 'updateContent', { fileId: `${id};1.0` }).send('x')).body.error).toMatchObject({ parameter: 'fileId' });
    expect((await download(`${id};9.0`)).status).toBe(404);

    // Deleting the latest version only brings the previous one back.
    await api('delete', 'delete', { id, allversions: 'false' }).expect(200);
    expect(await text(id)).toBe('second version');
    expect((await api('get', 'listversions', { id }).expect(200)).body.results).toHaveLength(2);
  });

  it('refuses to check out a document whose type is not versionable, naming id', async () => {
    const id = await upload('plain', unique('plain'), adminAuth(), { type: 'cmis:document' });
    const res = await api('post', 'checkout', { id }).expect(400);
    expect(res.body.error).toMatchObject({ parameter: 'id', code: 'NOT_VERSIONABLE' });
    // Content updates replace the content in place: one version.
    await api('put', 'updateContent', { fileId: id }).set('Content-Type', 'text/plain').send('replaced').expect(200);
    expect(await text(id)).toBe('replaced');
    expect((await api('get', 'listversions', { id }).expect(200)).body.results).toHaveLength(1);
  });

  // ---- permissions (spec 4.3) --------------------------------------------------------

  it('round-trips ACL entries: post, get, replace, delete, get', async () => {
    const id = await upload('guarded', unique('acl'));
    expect((await api('get', 'acls', { id }).expect(200)).body).toEqual({ success: true, results: ['anyone:cmis:all'] });

    const posted = await api('post', 'acls', { id }).send({ anyone: 'cmis:read', admin: 'cmis:all', [ALICE.username]: 'cmis:all' }).expect(200);
    expect([...posted.body.results].sort()).toEqual(['admin:cmis:all', `${ALICE.username}:cmis:all`, 'anyone:cmis:read'].sort());
    expect([...(await api('get', 'acls', { id }).expect(200)).body.results].sort()).toEqual([...posted.body.results].sort());

    // The repository applies them: Bob (only anyone:cmis:read) may read, not write; Alice may (a new version needs a check-out: cmis:all).
    expect(await text(id)).toBe('guarded');
    const denied = await api('put', 'updateContent', { fileId: id }, bob()).set('Content-Type', 'text/plain').send('bob');
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'PERMISSION_DENIED', cmisUser: BOB.username });
    await api('put', 'updateContent', { fileId: id }, alice()).set('Content-Type', 'text/plain').send('by alice').expect(200);
    expect(await text(id)).toBe('by alice');

    // Posting a principal again replaces its permissions.
    const replaced = (await api('post', 'acls', { id }).send({ [ALICE.username]: 'cmis:read' }).expect(200)).body.results;
    expect(replaced).toContain(`${ALICE.username}:cmis:read`);
    expect(replaced).not.toContain(`${ALICE.username}:cmis:all`);

    const removed = await api('delete', 'acls', { id, aclId: `${ALICE.username},nobody-here` }).expect(200);
    expect(removed.body).toEqual({ success: true, results: ALICE.username });
    const after = (await api('get', 'acls', { id }).expect(200)).body.results as string[];
    expect(after.some((e) => e.startsWith(`${ALICE.username}:`))).toBe(false);
    // `acls` is accepted as an alias of aclId.
    expect((await api('delete', 'acls', { id, acls: 'anyone' }).expect(200)).body.results).toBe('anyone');
    expect((await api('get', 'acls', { id }).expect(200)).body.results).toEqual(['admin:cmis:all']);
  });

  it.each([
    ['a JSON array', 'body', ['alice']],
    ['an empty object', 'body', {}],
    ['a principal with a colon', 'a:b', { 'a:b': 'cmis:read' }],
    ['an empty permission list', 'alice', { alice: ' ' }],
    ['a permission list that is not a string', 'alice', { alice: ['cmis:read'] }],
  ])('refuses a Post ACLs body with %s, naming %s', async (_what, parameter, body) => {
    const id = await upload('x', unique('acl-bad'));
    const res = await api('post', 'acls', { id }).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ parameter });
  });

  it.each([
    ['get without id', 'id', 'get', {}],
    ['delete without aclId', 'aclId', 'delete', { id: 'FOLDER' }],
    ['delete with both aclId and acls', 'aclId', 'delete', { id: 'FOLDER', aclId: 'a', acls: 'b' }],
  ] as const)('answers 400 to an ACL request %s, naming %s', async (_what, parameter, method, query: Record<string, string>) => {
    const res = await api(method, 'acls', Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v === 'FOLDER' ? folderId : v])));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ parameter });
  });

  it('answers 404 to an ACL request for an unknown item', async () => {
    const missing = await api('get', 'acls', { id: 'no-such-object' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'ITEM_NOT_FOUND', id: 'no-such-object' });
  });

  // ---- listings --------------------------------------------------------------------

  it(`lists a folder of more items than one server page (page size ${PAGE_SIZE}), whole and with a cursor`, async () => {
    const sub = (await api('post', 'folder', { path: `${folderPath}/paged` }).expect(201)).body.results.id;
    const names = Array.from({ length: 12 }, (_, i) => `doc-${String(i).padStart(2, '0')}.txt`);
    for (const name of names) {
      await api('post', 'file', { folderId: sub, fileName: name }).attach('file', Buffer.from(name), 'x.txt').expect(201);
    }
    const whole = await api('get', 'folderitems', { id: sub }).expect(200);
    expect(Object.keys(whole.body.results)).toEqual(names.map((n) => `${folderPath}/paged/${n}`));
    expect(whole.headers['x-next-cursor']).toBeUndefined();

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api('get', 'folderitems', { id: sub, limit: '7', ...(cursor ? { cursor } : {}) }).expect(200);
      seen.push(...Object.keys(res.body.results));
      cursor = res.headers['x-next-cursor'];
      pages++;
    } while (cursor && pages < 5);
    expect(pages).toBe(2);
    expect(seen).toEqual(Object.keys(whole.body.results));
  });

  // ---- content ---------------------------------------------------------------------------

  it('streams a large document both ways byte for byte, and serves ranges of it', async () => {
    const bytes = randomBytes(24 * 1024 * 1024);
    const id = await upload(bytes, unique('large'));
    const res = await download(id).expect(200);
    expect(sha256(res.body as Buffer)).toBe(sha256(bytes));
    const range = await download(id, { Range: 'bytes=10000000-10000099' }).expect(206);
    expect(range.headers['content-range']).toBe(`bytes 10000000-10000099/${bytes.length}`);
    expect(sha256(range.body as Buffer)).toBe(sha256(bytes.subarray(10_000_000, 10_000_100)));
  });

  it('pulls from the repository only as fast as the HTTP client reads: a paused download stalls upstream, then arrives whole', async () => {
    const size = 64 * 1024 * 1024;
    const bytes = randomBytes(size);
    const id = await upload(bytes, unique('paused'));
    const base = await listen(gw);
    bytesFromUpstream = 0;
    const res = await rawGet(`${base}${gw.api}/repo/cmis-metered/file?id=${encodeURIComponent(id)}`, { Authorization: adminAuth() });
    expect(res.statusCode).toBe(200);
    res.pause();
    try {
      // Poll until the upstream count has not moved for three samples in a row (every buffer on the way is
      // full), with a deadline.
      let previous = -1;
      let still = 0;
      const deadline = Date.now() + 60_000;
      while (still < 3 && Date.now() < deadline) {
        still = bytesFromUpstream === previous ? still + 1 : 0;
        previous = bytesFromUpstream;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(still).toBe(3);
      // What the kernel's socket buffers and the streams on the way hold, far from the whole document:
      // without backpressure the gateway would read all 64 MiB while the client reads nothing.
      expect(bytesFromUpstream).toBeLessThan(size / 2);
      const reading = readAll(res);
      res.resume(); // paused explicitly, so a 'data' listener alone does not restart it
      const body = await reading;
      expect(sha256(body)).toBe(sha256(bytes));
      expect(bytesFromUpstream).toBeGreaterThanOrEqual(size);
    } finally {
      res.destroy(); // a failed assertion must not leave a paused response holding the gateway open
    }
  }, 300_000);

  // ---- errors ------------------------------------------------------------------------------

  it('answers 404 for an id the repository does not know, on every reading route', async () => {
    for (const route of ['file', 'properties', 'listversions', 'folderitems']) {
      const res = await api('get', route, { id: 'no-such-object-42' });
      expect({ route, status: res.status }).toEqual({ route, status: 404 });
    }
    expect((await api('get', 'idbypath', { folderPath, fileName: 'nothing-here.txt' })).status).toBe(404);
  });

  it('answers 501 for deleting a folder by path: only filesystem connectors delete folders', async () => {
    const res = await api('delete', 'delete', { path: `${folderPath}/paged` });
    expect(res.status).toBe(501);
    expect(res.body.error).toMatchObject({ code: 'NOT_SUPPORTED', capability: 'deleteFolder' });
  });

  it('answers 503 when the repository cannot be reached, and 504 when it does not answer in time', async () => {
    const down = await api('get', 'rootfolderid', {}, adminAuth(), 'cmis-down');
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', reason: 'ECONNREFUSED' });
    const slow = await api('get', 'folderitems', { id: '100' }, adminAuth(), 'cmis-stalled');
    expect(slow.status).toBe(504);
    expect(slow.body.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', timeoutMs: 300 });
    const ready = await gw.http().get(`${gw.api}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.body.message).toContain('connector:cmis-down');
    expect(ready.body.message).not.toContain('connector:cmis,');
  });
});
