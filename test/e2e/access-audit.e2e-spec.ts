import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { ByteRange } from '@gateway/connector-api';
import { AccessAuditService, linkId } from '../../apps/api/src/audit/access-audit.service';
import { Clock } from '../../apps/api/src/common/clock';
import { binary, connector, createUser, listen, seedDocument, waitFor, waitForExport, type TestUser } from '../support/files';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { ADMIN, adminAuth, startGateway, type TestGateway } from '../support/gateway';

const DAY_MS = 86_400_000;

/** supertest parser: the body as text, whatever its media type. */
function text(res: any, cb: (err: Error | null, body: string) => void): void {
  let body = '';
  const stream = res as http.IncomingMessage;
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => (body += c));
  stream.on('end', () => cb(null, body));
  stream.on('error', (e) => cb(e, body));
}

/**
 * Issue 38, the access audit: every content read the gateway serves is one row of GET /api/admin/audit,
 * with the right operation, bytes and result. Runs on SQLite, and on PostgreSQL in the second pass of
 * scripts/test.sh (GATEWAY_TEST_POSTGRES_URL).
 */
describe('Access audit', () => {
  let gw: TestGateway;
  let alice: TestUser;
  let bob: TestUser;
  const CLIENT = '203.0.113.7';

  beforeAll(async () => {
    // The client address is what TRUST_PROXY makes of X-Forwarded-For: the test client is on loopback, a trusted proxy.
    gw = await startGateway({ env: { TRUST_PROXY: 'loopback', GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    alice = await createUser(gw, 'alice');
    bob = await createUser(gw, 'bob');
  });
  afterAll(() => gw.close());

  /**
   * Rows of the audit for `query`, after writing what the buffer holds (the timer would, within a second).
   * `atLeast`: waits until that many are there: the client may have read the last byte before the
   * gateway's answer emitted 'finish', which is when the row is recorded.
   */
  async function rows(query: Record<string, string> = {}, atLeast = 0): Promise<Array<Record<string, unknown>>> {
    return waitFor(async () => {
      await gw.app.get(AccessAuditService).flush();
      const res = await gw.http().get(`${gw.api}/admin/audit`).query({ limit: '10000', ...query }).set('Authorization', adminAuth()).expect(200);
      const found = res.body.results as Array<Record<string, unknown>>;
      return found.length >= atLeast ? found : undefined;
    }, `${atLeast} audit row(s) for ${JSON.stringify(query)}`);
  }
  const get = (path: string, user: TestUser | undefined) => {
    const req = gw.http().get(`${gw.api}${path}`).set('X-Forwarded-For', CLIENT).buffer(true).parse(binary);
    return user ? req.set('Authorization', user.auth) : req;
  };

  it('a download: one row with the user, the client address as TRUST_PROXY gives it, connector, id, path, bytes and complete', async () => {
    const content = randomBytes(150_000);
    const id = await seedDocument(gw, 'audit/whole.bin', content);
    const res = await get(`/repo/fs/file?id=${encodeURIComponent(id)}`, alice).expect(200);
    expect((res.body as Buffer).length).toBe(content.length);
    expect(await rows({ documentId: id }, 1)).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        user: 'alice',
        linkId: null,
        clientAddress: CLIENT,
        operation: 'download',
        connectorId: 'fs',
        documentId: id,
        path: '/audit/whole.bin',
        bytes: content.length,
        result: 'complete',
      },
    ]);
  });

  it('rows reach the database within the flush interval without anybody asking (no flush call)', async () => {
    const id = await seedDocument(gw, 'audit/timer.txt', 'written by the timer');
    await get(`/repo/fs/file?id=${encodeURIComponent(id)}`, bob).expect(200);
    const found = await waitFor(async () => {
      const res = await gw.http().get(`${gw.api}/admin/audit`).query({ documentId: id }).set('Authorization', adminAuth()).expect(200);
      return res.body.results.length > 0 ? (res.body.results as unknown[]) : undefined;
    }, 'the audit row');
    expect(found).toEqual([expect.objectContaining({ user: 'bob', bytes: 20, result: 'complete' })]);
  });

  it('a range: rangeDownload with the bytes of the range; HEAD and 304 read no content and are not recorded', async () => {
    const content = randomBytes(10_000);
    const id = await seedDocument(gw, 'audit/range.bin', content);
    const url = `/repo/fs/file?id=${encodeURIComponent(id)}`;
    const ranged = await get(url, alice).set('Range', 'bytes=100-1099').expect(206);
    expect((ranged.body as Buffer).equals(content.subarray(100, 1100))).toBe(true);
    await gw.http().head(`${gw.api}${url}`).set('Authorization', alice.auth).expect(200);
    await get(url, alice).set('If-None-Match', String(ranged.headers.etag)).expect(304);
    expect(await rows({ documentId: id }, 1)).toEqual([expect.objectContaining({ operation: 'rangeDownload', bytes: 1000, result: 'complete' })]);
  });

  it('an older version: versionDownload under the version id', async () => {
    const id = await seedDocument(gw, 'audit/versioned.txt', 'first');
    await gw.http().put(`${gw.api}/repo/fs/updateContent`).query({ fileId: id }).set('Authorization', alice.auth).set('Content-Type', 'text/plain').send('second!').expect(200);
    const versions = (await gw.http().get(`${gw.api}/repo/fs/listversions`).query({ id }).set('Authorization', alice.auth).expect(200)).body.results as Array<{
      docId: string;
      versionLabel: string;
    }>;
    const older = versions.find((v) => v.versionLabel === '1.0')!.docId;
    expect(older).toBeDefined();
    const res = await get(`/repo/fs/file?id=${encodeURIComponent(older)}`, alice).expect(200);
    expect((res.body as Buffer).toString()).toBe('first');
    await get(`/repo/fs/file?id=${encodeURIComponent(id)}`, alice).expect(200);
    expect(await rows({ documentId: older }, 1)).toEqual([expect.objectContaining({ operation: 'versionDownload', bytes: 5, result: 'complete', user: 'alice' })]);
    expect(await rows({ documentId: id }, 1)).toEqual([expect.objectContaining({ operation: 'download', bytes: 7 })]);
  });

  it('a download the client cuts: cut, with fewer bytes than the document', async () => {
    const size = 64 * 1024 * 1024;
    const id = await seedDocument(gw, 'audit/large.bin', Buffer.alloc(size, 7));
    const base = await listen(gw);
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${base}${gw.api}/repo/fs/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: alice.auth } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
    });
    const [row] = await waitFor(async () => {
      const found = await rows({ documentId: id });
      return found.length > 0 ? found : undefined;
    }, 'the row of the cut download');
    expect(row).toEqual(expect.objectContaining({ operation: 'download', result: 'cut', user: 'alice' }));
    expect(row.bytes).toBeLessThan(size);
  });

  it('a source that fails in the middle: error, with the bytes sent before', async () => {
    const id = await seedDocument(gw, 'audit/broken.bin', randomBytes(100_000));
    const fs = connector(gw);
    const original = fs.openContent.bind(fs);
    const spy = jest.spyOn(fs, 'openContent').mockImplementation(async (docId: string, range?: ByteRange): Promise<Readable> => {
      if (docId !== id) return original(docId, range);
      const broken = new PassThrough();
      broken.write(Buffer.alloc(4096, 1));
      setTimeout(() => broken.destroy(new Error('disk went away')), 50);
      return broken;
    });
    try {
      const base = await listen(gw);
      await new Promise<void>((resolve) => {
        const req = http.get(`${base}${gw.api}/repo/fs/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: bob.auth } }, (res) => {
          res.resume();
          res.on('error', () => resolve());
          res.on('close', () => resolve());
        });
        req.on('error', () => resolve());
      });
    } finally {
      spy.mockRestore();
    }
    expect(await rows({ documentId: id }, 1)).toEqual([expect.objectContaining({ operation: 'download', result: 'error', bytes: 4096, user: 'bob' })]);
  });

  it('a zip export: one zipEntry row per entry for the user who asked; the zip through its public link: publicDownload with the link', async () => {
    const a = await seedDocument(gw, 'audit/zip/a.txt', 'entry a');
    const b = await seedDocument(gw, 'audit/zip/b.txt', 'entry bb');
    const link = await gw
      .http()
      .post(`${gw.api}/repo/batch`)
      .set('Authorization', alice.auth)
      .set('X-Forwarded-For', CLIENT)
      .send({ batch: [{ connId: 'fs', id: a }, { connId: 'fs', id: b }, { connId: 'fs', id: 'fs-bm90LXRoZXJl' }] })
      .expect(202);
    const file = await waitForExport(gw, alice, link.body.results.docId as string);
    expect(file.state).toBe('ready');
    const entries = await rows({ operation: 'zipEntry', user: 'alice' });
    expect(entries.filter((r) => r.documentId === a || r.documentId === b)).toEqual([
      expect.objectContaining({ documentId: a, path: '/audit/zip/a.txt', bytes: 7, result: 'complete', clientAddress: CLIENT, connectorId: 'fs' }),
      expect.objectContaining({ documentId: b, path: '/audit/zip/b.txt', bytes: 8, result: 'complete', clientAddress: CLIENT }),
    ]);
    // A missing document is no read: errors.txt says it, the audit does not.
    expect(entries.filter((r) => r.documentId === 'fs-bm90LXRoZXJl')).toEqual([]);

    const key = link.body.results.id as string;
    const zip = await get(`/public/download?key=${encodeURIComponent(key)}`, undefined).expect(200);
    expect(await rows({ documentId: file.id }, 1)).toEqual([
      expect.objectContaining({
        user: 'public',
        linkId: linkId(key),
        clientAddress: CLIENT,
        operation: 'publicDownload',
        connectorId: '__internal__',
        path: file.fileName,
        bytes: (zip.body as Buffer).length,
        result: 'complete',
      }),
    ]);
    expect(JSON.stringify(await rows())).not.toContain(key);

    await get(`/files/user/download?id=${encodeURIComponent(file.id as string)}`, alice).expect(200);
    expect((await rows({ documentId: file.id, user: 'alice' }, 1)).map((r) => r.operation)).toEqual(['download']);
  });

  it('the streamed zip (GET __BATCH__): one zipEntry row per entry for the caller', async () => {
    const a = await seedDocument(gw, 'audit/stream/a.txt', 'streamed');
    await get(`/repo/__BATCH__/file?id0=${encodeURIComponent(a)}&conn0=fs`, bob).expect(200);
    expect(await rows({ documentId: a }, 1)).toEqual([expect.objectContaining({ user: 'bob', operation: 'zipEntry', bytes: 8, result: 'complete', path: '/audit/stream/a.txt' })]);
  });

  it('a public link to a document: publicDownload, user public, the link id', async () => {
    const id = await seedDocument(gw, 'audit/linked.txt', 'linked content');
    const created = await gw.http().get(`${gw.api}/files/external/link`).query({ docId: id, connectorId: 'fs', internal: false }).set('Authorization', alice.auth).expect(200);
    const key = created.body.results.key as string;
    await get(`/public/download?key=${encodeURIComponent(key)}`, undefined).expect(200);
    expect(await rows({ documentId: id }, 1)).toEqual([
      expect.objectContaining({ user: 'public', linkId: linkId(key), operation: 'publicDownload', connectorId: 'fs', path: '/audit/linked.txt', bytes: 14, result: 'complete' }),
    ]);
    expect(await rows({ user: 'public', documentId: id })).toHaveLength(1);
  });

  describe('GET /api/admin/audit', () => {
    let docs: string[];
    beforeAll(async () => {
      docs = [];
      for (let i = 0; i < 5; i++) {
        const id = await seedDocument(gw, `audit/paging/${i}, "quoted".txt`, `document ${i}`);
        docs.push(id);
        await get(`/repo/fs/file?id=${encodeURIComponent(id)}`, i % 2 === 0 ? alice : bob).expect(200);
        await rows({ documentId: id }, 1);
      }
    });

    it('pages with a cursor in X-Next-Cursor, in the order rows were written', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const res = await gw
          .http()
          .get(`${gw.api}/admin/audit`)
          .query({ connectorId: 'fs', limit: '2', ...(cursor ? { cursor } : {}) })
          .set('Authorization', adminAuth())
          .expect(200);
        seen.push(...(res.body.results as Array<{ documentId: string }>).map((r) => r.documentId));
        cursor = res.headers['x-next-cursor'];
        if (!cursor) break;
      }
      const all = (await rows({ connectorId: 'fs' })).map((r) => r.documentId);
      expect(seen).toEqual(all);
      expect(seen.filter((d) => docs.includes(d))).toEqual(docs);
    });

    it('filters combine: user, operation, from and to', async () => {
      const mine = await rows({ user: 'bob', operation: 'download' });
      expect(mine.filter((r) => docs.includes(r.documentId as string)).map((r) => r.documentId)).toEqual([docs[1], docs[3]]);
      expect(mine.every((r) => r.user === 'bob' && r.operation === 'download')).toBe(true);
      expect(await rows({ from: '2999-01-01T00:00:00Z' })).toEqual([]);
      expect(await rows({ to: '2000-01-01T00:00:00Z' })).toEqual([]);
      const now = new Date().toISOString();
      expect((await rows({ documentId: docs[0], from: '2000-01-01T00:00:00Z', to: now })).length).toBe(1);
    });

    it('format=csv streams every matching row with a header line, quoting as RFC 4180 says', async () => {
      const res = await gw.http().get(`${gw.api}/admin/audit`).query({ format: 'csv', documentId: docs[2] }).set('Authorization', adminAuth()).expect(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const lines = (res.text ?? '').split('\r\n');
      expect(lines[0]).toBe('time,user,linkId,clientAddress,operation,connectorId,documentId,path,bytes,result');
      expect(lines).toHaveLength(3);
      const [time, ...rest] = lines[1].split(',');
      expect(new Date(time).toISOString()).toBe(time);
      expect(rest.join(',')).toBe(`alice,,${CLIENT},download,fs,${docs[2]},"/audit/paging/2, ""quoted"".txt",10,complete`);
      expect(lines[2]).toBe('');
    });

    it('format=ndjson streams one row object a line', async () => {
      const res = await gw
        .http()
        .get(`${gw.api}/admin/audit`)
        .query({ format: 'ndjson', user: 'alice', connectorId: 'fs' })
        .set('Authorization', adminAuth())
        .buffer(true)
        .parse(text)
        .expect(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      const parsed = (res.body as string)
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed).toEqual(await rows({ user: 'alice', connectorId: 'fs' }));
    });

    it('admin only: 403 for a user, 401 without credentials', async () => {
      const res = await gw.http().get(`${gw.api}/admin/audit`).set('Authorization', alice.auth).expect(403);
      expect(res.body.success).toBe(false);
      await gw.http().get(`${gw.api}/admin/audit`).expect(401);
    });

    it('an unknown or malformed parameter is 400 naming it', async () => {
      const unknown = await gw.http().get(`${gw.api}/admin/audit`).query({ documentid: 'x' }).set('Authorization', adminAuth()).expect(400);
      expect(unknown.body.error.parameter).toBe('documentid');
      const op = await gw.http().get(`${gw.api}/admin/audit`).query({ operation: 'upload' }).set('Authorization', adminAuth()).expect(400);
      expect(op.body.message).toMatch(/operation must be one of/);
      const from = await gw.http().get(`${gw.api}/admin/audit`).query({ from: 'yesterday' }).set('Authorization', adminAuth()).expect(400);
      expect(from.body.message).toMatch(/^Invalid parameter 'from': from must be/);
      const zoneless = await gw.http().get(`${gw.api}/admin/audit`).query({ to: '2026-11-01T10:00:00' }).set('Authorization', adminAuth()).expect(400);
      expect(zoneless.body.message).toMatch(/to must be a date \(UTC\) or a date-time with its zone/);
      await gw.http().get(`${gw.api}/admin/audit`).query({ from: '2026-11-01', to: '2026-11-02T00:00:00+01:00' }).set('Authorization', adminAuth()).expect(200);
      const cursor = await gw.http().get(`${gw.api}/admin/audit`).query({ cursor: 'abc' }).set('Authorization', adminAuth()).expect(400);
      expect(cursor.body.message).toMatch(/cursor/);
    });
  });
});

describe('Access audit across a graceful shutdown', () => {
  it('rows still in the buffer are written before the process lets go of the database', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-audit-'));
    const databaseUrl = await createTestDatabaseUrl();
    try {
      const first = await startGateway({ dataDir, env: { DATABASE_URL: databaseUrl } });
      const id = await seedDocument(first, 'shutdown.txt', 'read just before the stop');
      await first.http().get(`${first.api}/repo/fs/file`).query({ id }).set('Authorization', adminAuth()).expect(200);
      // What SIGTERM does (bootstrap.ts): app.close(), well inside the flush interval.
      expect(first.app.get(AccessAuditService).pending).toBe(1);
      await first.close();
      const second = await startGateway({ dataDir, env: { DATABASE_URL: databaseUrl } });
      try {
        const res = await second.http().get(`${second.api}/admin/audit`).query({ documentId: id }).set('Authorization', adminAuth()).expect(200);
        expect(res.body.results).toEqual([expect.objectContaining({ user: ADMIN.username, bytes: 25, result: 'complete' })]);
      } finally {
        await second.close();
      }
    } finally {
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Access audit retention (GATEWAY_ACCESS_AUDIT_RETENTION_DAYS)', () => {
  it('the sweep deletes the rows older than the retention, and only those', async () => {
    const gw = await startGateway({ env: { GATEWAY_ACCESS_AUDIT_RETENTION_DAYS: '30', GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    try {
      const audit = gw.app.get(AccessAuditService);
      const clock = gw.app.get(Clock);
      const read = async (name: string) => {
        const id = await seedDocument(gw, name, name);
        await gw.http().get(`${gw.api}/repo/fs/file`).query({ id }).set('Authorization', adminAuth()).expect(200);
        return id;
      };
      const listed = async () => {
        await audit.flush();
        const res = await gw.http().get(`${gw.api}/admin/audit`).set('Authorization', adminAuth()).expect(200);
        return (res.body.results as Array<{ documentId: string }>).map((r) => r.documentId);
      };
      const old = await read('old.txt');
      await waitFor(async () => ((await listed()).length === 1 ? true : undefined), 'the first row');
      clock.advance(20 * DAY_MS);
      const recent = await read('recent.txt');
      await waitFor(async () => ((await listed()).length === 2 ? true : undefined), 'the second row');
      clock.advance(10 * DAY_MS + 1000);
      expect(await audit.sweep()).toBe(1);
      expect(await listed()).toEqual([recent]);
      expect(old).not.toBe(recent);
    } finally {
      await gw.close();
    }
  });
});

describe('Access audit switched off (GATEWAY_ACCESS_AUDIT=off)', () => {
  it('records nothing', async () => {
    const gw = await startGateway({ env: { GATEWAY_ACCESS_AUDIT: 'off' } });
    try {
      const id = await seedDocument(gw, 'off.txt', 'not audited');
      await gw.http().get(`${gw.api}/repo/fs/file`).query({ id }).set('Authorization', adminAuth()).expect(200);
      await gw.app.get(AccessAuditService).flush();
      const res = await gw.http().get(`${gw.api}/admin/audit`).set('Authorization', adminAuth()).expect(200);
      expect(res.body.results).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});
