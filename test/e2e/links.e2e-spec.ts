import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Clock } from '../../apps/api/src/common/clock';
import { FilesSweeper } from '../../apps/api/src/files/files-sweeper';
import { binary, connector, createUser, fileHandle, listFiles, listen, seedDocument, sha256, startBatch, StreamGate, waitFor, waitForExport, type TestUser } from '../support/files';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { readZip } from '../support/zip';
import request from 'supertest';

/** Spec 2.2 / 4.1: download links, the public ready check and public download, expiry and the sweep. */

const DAY = 86_400_000;

describe('Download links', () => {
  let gw: TestGateway;
  let alice: TestUser;
  let bob: TestUser;
  let docId: string;
  const docContent = randomBytes(200_000);
  let fileId: string;
  let gate: StreamGate | undefined;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_LINK_MAX_LIFESPAN_DAYS: '30', GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    alice = await createUser(gw, 'alice');
    bob = await createUser(gw, 'bob');
    docId = await seedDocument(gw, 'shared/report.bin', docContent);
    const batch = await startBatch(gw, alice, [{ fileName: 'report.bin', connId: 'fs', id: docId }]);
    fileId = (await waitForExport(gw, alice, batch.docId)).id;
  });
  afterEach(() => {
    gate?.restore();
    gate = undefined;
  });
  afterAll(() => gw.close());

  const createLink = (user: TestUser, query: Record<string, string | number | boolean>) =>
    gw.http().get(`${gw.api}/files/external/link`).query(query).set('Authorization', user.auth);
  const ready = (key: string) => gw.http().get(`${gw.api}/public/download/ready`).query({ key });
  const publicDownload = (key: string) => gw.http().get(`${gw.api}/public/download`).query({ key }).buffer(true).parse(binary);
  const deleteLink = (user: TestUser, key: string) => gw.http().delete(`${gw.api}/files/external/link`).query({ key }).set('Authorization', user.auth);

  describe('to a user file (internal)', () => {
    it('creates a link with every spec 2.2 field and a key; the list shows it with id', async () => {
      const before = Date.now();
      const res = await createLink(alice, { docId: fileId, internal: true, fileName: 'shared.zip' }).expect(200);
      const link = res.body.results;
      expect(link).toEqual({
        internal: true,
        expires: expect.any(Number),
        fileName: 'shared.zip',
        createdBy: 'alice',
        connectorId: '__internal__',
        docId: fileId,
        created: expect.any(Number),
        used: 0,
        key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(link.created).toBeGreaterThanOrEqual(before);
      expect(link.expires - link.created).toBe(3 * DAY);
      const { key, ...rest } = link;
      expect((await listFiles(gw, alice)).links).toContainEqual({ ...rest, id: key });
      expect((await listFiles(gw, bob)).links.map((l) => l.id)).not.toContain(key);
    });

    it('serves the file publicly, without credentials, under the link name; the ready check is true', async () => {
      const { key } = (await createLink(alice, { docId: fileId, internal: true, fileName: 'für dich.zip' }).expect(200)).body.results;
      expect((await ready(key).expect(200)).body).toEqual({ success: true, results: true });
      const res = await publicDownload(key).expect(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.headers['content-disposition']).toBe("attachment; filename=\"f_r dich.zip\"; filename*=UTF-8''f%C3%BCr%20dich.zip");
      const owners = await gw.http().get(`${gw.api}/files/user/download`).query({ id: fileId }).set('Authorization', alice.auth).buffer(true).parse(binary).expect(200);
      expect(sha256(res.body)).toBe(sha256(owners.body));
      expect(sha256(readZip(res.body)[0].data)).toBe(sha256(docContent));
      // Wrong credentials do not matter on public routes.
      await gw.http().get(`${gw.api}/public/download/ready`).query({ key }).set('Authorization', basic('nobody', 'wrong-password')).expect(200);
    });

    it("defaults fileName to the file's name when connectorId is the internal label; requires it when connectorId is absent", async () => {
      const file = await fileHandle(gw, alice, fileId);
      const res = await createLink(alice, { docId: fileId, internal: true, connectorId: '__internal__' }).expect(200);
      expect(res.body.results.fileName).toBe(file.fileName);
      const missing = await createLink(alice, { docId: fileId, internal: true }).expect(400);
      expect(missing.body.error.parameter).toBe('fileName');
      const other = await createLink(alice, { docId: fileId, internal: true, connectorId: 'fs', fileName: 'x.zip' }).expect(400);
      expect(other.body.error.parameter).toBe('connectorId');
    });

    it("refuses links to unknown files and to other users' files (404)", async () => {
      for (const user of [alice, bob]) {
        const res = await createLink(user, { docId: user === alice ? '0a6c3c44-2a49-4f7c-9e5b-4d3c2b1a0f9e' : fileId, internal: true, fileName: 'x.zip' }).expect(404);
        expect(res.body.error).toMatchObject({ code: 'FILE_NOT_FOUND', resource: 'file' });
      }
    });

    it('answers ready=false and download 409 while the export runs, then delivers once it is complete', async () => {
      gate = new StreamGate(connector(gw));
      const batch = await startBatch(gw, alice, [{ connId: 'fs', id: docId }]);
      // The batch result is itself a link to the export.
      expect((await ready(batch.id).expect(200)).body.results).toBe(false);
      const early = await publicDownload(batch.id).expect(409);
      expect(early.body.error.code).toBe('EXPORT_NOT_READY');
      gate.release();
      await waitForExport(gw, alice, batch.docId);
      expect((await ready(batch.id).expect(200)).body.results).toBe(true);
      const res = await publicDownload(batch.id).expect(200);
      expect(sha256(readZip(res.body)[0].data)).toBe(sha256(docContent));
      const listed = (await listFiles(gw, alice)).links.find((l) => l.id === batch.id);
      expect(listed.used).toBe(1); // the refused download did not count
    });

    it('answers 410 for a link to an export that was stopped, and refuses new links to it (409)', async () => {
      gate = new StreamGate(connector(gw));
      const batch = await startBatch(gw, alice, [{ connId: 'fs', id: docId }]);
      await waitFor(async () => (gate!.count > 0 ? true : undefined), 'the export to start');
      await gw.http().delete(`${gw.api}/files/user/stop`).query({ id: batch.docId }).set('Authorization', alice.auth).expect(200);
      expect((await ready(batch.id).expect(410)).body.error.code).toBe('EXPORT_STOPPED');
      expect((await publicDownload(batch.id).expect(410)).body.error.code).toBe('EXPORT_STOPPED');
      await createLink(alice, { docId: batch.docId, internal: true, fileName: 'x.zip' }).expect(409);
    });
  });

  describe('to a repository document (external)', () => {
    it('checks the document at creation and streams it from the connector at download time', async () => {
      const id = await seedDocument(gw, 'shared/live.txt', 'version one');
      const res = await createLink(alice, { docId: id, internal: false, connectorId: 'fs' }).expect(200);
      const link = res.body.results;
      expect(link).toMatchObject({ internal: false, connectorId: 'fs', docId: id, fileName: '', used: 0 });
      expect((await ready(link.key).expect(200)).body.results).toBe(true);
      fs.writeFileSync(path.join(gw.dataDir, 'repository', 'shared/live.txt'), 'version two, written after the link');
      const first = await publicDownload(link.key).expect(200);
      expect(first.body.toString()).toBe('version two, written after the link');
      expect(first.headers['content-disposition']).toBe('attachment; filename=live.txt');
      // Range and validators as for repository files.
      const part = await publicDownload(link.key).set('Range', 'bytes=8-10').expect(206);
      expect(part.body.toString()).toBe('two');
      await gw.http().get(`${gw.api}/public/download`).query({ key: link.key }).set('If-None-Match', first.headers.etag).expect(304);
      const named = (await createLink(alice, { docId: id, internal: false, connectorId: 'fs', fileName: 'renamed.txt' }).expect(200)).body.results;
      expect((await publicDownload(named.key).expect(200)).headers['content-disposition']).toBe('attachment; filename=renamed.txt');
      // Gone from the repository: the link leads nowhere.
      fs.rmSync(path.join(gw.dataDir, 'repository', 'shared/live.txt'));
      expect((await publicDownload(link.key).expect(404)).body.error.resource).toBe('item');
    });

    it('requires a connector, and answers 404 for an unknown connector or document', async () => {
      expect((await createLink(alice, { docId, internal: false }).expect(400)).body.error.parameter).toBe('connectorId');
      expect((await createLink(alice, { docId, internal: false, connectorId: '__internal__' }).expect(400)).body.error.parameter).toBe('connectorId');
      expect((await createLink(alice, { docId, internal: false, connectorId: 'nope' }).expect(404)).body.error.resource).toBe('connector');
      expect((await createLink(alice, { docId: 'fs-bWlzc2luZw', internal: false, connectorId: 'fs' }).expect(404)).body.error.resource).toBe('item');
    });
  });

  it.each([
    ['lifeSpan 0', { lifeSpan: 0 }, 'lifeSpan'],
    ['a negative lifeSpan', { lifeSpan: -1 }, 'lifeSpan'],
    ['a fractional lifeSpan', { lifeSpan: 1.5 }, 'lifeSpan'],
    ['a lifeSpan that is not a number', { lifeSpan: 'week' }, 'lifeSpan'],
    ['a lifeSpan above GATEWAY_LINK_MAX_LIFESPAN_DAYS', { lifeSpan: 31 }, 'lifeSpan'],
    ['internal missing', { internal: undefined }, 'internal'],
    ['internal not a boolean', { internal: 'yes' }, 'internal'],
    ['docId missing', { docId: undefined }, 'docId'],
  ])('refuses %s with 400 naming the parameter', async (_what, change, parameter) => {
    const query: Record<string, unknown> = { docId: fileId, internal: true, fileName: 'x.zip', ...change };
    for (const k of Object.keys(query)) if (query[k] === undefined) delete query[k];
    const res = await createLink(alice, query as Record<string, string>).expect(400);
    expect(res.body.error.parameter).toBe(parameter);
  });

  it('takes lifeSpan in days', async () => {
    for (const lifeSpan of [1, 30]) {
      const link = (await createLink(alice, { docId: fileId, internal: true, fileName: 'x.zip', lifeSpan }).expect(200)).body.results;
      expect(link.expires - link.created).toBe(lifeSpan * DAY);
    }
  });

  it('keeps the linked file at least as long as the link', async () => {
    const before = (await fileHandle(gw, alice, fileId)).expires;
    const link = (await createLink(alice, { docId: fileId, internal: true, fileName: 'x.zip', lifeSpan: 30 }).expect(200)).body.results;
    const after = (await fileHandle(gw, alice, fileId)).expires;
    expect(after).toBe(Math.max(before, link.expires));
    expect(after).toBe(link.expires);
  });

  it('makes keys of 256 random bits: distinct, base64url', async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { key } = (await createLink(alice, { docId: fileId, internal: true, fileName: 'x.zip' }).expect(200)).body.results;
      expect(Buffer.from(key, 'base64url')).toHaveLength(32);
      keys.add(key);
    }
    expect(keys.size).toBe(20);
  });

  it('deletes a link (owner only) and returns it with key; afterwards it is 404 everywhere', async () => {
    const link = (await createLink(alice, { docId: fileId, internal: true, fileName: 'x.zip' }).expect(200)).body.results;
    expect((await deleteLink(bob, link.key).expect(404)).body.error).toMatchObject({ code: 'LINK_NOT_FOUND', resource: 'link' });
    await ready(link.key).expect(200);
    const res = await deleteLink(alice, link.key).expect(200);
    expect(res.body).toEqual({ success: true, results: link });
    expect((await listFiles(gw, alice)).links.map((l) => l.id)).not.toContain(link.key);
    expect((await ready(link.key).expect(404)).body.error.code).toBe('LINK_NOT_FOUND');
    await publicDownload(link.key).expect(404);
    await deleteLink(alice, link.key).expect(404);
    expect((await gw.http().delete(`${gw.api}/files/external/link`).set('Authorization', alice.auth).expect(400)).body.error.parameter).toBe('key');
    // The file itself is untouched.
    expect((await fileHandle(gw, alice, fileId)).ready).toBe(true);
  });

  it('answers 404 for an unknown key and 400 for a missing one', async () => {
    const unknown = randomBytes(32).toString('base64url');
    expect((await ready(unknown).expect(404)).body.error).toMatchObject({ code: 'LINK_NOT_FOUND', resource: 'link' });
    expect((await publicDownload(unknown).expect(404)).body.error.code).toBe('LINK_NOT_FOUND');
    expect((await gw.http().get(`${gw.api}/public/download`).expect(400)).body.error.parameter).toBe('key');
  });

  it('counts every concurrent public download exactly once in used', async () => {
    const link = (await createLink(alice, { docId: fileId, internal: true, fileName: 'x.zip' }).expect(200)).body.results;
    const base = await listen(gw);
    const expected = sha256((await gw.http().get(`${gw.api}/files/user/download`).query({ id: fileId }).set('Authorization', alice.auth).buffer(true).parse(binary)).body);
    const N = 25;
    const answers = await Promise.all(Array.from({ length: N }, () => request(base).get(`${gw.api}/public/download`).query({ key: link.key }).buffer(true).parse(binary)));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(sha256(a.body)).toBe(expected);
    }
    // Requests that do not start a download do not count: HEAD, 304, a resumption from a later byte.
    await gw.http().head(`${gw.api}/public/download`).query({ key: link.key }).expect(200);
    await gw.http().get(`${gw.api}/public/download`).query({ key: link.key }).set('If-None-Match', answers[0].headers.etag).expect(304);
    await publicDownload(link.key).set('Range', 'bytes=100-').expect(206);
    const listed = (await listFiles(gw, alice)).links.find((l) => l.id === link.key);
    expect(listed.used).toBe(N);
    // A range from the first byte is a download.
    await publicDownload(link.key).set('Range', 'bytes=0-99').expect(206);
    expect((await listFiles(gw, alice)).links.find((l) => l.id === link.key).used).toBe(N + 1);
  });
});

describe('Link expiry and the sweep', () => {
  let gw: TestGateway;
  let clock: Clock;
  let alice: TestUser;
  let docId: string;

  beforeAll(async () => {
    gw = await startGateway({
      env: { GATEWAY_SWEEP_INTERVAL_SECONDS: '0', GATEWAY_EXPIRED_LINK_RETENTION_HOURS: '24', GATEWAY_USER_FILE_RETENTION_DAYS: '7' },
    });
    clock = gw.app.get(Clock);
    alice = await createUser(gw, 'alice');
    docId = await seedDocument(gw, 'a.txt', 'expiring content');
  });
  afterAll(() => gw.close());

  const createLink = (query: Record<string, string | number | boolean>) =>
    gw.http().get(`${gw.api}/files/external/link`).query(query).set('Authorization', alice.auth).expect(200);
  const sweep = () => gw.app.get(FilesSweeper).sweep();

  it('answers 410 once a link expires, and the sweep removes it after the retention (then 404)', async () => {
    const link = (await createLink({ docId, internal: false, connectorId: 'fs', lifeSpan: 1 })).body.results;
    await gw.http().get(`${gw.api}/public/download`).query({ key: link.key }).expect(200);
    clock.advance(DAY - 1000);
    await gw.http().get(`${gw.api}/public/download/ready`).query({ key: link.key }).expect(200);
    clock.advance(1000);
    const expired = await gw.http().get(`${gw.api}/public/download/ready`).query({ key: link.key }).expect(410);
    expect(expired.body.error).toMatchObject({ code: 'LINK_EXPIRED', expires: link.expires });
    expect((await gw.http().get(`${gw.api}/public/download`).query({ key: link.key }).expect(410)).body.error.code).toBe('LINK_EXPIRED');
    // Kept (answering 410, listed) during the retention...
    await sweep();
    expect((await listFiles(gw, alice)).links.map((l) => l.id)).toContain(link.key);
    // ...then removed.
    clock.advance(24 * 3_600_000 + 1);
    expect((await sweep()).linksRemoved).toBeGreaterThanOrEqual(1);
    expect((await listFiles(gw, alice)).links.map((l) => l.id)).not.toContain(link.key);
    await gw.http().get(`${gw.api}/public/download/ready`).query({ key: link.key }).expect(404);
  });

  it('removes user files past their expiry, and files and links of deleted users', async () => {
    const dir = path.join(gw.dataDir, 'user-files');
    const batch = await startBatch(gw, alice, [{ connId: 'fs', id: docId }]);
    const file = await waitForExport(gw, alice, batch.docId);
    expect(fs.existsSync(path.join(dir, file.id))).toBe(true);
    clock.advance(file.expires - clock.now() - 1000);
    await sweep();
    expect(await fileHandle(gw, alice, file.id)).toBeDefined();
    clock.advance(1000);
    expect((await sweep()).filesRemoved).toBe(1);
    expect(await fileHandle(gw, alice, file.id)).toBeUndefined();
    expect(fs.existsSync(path.join(dir, file.id))).toBe(false);

    const dave = await createUser(gw, 'dave');
    const daves = await startBatch(gw, dave, [{ connId: 'fs', id: docId }]);
    await waitForExport(gw, dave, daves.docId);
    await gw.http().delete(`${gw.api}/admin/users/dave`).set('Authorization', adminAuth()).expect(200);
    const result = await sweep();
    expect(result.filesRemoved).toBe(1);
    expect(result.linksRemoved).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(path.join(dir, daves.docId))).toBe(false);
    await gw.http().get(`${gw.api}/public/download/ready`).query({ key: daves.id }).expect(404);
  });
});

describe('Periodic sweep', () => {
  it('runs every GATEWAY_SWEEP_INTERVAL_SECONDS', async () => {
    const gw = await startGateway({ env: { GATEWAY_SWEEP_INTERVAL_SECONDS: '1', GATEWAY_EXPIRED_LINK_RETENTION_HOURS: '0' } });
    try {
      const alice = await createUser(gw, 'alice');
      const docId = await seedDocument(gw, 'a.txt', 'x');
      const link = (await gw.http().get(`${gw.api}/files/external/link`).query({ docId, internal: false, connectorId: 'fs', lifeSpan: 1 }).set('Authorization', alice.auth).expect(200)).body.results;
      gw.app.get(Clock).advance(DAY + 1);
      await waitFor(async () => ((await listFiles(gw, alice)).links.length === 0 ? true : undefined), 'the sweep to remove the expired link', 5000);
      await gw.http().get(`${gw.api}/public/download/ready`).query({ key: link.key }).expect(404);
    } finally {
      await gw.close();
    }
  });
});
