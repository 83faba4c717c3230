import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { binary, createUser, seedDocument, startBatch, waitForExport, type TestUser } from '../support/files';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

/**
 * Issue 16, defects 2–8 and 10 (the hostile-input part): each case is what an outside tester sent and
 * what the gateway must answer. Every case failed before its fix.
 */

const job = (over: Record<string, unknown> = {}) => ({
  jobName: `job-${Math.random().toString(36).slice(2)}`,
  source: { connectorId: 'fs', folderPath: '/in' },
  target: { connectorId: 'fs', folderPath: '/out' },
  ...over,
});

/** `depth` arrays nested in one another, as raw JSON text (JSON.stringify would recurse the same way). */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('Hostile input (issue 16)', () => {
  let gw: TestGateway;
  let alice: TestUser;
  let docId: string;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_SWEEP_INTERVAL_SECONDS: '0' } });
    alice = await createUser(gw, 'alice');
    docId = await seedDocument(gw, 'docs/report.txt', 'report');
  });
  afterAll(() => gw.close());

  const admin = () => adminAuth();
  const repoRoot = () => path.join(gw.dataDir, 'repository');
  const raw = (method: string, url: string, body?: string): Promise<http.IncomingMessage & { body: string }> =>
    new Promise((resolve, reject) => {
      const server = gw.app.getHttpServer();
      const ready = server.listening ? Promise.resolve() : new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      void ready.then(() => {
        const { port } = server.address() as AddressInfo;
        const req = http.request({ host: '127.0.0.1', port, method, path: url, headers: { Authorization: admin() } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve(Object.assign(res, { body: text })));
        });
        req.on('error', reject);
        req.end(body);
      });
    });

  describe('defect 2: a job definition without source or target', () => {
    it.each(['source', 'target'])('POST without %s answers 400 naming it', async (field) => {
      const body = job();
      delete (body as Record<string, unknown>)[field];
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(body).expect(400);
      expect(res.body.error.parameter).toBe(field);
      expect(res.body.message).toContain(field);
    });

    it.each(['source', 'target'])('PUT without %s answers 400 naming it, and the job is unchanged', async (field) => {
      const created = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(job()).expect(201);
      const jobId = created.body.results.jobId;
      const body = job({ jobName: created.body.results.jobName });
      delete (body as Record<string, unknown>)[field];
      const res = await gw.http().put(`${gw.api}/admin/jobs/${jobId}`).set('Authorization', admin()).send(body).expect(400);
      expect(res.body.error.parameter).toBe(field);
      const after = await gw.http().get(`${gw.api}/admin/jobs/${jobId}`).set('Authorization', admin()).expect(200);
      expect(after.body.results.source).toEqual(created.body.results.source);
    });

    it('a source that is not an object answers 400 naming it', async () => {
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(job({ source: 'fs:/in' })).expect(400);
      expect(res.body.error.parameter).toBe('source');
    });
  });

  describe('defect 3: JSON nested 2,000 levels deep', () => {
    it.each([
      ['POST /repo/batch', 'post', '/repo/batch', (deep: string) => `{"batch":${deep}}`],
      ['POST /admin/users', 'post', '/admin/users', (deep: string) => `{"username":"x","password":"12345678","roles":${deep}}`],
      ['POST /admin/jobs', 'post', '/admin/jobs', (deep: string) => `{"jobName":"deep","source":${deep},"target":${deep}}`],
    ] as const)('%s answers 400 naming the body', async (_name, method, route, body) => {
      const res = await gw.http()[method](`${gw.api}${route}`)
        .set('Authorization', admin())
        .set('Content-Type', 'application/json')
        .send(body(nested(2000)))
        .expect(400);
      expect(res.body.error.parameter).toBe('body');
      expect(res.body.message).toMatch(/nest/i);
    });

    it('a modest depth is still accepted where the shape allows it', async () => {
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(job({ options: { exclude: ['*.tmp'] } })).expect(201);
      expect(res.body.results.options.exclude).toEqual(['*.tmp']);
    });
  });

  describe('defect 4: batch entries that are not objects', () => {
    it.each([[[[]]], [['fs']], [[null]], [[42]]])('%j answers 400 and starts no export', async (batch) => {
      const before = await gw.http().get(`${gw.api}/files/user`).set('Authorization', alice.auth).expect(200);
      const res = await gw.http().post(`${gw.api}/repo/batch`).set('Authorization', alice.auth).send({ batch }).expect(400);
      expect(res.body.error.parameter).toBe('batch');
      expect(res.body.message).toMatch(/object/);
      const after = await gw.http().get(`${gw.api}/files/user`).set('Authorization', alice.auth).expect(200);
      expect(after.body.results.files).toHaveLength(before.body.results.files.length);
    });
  });

  describe("defect 5: a download link's fileName", () => {
    let fileId: string;
    beforeAll(async () => {
      const batch = await startBatch(gw, alice, [{ connId: 'fs', id: docId }]);
      fileId = (await waitForExport(gw, alice, batch.docId)).id;
    });

    it.each(['a\rb.txt', 'a\nb.txt', 'a\u0000b.txt', 'a\tb.txt', 'a\u007fb.txt', 'a\u0085b.txt', '../../x.txt', 'dir/x.txt', 'dir\\x.txt', '..', '.'])(
      '%j is refused with 400 naming fileName',
      async (fileName) => {
        for (const query of [
          { docId: fileId, internal: true, fileName },
          { docId, internal: false, connectorId: 'fs', fileName },
        ]) {
          const res = await gw.http().get(`${gw.api}/files/external/link`).query(query).set('Authorization', alice.auth).expect(400);
          expect(res.body.error.parameter).toBe('fileName');
        }
      },
    );

    it('a Unicode name travels in filename*, with a sanitised ASCII fallback in filename', async () => {
      const res = await gw
        .http()
        .get(`${gw.api}/files/external/link`)
        .query({ docId: fileId, internal: true, fileName: 'Ré"sumé; 2024.zip' })
        .set('Authorization', alice.auth)
        .expect(200);
      const download = await gw.http().get(`${gw.api}/public/download`).query({ key: res.body.results.key }).buffer(true).parse(binary).expect(200);
      const disposition = download.headers['content-disposition'];
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''/);
      const fallback = /filename="([^"]*)"/.exec(disposition)![1];
      expect(fallback).toBe('R__sum__ 2024.zip');
      expect(decodeURIComponent(/filename\*=UTF-8''(.*)$/.exec(disposition)![1])).toBe('Ré"sumé; 2024.zip');
    });
  });

  describe('defect 6: C1 controls and invalid UTF-8 in names and paths', () => {
    it.each([0x85, 0x80, 0x9f])('a folder name with the C1 control %d is refused', async (code) => {
      const c = String.fromCharCode(code);
      const res = await gw.http().post(`${gw.api}/repo/fs/folder`).query({ path: `/c1-${c}-x` }).set('Authorization', admin()).expect(400);
      expect(res.body.error.parameter).toBe('path');
      expect(fs.readdirSync(repoRoot()).filter((n) => n.startsWith('c1-'))).toEqual([]);
    });

    it('a file name with U+0085 is refused on upload', async () => {
      const res = await gw
        .http()
        .post(`${gw.api}/repo/fs/file`)
        .query({ folderId: 'fs-', fileName: 'a\u0085b.txt' })
        .set('Authorization', admin())
        .attach('file', Buffer.from('x'), 'x.txt')
        .expect(400);
      expect(res.body.error.parameter).toBe('fileName');
    });

    it('invalid UTF-8 in a query parameter is refused and creates nothing', async () => {
      const res = await gw.http().post(`${gw.api}/repo/fs/folder?path=/bad-%FF%FE-name`).set('Authorization', admin()).expect(400);
      expect(res.body.error.parameter).toBe('path');
      expect(res.body.message).toMatch(/UTF-8/);
      expect(fs.readdirSync(repoRoot()).filter((n) => n.startsWith('bad-'))).toEqual([]);
    });

    it('invalid UTF-8 in a path segment is refused', async () => {
      const res = await gw.http().get(`${gw.api}/repo/f%C3s/folderitems?id=fs-`).set('Authorization', admin()).expect(400);
      expect(res.body.message).toMatch(/UTF-8/);
    });

    it('valid UTF-8 still works', async () => {
      await gw.http().post(`${gw.api}/repo/fs/folder?path=/ok-${encodeURIComponent('Ωmega ✓')}`).set('Authorization', admin()).expect(201);
      expect(fs.existsSync(path.join(repoRoot(), 'ok-Ωmega ✓'))).toBe(true);
    });
  });

  describe('defect 7: validation messages say what is wrong', () => {
    it('a repeated id says it was given more than once', async () => {
      const res = await gw.http().get(`${gw.api}/repo/fs/properties?id=${docId}&id=${docId}`).set('Authorization', admin()).expect(400);
      expect(res.body.error.parameter).toBe('id');
      expect(res.body.message).toMatch(/once/);
      expect(res.body.message).not.toMatch(/shorter/);
    });

    it('a role that does not exist says which roles there are, not that a list was given', async () => {
      const res = await gw
        .http()
        .post(`${gw.api}/admin/users`)
        .set('Authorization', admin())
        .send({ username: 'badrole', password: 'badrole-password-1', roles: ['superuser'] })
        .expect(400);
      expect(res.body.error.parameter).toBe('roles');
      expect(res.body.message).toMatch(/each role must be one of admin, user/);
      expect(res.body.message).not.toMatch(/once/);
    });

    it('limit=%00 says it must be an integer', async () => {
      const res = await gw.http().get(`${gw.api}/repo/fs/folderitems?id=fs-&limit=%00`).set('Authorization', admin()).expect(400);
      expect(res.body.error.parameter).toBe('limit');
      expect(res.body.message).toMatch(/integer/);
      expect(res.body.message).not.toMatch(/greater/);
    });
  });

  describe('defect 8: JSON sent under another media type', () => {
    it.each([
      ['/admin/users', JSON.stringify({ username: 'textplain', password: '12345678', roles: ['user'] })],
      ['/repo/batch', JSON.stringify({ batch: [{ connId: 'fs', id: 'fs-' }] })],
      ['/admin/jobs', JSON.stringify(job())],
    ])('text/plain to %s answers 415 naming Content-Type', async (route, body) => {
      const res = await gw.http().post(`${gw.api}${route}`).set('Authorization', admin()).set('Content-Type', 'text/plain').send(body).expect(415);
      expect(res.body.error.parameter).toBe('Content-Type');
    });

    it('a form-encoded job definition answers 415 naming Content-Type: a definition is nested JSON', async () => {
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).type('form').send('jobName=formjob&type=copy').expect(415);
      expect(res.body.error.parameter).toBe('Content-Type');
      expect(res.body.message).toMatch(/application\/json/);
    });

    it('a JSON body without any Content-Type answers 415', async () => {
      // supertest would label a string body as a form; a plain request sends none.
      const res = await raw('POST', `${gw.api}/admin/users`, '{"username":"nct","password":"12345678","roles":["user"]}');
      expect(res.statusCode).toBe(415);
      expect(JSON.parse(res.body).error.parameter).toBe('Content-Type');
    });

    it('application/json with a charset and +json types still work', async () => {
      await gw
        .http()
        .post(`${gw.api}/admin/users`)
        .set('Authorization', admin())
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ username: 'withcharset', password: '12345678', roles: ['user'] }))
        .expect(201);
    });
  });

  describe('defect 10: methods', () => {
    it('TRACE answers 405 with Allow, on known and unknown paths', async () => {
      for (const url of [`${gw.api}/repo/fs/folderitems?id=fs-`, `${gw.api}/health`, `${gw.api}/nothing-here`]) {
        const res = await raw('TRACE', url);
        expect(res.statusCode).toBe(405);
        expect(res.headers.allow).toBeDefined();
        expect(res.headers.allow).not.toMatch(/TRACE/);
      }
    });

    it('a method a path does not take answers 405 with the methods it takes', async () => {
      const res = await gw.http().patch(`${gw.api}/admin/users`).set('Authorization', admin()).send({}).expect(405);
      expect(res.headers.allow.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'POST']);
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    });

    it('a query string as long as the documented limits reaches the gateway (not a bare 431 from Node)', async () => {
      // 4096 characters (the documented maxLength of ids), each 4 UTF-8 bytes: about 48 KiB percent-encoded.
      const res = await gw.http().get(`${gw.api}/repo/fs/properties`).query({ id: '\u{1F600}'.repeat(2048) }).set('Authorization', admin()).expect(400);
      expect(res.body.error.parameter).toBe('id');
    });

    it('an unknown path still answers 404', async () => {
      await gw.http().get(`${gw.api}/nothing-here`).set('Authorization', admin()).expect(404);
    });
  });
});
