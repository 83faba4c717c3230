import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { openDatabase } from '@gateway/persistence';
import { ExportRunner } from '../../apps/api/src/files/export-runner';
import { UserFileStore } from '../../apps/api/src/files/user-file.store';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import {
  binary,
  connector,
  createUser,
  fileHandle,
  listFiles,
  listen,
  rawGet,
  readAll,
  seedDocument,
  sha256,
  startBatch,
  StreamGate,
  waitFor,
  waitForExport,
  type TestUser,
} from '../support/files';
import { startGateway, type TestGateway } from '../support/gateway';
import { readZip } from '../support/zip';

/** Spec 2.1 / 4.1: user files (list, download, delete, stop) and what they become across restarts. */

const userFilesDir = (gw: TestGateway) => path.join(gw.dataDir, 'user-files');

describe('User files', () => {
  let gw: TestGateway;
  let alice: TestUser;
  let bob: TestUser;
  let docA: string;
  let docB: string;
  const contentA = randomBytes(100_000);
  const contentB = 'second document\n';
  let gate: StreamGate | undefined;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_EXPORT_CONCURRENCY: '8' } });
    alice = await createUser(gw, 'alice');
    bob = await createUser(gw, 'bob');
    docA = await seedDocument(gw, 'a.bin', contentA);
    docB = await seedDocument(gw, 'notes/b.txt', contentB);
  });
  afterEach(() => {
    gate?.restore();
    gate = undefined;
    jest.restoreAllMocks();
  });
  afterAll(() => gw.close());

  const download = (user: TestUser, id: string) =>
    gw.http().get(`${gw.api}/files/user/download`).query({ id }).set('Authorization', user.auth).buffer(true).parse(binary);
  const stop = (user: TestUser, id: string) => gw.http().delete(`${gw.api}/files/user/stop`).query({ id }).set('Authorization', user.auth);
  const remove = (user: TestUser, id: string) => gw.http().delete(`${gw.api}/files/user/delete`).query({ id }).set('Authorization', user.auth);
  const twoEntries = () => [
    { fileName: 'a.bin', connId: 'fs', id: docA },
    { fileName: 'b.txt', connId: 'fs', id: docB },
  ];
  /** Starts an export whose first document is held after its first chunk. */
  const startHeld = async (user: TestUser) => {
    gate = new StreamGate(connector(gw));
    const link = await startBatch(gw, user, twoEntries());
    await waitFor(async () => (gate!.count > 0 ? true : undefined), 'the export to open its first document');
    return link;
  };

  it('lists nothing for a new user', async () => {
    const carol = await createUser(gw, 'carol');
    expect(await listFiles(gw, carol)).toEqual({ files: [], links: [] });
  });

  it('lists a finished export with every spec 2.1 field, and its link', async () => {
    const before = Date.now();
    const link = await startBatch(gw, alice, twoEntries());
    const file = await waitForExport(gw, alice, link.docId);
    const zipSize = fs.statSync(path.join(userFilesDir(gw), link.docId)).size;
    expect(file).toEqual({
      id: link.docId,
      fileName: link.fileName,
      expires: expect.any(Number),
      createdDate: expect.any(Number),
      size: zipSize,
      createdBy: 'alice',
      ready: true,
      mimeType: 'application/zip',
      type: 'batch',
      state: 'ready',
      progress: { entriesTotal: 2, entriesDone: 2, bytesDone: contentA.length + Buffer.byteLength(contentB), errors: 0 },
      message: null,
    });
    expect(file.fileName).toMatch(/^batch-\d{8}-\d{6}\.zip$/);
    expect(file.createdDate).toBeGreaterThanOrEqual(before);
    expect(file.createdDate).toBeLessThanOrEqual(Date.now());
    // Kept 7 days by default (the 3-day link does not push it further).
    expect(file.expires - file.createdDate).toBe(7 * 86_400_000);
    const { links } = await listFiles(gw, alice);
    expect(links).toContainEqual({ ...link, used: 0 });
  });

  it('downloads a user file streamed, with ETag, Range and Content-Disposition', async () => {
    const link = await startBatch(gw, alice, twoEntries());
    const file = await waitForExport(gw, alice, link.docId);
    const res = await download(alice, file.id).expect(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-length']).toBe(String(file.size));
    expect(res.headers['content-disposition']).toBe(`attachment; filename=${file.fileName}`);
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers.etag).toMatch(/^".+"$/);
    const whole: Buffer = res.body;
    expect(whole.length).toBe(file.size);
    const entries = readZip(whole);
    expect(entries.map((e) => e.name)).toEqual(['a.bin', 'b.txt']);
    expect(sha256(entries[0].data)).toBe(sha256(contentA));
    expect(entries[1].data.toString()).toBe(contentB);

    const part = await download(alice, file.id).set('Range', 'bytes=10-99').expect(206);
    expect(part.headers['content-range']).toBe(`bytes 10-99/${file.size}`);
    expect(Buffer.compare(part.body, whole.subarray(10, 100))).toBe(0);

    await gw.http().get(`${gw.api}/files/user/download`).query({ id: file.id }).set('Authorization', alice.auth).set('If-None-Match', res.headers.etag).expect(304);
  });

  it('answers 400 without id and 404 for an unknown id', async () => {
    const missing = await gw.http().get(`${gw.api}/files/user/download`).set('Authorization', alice.auth).expect(400);
    expect(missing.body.error.parameter).toBe('id');
    for (const id of [randomUUID(), 'not-a-file-id', '../gateway.sqlite']) {
      const res = await download(alice, id).expect(404);
      expect(res.body.error).toMatchObject({ code: 'FILE_NOT_FOUND', resource: 'file', id });
      await remove(alice, id).expect(404);
      await stop(alice, id).expect(404);
    }
  });

  it("keeps each user's files and links to themselves: another user gets 404 as if they did not exist", async () => {
    const link = await startBatch(gw, alice, twoEntries());
    await waitForExport(gw, alice, link.docId);
    const bobs = await listFiles(gw, bob);
    expect(bobs.files.map((f) => f.id)).not.toContain(link.docId);
    expect(bobs.links.map((l) => l.id)).not.toContain(link.id);

    for (const res of [await download(bob, link.docId), await remove(bob, link.docId), await stop(bob, link.docId)]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'FILE_NOT_FOUND', resource: 'file', id: link.docId });
    }
    const linkRes = await gw.http().delete(`${gw.api}/files/external/link`).query({ key: link.id }).set('Authorization', bob.auth).expect(404);
    expect(linkRes.body.error).toMatchObject({ code: 'LINK_NOT_FOUND', resource: 'link' });
    await gw.http().get(`${gw.api}/files/external/link`).query({ docId: link.docId, internal: true, fileName: 'x.zip' }).set('Authorization', bob.auth).expect(404);

    // Nothing happened to alice's file or link.
    expect((await fileHandle(gw, alice, link.docId)).ready).toBe(true);
    expect((await listFiles(gw, alice)).links.map((l) => l.id)).toContain(link.id);
    await download(alice, link.docId).expect(200);
  });

  it('shows ready=false and progress while an export runs; its download answers 409 EXPORT_NOT_READY', async () => {
    const link = await startHeld(alice);
    const running = await waitFor(async () => {
      const f = await fileHandle(gw, alice, link.docId);
      return f.progress.bytesDone > 0 ? f : undefined;
    }, 'progress to be recorded');
    expect(running).toMatchObject({ ready: false, state: 'running', size: 0, progress: { entriesTotal: 2, entriesDone: 0, errors: 0 } });
    expect(running.progress.bytesDone).toBeGreaterThan(0);
    expect(running.progress.bytesDone).toBeLessThanOrEqual(contentA.length);
    const res = await download(alice, link.docId).expect(409);
    expect(res.body.error.code).toBe('EXPORT_NOT_READY');
    gate!.release();
    const done = await waitForExport(gw, alice, link.docId);
    expect(done).toMatchObject({ ready: true, state: 'ready', progress: { entriesDone: 2, bytesDone: contentA.length + contentB.length } });
  });

  it('stops a running export: results 0, the partial zip removed, the handle left stopped', async () => {
    const link = await startHeld(alice);
    await waitFor(async () => (fs.readdirSync(userFilesDir(gw)).includes(`${link.docId}.part`) ? true : undefined), 'the partial zip');
    const res = await stop(alice, link.docId).expect(200);
    expect(res.body).toEqual({ success: true, results: 0 });
    expect(fs.readdirSync(userFilesDir(gw)).filter((n) => n.startsWith(link.docId))).toEqual([]);
    const file = await fileHandle(gw, alice, link.docId);
    expect(file).toMatchObject({ ready: false, state: 'stopped', size: 0, message: 'Stopped' });
    expect(gate!.streams[0].destroyed).toBe(true);
    expect((await download(alice, link.docId).expect(409)).body.error.code).toBe('EXPORT_STOPPED');
    // Stopping again changes nothing and still answers 0.
    expect((await stop(alice, link.docId).expect(200)).body.results).toBe(0);
  });

  it('answers two stops at once with 0 each, and stops the export once', async () => {
    const link = await startHeld(alice);
    const [first, second] = await Promise.all([stop(alice, link.docId), stop(alice, link.docId)]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.body.results, second.body.results]).toEqual([0, 0]);
    expect(await fileHandle(gw, alice, link.docId)).toMatchObject({ state: 'stopped', ready: false });
    expect(fs.readdirSync(userFilesDir(gw)).filter((n) => n.startsWith(link.docId))).toEqual([]);
  });

  it('stops an export whose repository never answers, without waiting for it', async () => {
    const fsConnector = connector(gw);
    const open = fsConnector.openContent.bind(fsConnector);
    let answer!: () => void;
    const hanging = new Promise<void>((r) => (answer = r));
    const late: Readable[] = [];
    const spy = jest.spyOn(fsConnector, 'openContent').mockImplementation(async (id, range) => {
      await hanging;
      const stream = await open(id, range);
      late.push(stream);
      return stream;
    });
    const link = await startBatch(gw, alice, twoEntries());
    await waitFor(async () => (spy.mock.calls.length > 0 ? true : undefined), 'the export to ask for its first document');
    expect((await stop(alice, link.docId).expect(200)).body.results).toBe(0);
    expect(await fileHandle(gw, alice, link.docId)).toMatchObject({ state: 'stopped' });
    // When the repository finally answers, the stream it hands over is closed, not read.
    answer();
    await waitFor(async () => (late.length === 1 && late[0].destroyed ? true : undefined), 'the late stream to be closed');
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('marks an export failed, without a partial file, when writing the zip fails', async () => {
    const store = gw.app.get(UserFileStore);
    const createPartial = store.createPartial.bind(store);
    jest.spyOn(store, 'createPartial').mockImplementation((id: string) => {
      const real = createPartial(id);
      let written = 0;
      const full = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          written += chunk.length;
          if (written > 50_000) return callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
          real.write(chunk, callback);
        },
        final(callback) {
          real.end(callback);
        },
      });
      full.on('close', () => real.destroy());
      return full;
    });
    const link = await startBatch(gw, alice, twoEntries());
    const file = await waitForExport(gw, alice, link.docId);
    expect(file).toMatchObject({ state: 'failed', ready: false, size: 0, message: 'Failed: ENOSPC: no space left on device, write' });
    await waitFor(async () => (fs.readdirSync(userFilesDir(gw)).some((n) => n.startsWith(link.docId)) ? undefined : true), 'the partial file to go');
    expect((await download(alice, link.docId).expect(409)).body.error.code).toBe('EXPORT_FAILED');
    // The gateway carries on.
    jest.restoreAllMocks();
    const next = await startBatch(gw, alice, twoEntries());
    expect(await waitForExport(gw, alice, next.docId)).toMatchObject({ state: 'ready' });
  });

  it('refuses to stop a finished export (409 EXPORT_COMPLETE) and changes nothing', async () => {
    const link = await startBatch(gw, alice, twoEntries());
    const file = await waitForExport(gw, alice, link.docId);
    const res = await stop(alice, link.docId).expect(409);
    expect(res.body.error).toMatchObject({ code: 'EXPORT_COMPLETE', size: file.size });
    expect(await fileHandle(gw, alice, link.docId)).toEqual(file);
    expect((await download(alice, link.docId).expect(200)).body.length).toBe(file.size);
  });

  it("answers the completed size when the export completes before the stop takes effect", async () => {
    const store = gw.app.get(UserFileStore);
    const runner = gw.app.get(ExportRunner);
    const commit = store.commit.bind(store);
    let reachCommit!: () => void;
    const atCommit = new Promise<void>((r) => (reachCommit = r));
    let releaseCommit!: () => void;
    const commitHeld = new Promise<void>((r) => (releaseCommit = r));
    jest.spyOn(store, 'commit').mockImplementation(async (id: string) => {
      reachCommit();
      await commitHeld;
      return commit(id);
    });
    const stopSpy = jest.spyOn(runner, 'stop');

    const link = await startBatch(gw, alice, twoEntries());
    await atCommit; // past the last point where a stop could still win
    const stopping = stop(alice, link.docId).then((r) => r);
    await waitFor(async () => (stopSpy.mock.calls.length > 0 ? true : undefined), 'the stop to reach the export');
    releaseCommit();
    const res = await stopping;
    const file = await fileHandle(gw, alice, link.docId);
    expect(file).toMatchObject({ state: 'ready', ready: true });
    expect(res.status).toBe(200);
    expect(res.body.results).toBe(file.size);
    expect(file.size).toBeGreaterThan(contentA.length);
  });

  it('deletes a user file: returns the handle, removes bytes and links, then 404', async () => {
    const link = await startBatch(gw, alice, twoEntries());
    const file = await waitForExport(gw, alice, link.docId);
    const res = await remove(alice, link.docId).expect(200);
    expect(res.body).toEqual({ success: true, results: file });
    expect(fs.existsSync(path.join(userFilesDir(gw), link.docId))).toBe(false);
    const after = await listFiles(gw, alice);
    expect(after.files.map((f) => f.id)).not.toContain(link.docId);
    expect(after.links.map((l) => l.id)).not.toContain(link.id);
    await download(alice, link.docId).expect(404);
    await remove(alice, link.docId).expect(404);
    await gw.http().get(`${gw.api}/public/download/ready`).query({ key: link.id }).expect(404);
  });

  it('deletes a running export by stopping it first', async () => {
    const link = await startHeld(alice);
    const res = await remove(alice, link.docId).expect(200);
    expect(res.body.results).toMatchObject({ id: link.docId, ready: false, state: 'stopped' });
    expect(fs.readdirSync(userFilesDir(gw)).filter((n) => n.startsWith(link.docId))).toEqual([]);
    expect(await fileHandle(gw, alice, link.docId)).toBeUndefined();
  });

  it('lets a download already under way finish while the file is deleted; later downloads get 404', async () => {
    const big = randomBytes(48 * 1024 * 1024);
    const bigId = await seedDocument(gw, 'big.bin', big);
    const link = await startBatch(gw, alice, [{ fileName: 'big.bin', connId: 'fs', id: bigId }]);
    const file = await waitForExport(gw, alice, link.docId);
    const base = await listen(gw);
    const store = gw.app.get(UserFileStore);
    const openRead = store.openRead.bind(store);
    const opened: Readable[] = [];
    jest.spyOn(store, 'openRead').mockImplementation(async (id, range) => {
      const stream = await openRead(id, range);
      opened.push(stream);
      return stream;
    });

    const res = await rawGet(`${base}${gw.api}/files/user/download?id=${link.docId}`, { Authorization: alice.auth });
    expect(res.statusCode).toBe(200);
    const first: Buffer = await new Promise((resolve) => res.once('data', resolve));
    res.pause();
    const deleted = await remove(alice, link.docId).expect(200);
    expect(deleted.body.results.id).toBe(link.docId);
    expect(fs.existsSync(path.join(userFilesDir(gw), link.docId))).toBe(false);
    // The download really was in the middle: the server had not read the whole file yet.
    expect(opened).toHaveLength(1);
    expect(opened[0].readableEnded).toBe(false);
    const rest = await readAll(res.resume());
    const whole = Buffer.concat([first, rest]);
    expect(whole.length).toBe(file.size);
    expect(sha256(readZip(whole)[0].data)).toBe(sha256(big));
    await download(alice, link.docId).expect(404);
    fs.rmSync(path.join(gw.dataDir, 'repository', 'big.bin'));
  });
});

describe('File service in the OpenAPI document', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  it('documents every route; the public download routes need no credentials, the others Basic', () => {
    const paths = gw.openApi.paths;
    const routes: Array<[string, 'get' | 'delete' | 'post', boolean]> = [
      ['/api/files/user', 'get', false],
      ['/api/files/user/download', 'get', false],
      ['/api/files/user/delete', 'delete', false],
      ['/api/files/user/stop', 'delete', false],
      ['/api/files/external/link', 'get', false],
      ['/api/files/external/link', 'delete', false],
      ['/api/repo/batch', 'post', false],
      ['/api/repo/__BATCH__/file', 'get', false],
      ['/api/public/download/ready', 'get', true],
      ['/api/public/download', 'get', true],
    ];
    for (const [p, method, isPublic] of routes) {
      const op = paths[p]?.[method];
      expect({ route: `${method} ${p}`, documented: op !== undefined }).toEqual({ route: `${method} ${p}`, documented: true });
      expect(op!.security).toEqual(isPublic ? undefined : [{ basic: [] }]);
      expect(Object.keys(op!.responses)).toContain(method === 'post' ? '202' : '200');
    }
    expect(paths['/api/files/user/stop'].delete!.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'query', required: true })]);
  });
});

describe('Export queue', () => {
  let gw: TestGateway;
  let alice: TestUser;
  let doc: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_EXPORT_CONCURRENCY: '1' } });
    alice = await createUser(gw, 'alice');
    doc = await seedDocument(gw, 'a.txt', 'queued content');
  });
  afterAll(() => gw.close());

  it('runs exports one at a time beyond the limit; a queued one can be stopped, the others go on', async () => {
    const gate = new StreamGate(connector(gw));
    try {
      const first = await startBatch(gw, alice, [{ connId: 'fs', id: doc }]);
      await waitFor(async () => (gate.count === 1 ? true : undefined), 'the first export to start');
      const second = await startBatch(gw, alice, [{ connId: 'fs', id: doc }]);
      const third = await startBatch(gw, alice, [{ connId: 'fs', id: doc }]);
      const runner = gw.app.get(ExportRunner);
      await waitFor(async () => (runner.waiting === 2 ? true : undefined), 'the second and third exports to queue for a slot');
      expect(gate.count).toBe(1); // the others wait for a slot, their documents unopened
      expect(await fileHandle(gw, alice, second.docId)).toMatchObject({ state: 'running', ready: false, progress: { entriesDone: 0, bytesDone: 0 } });

      const stopped = await gw.http().delete(`${gw.api}/files/user/stop`).query({ id: second.docId }).set('Authorization', alice.auth).expect(200);
      expect(stopped.body.results).toBe(0);
      gate.release();
      expect(await waitForExport(gw, alice, first.docId)).toMatchObject({ state: 'ready' });
      expect(await waitForExport(gw, alice, third.docId)).toMatchObject({ state: 'ready' });
      expect(await fileHandle(gw, alice, second.docId)).toMatchObject({ state: 'stopped' });
    } finally {
      gate.restore();
    }
  });
});

describe('Exports across restarts and crashes', () => {
  it('marks an export running at shutdown failed, and one a crash left running failed at the next start, removing partial and stray files', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-files-restart-'));
    const databaseUrl = await createTestDatabaseUrl(); // undefined on the SQLite pass
    const env = { DATABASE_URL: databaseUrl ?? '' };
    try {
      const first = await startGateway({ dataDir, env });
      const alice = await createUser(first, 'alice');
      const doc = await seedDocument(first, 'a.txt', 'restart content');
      const done = await startBatch(first, alice, [{ connId: 'fs', id: doc }]);
      await waitForExport(first, alice, done.docId);
      const gate = new StreamGate(connector(first));
      const interrupted = await startBatch(first, alice, [{ connId: 'fs', id: doc }]);
      await waitFor(async () => (gate.count > 0 ? true : undefined), 'the export to start');
      await first.close(); // shutdown while the export runs
      gate.restore();

      // What a crash leaves: a row still running, its partial file, and a stray file.
      const crashedId = randomUUID();
      const database = await openDatabase({ databaseUrl, sqliteFile: path.join(dataDir, 'gateway.sqlite') });
      const now = Date.now();
      await database.db
        .insertInto('user_files')
        .values({ id: crashedId, owner: 'alice', file_name: 'crashed.zip', type: 'batch', mime_type: 'application/zip', state: 'running', created_at: now, expires_at: now + 86_400_000, completed_at: null, message: null })
        .execute();
      await database.close();
      fs.writeFileSync(path.join(dataDir, 'user-files', `${crashedId}.part`), 'half a zip');
      fs.writeFileSync(path.join(dataDir, 'user-files', 'stray.tmp'), 'junk');

      const second = await startGateway({ dataDir, env: { ...env, GATEWAY_ADMIN_PASSWORD: undefined } });
      try {
        const files = (await listFiles(second, alice)).files;
        const byId = Object.fromEntries(files.map((f) => [f.id, f]));
        expect(byId[done.docId]).toMatchObject({ state: 'ready', ready: true });
        expect(byId[interrupted.docId]).toMatchObject({ state: 'failed', ready: false, message: expect.stringMatching(/^Interrupted/) });
        expect(byId[crashedId]).toMatchObject({ state: 'failed', ready: false, message: expect.stringMatching(/^Interrupted/) });
        expect(fs.readdirSync(path.join(dataDir, 'user-files')).sort()).toEqual([done.docId]);
        const zip = await second.http().get(`${second.api}/files/user/download`).query({ id: done.docId }).set('Authorization', alice.auth).buffer(true).parse(binary).expect(200);
        expect(readZip(zip.body)[0].data.toString()).toBe('restart content');
        const res = await second.http().get(`${second.api}/files/user/download`).query({ id: crashedId }).set('Authorization', alice.auth).expect(409);
        expect(res.body.error.code).toBe('EXPORT_FAILED');
        // A failed export has nothing to stop.
        expect((await second.http().delete(`${second.api}/files/user/stop`).query({ id: crashedId }).set('Authorization', alice.auth).expect(200)).body.results).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
