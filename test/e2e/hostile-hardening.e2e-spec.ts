import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Clock } from '../../apps/api/src/common/clock';
import { binary, createUser, seedDocument, type TestUser } from '../support/files';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

/**
 * Issue 16, hardening: security headers with the OpenAPI UI still working, downloads that cannot
 * run in the gateway's origin, the public download rate limit, the upload size limit, and the
 * OpenAPI document stating the answers and constraints the gateway enforces (defect 10).
 */
describe('Hardening (issue 16)', () => {
  let gw: TestGateway;
  let alice: TestUser;
  const MAX_UPLOAD = 64 * 1024;
  const RATE = 5;

  beforeAll(async () => {
    gw = await startGateway({
      env: { GATEWAY_SWEEP_INTERVAL_SECONDS: '0', GATEWAY_MAX_UPLOAD_BYTES: String(MAX_UPLOAD), GATEWAY_PUBLIC_RATE_LIMIT: String(RATE) },
    });
    alice = await createUser(gw, 'alice');
  });
  afterAll(() => gw.close());

  const repoNames = () => fs.readdirSync(path.join(gw.dataDir, 'repository')).filter((n) => n !== '.gateway');
  const tempFiles = () => fs.readdirSync(path.join(gw.dataDir, 'repository', '.gateway', 'tmp'));

  describe('security headers', () => {
    it('API answers carry helmet headers', async () => {
      const res = await gw.http().get(`${gw.api}/health`).expect(200);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it('the OpenAPI UI still loads: its page, scripts and styles come from the gateway itself', async () => {
      const page = await gw.http().get('/api/docs/').expect(200);
      const csp = page.headers['content-security-policy'];
      expect(csp).toContain("script-src 'self'");
      // Every script and stylesheet the page refers to is served by the gateway (allowed by 'self'); no inline script.
      const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attributes, inline] of scripts) {
        expect(inline.trim()).toBe('');
        const src = /src="([^"]+)"/.exec(attributes)![1];
        expect(src).not.toMatch(/^https?:/);
        await gw.http().get(new URL(src, 'http://x/api/docs/').pathname).expect(200);
      }
      for (const [, href] of page.text.matchAll(/<link[^>]*href="([^"]+\.css)"/g)) {
        await gw.http().get(new URL(href, 'http://x/api/docs/').pathname).expect(200);
      }
      await gw.http().get('/api/docs-json').expect(200);
    });
  });

  describe('downloads that a browser would run', () => {
    it.each([
      ['page.html', '<script>alert(1)</script>'],
      ['image.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
      ['feed.xhtml', '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'],
    ])('%s is sent as an attachment, nosniff, sandboxed', async (name, content) => {
      const id = await seedDocument(gw, `active/${name}`, content);
      const res = await gw.http().get(`${gw.api}/repo/fs/file`).query({ id }).set('Authorization', adminAuth()).buffer(true).parse(binary).expect(200);
      expect(res.headers['content-disposition']).toMatch(/^attachment;/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toMatch(/sandbox/);
    });
  });

  describe('public download rate limit', () => {
    it(`answers 429 with Retry-After after ${RATE} requests a minute from one address, and again once the minute is over`, async () => {
      // The window is the Clock's minute: start at its beginning, so the requests below cannot straddle two.
      const clock = gw.app.get(Clock);
      clock.advance(60_000 - (clock.now() % 60_000));
      const statuses: number[] = [];
      for (let i = 0; i < RATE + 2; i++) {
        const res = await gw.http().get(`${gw.api}/public/download/ready`).query({ key: `guess-${i}` });
        statuses.push(res.status);
        if (res.status === 429) {
          expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
          expect(res.body.error.code).toBe('TOO_MANY_REQUESTS');
        }
      }
      expect(statuses).toEqual([...Array(RATE).fill(404), 429, 429]);
      // Authenticated routes are not counted.
      await gw.http().get(`${gw.api}/files/user`).set('Authorization', alice.auth).expect(200);
      clock.advance(60_000);
      await gw.http().get(`${gw.api}/public/download/ready`).query({ key: 'after' }).expect(404);
    });
  });

  describe('upload size limit', () => {
    const port = async () => {
      const server = gw.app.getHttpServer();
      if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return (server.address() as AddressInfo).port;
    };

    it('a Content-Length above GATEWAY_MAX_UPLOAD_BYTES is refused with 413 at once, nothing stored', async () => {
      const res = await gw
        .http()
        .post(`${gw.api}/repo/fs/file`)
        .query({ folderId: 'fs-', fileName: 'declared.bin' })
        .set('Authorization', adminAuth())
        .attach('file', Buffer.alloc(MAX_UPLOAD + 1, 1), 'declared.bin')
        .expect(413);
      expect(res.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: MAX_UPLOAD });
      expect(repoNames()).not.toContain('declared.bin');
    });

    it('a chunked upload is stopped when it crosses the limit and leaves nothing behind', async () => {
      const id = await seedDocument(gw, 'target.bin', 'original');
      const p = await port();
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port: p, method: 'PUT', path: `${gw.api}/repo/fs/updateContent?fileId=${id}`, headers: { Authorization: adminAuth(), 'Content-Type': 'application/octet-stream' } },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        // Chunked (no Content-Length): 4 × the limit, a chunk at a time; the answer comes before the end.
        const chunk = Buffer.alloc(16 * 1024, 2);
        let sent = 0;
        const pump = () => {
          while (sent < 16) {
            sent++;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).toBe(413);
      const content = await gw.http().get(`${gw.api}/repo/fs/file`).query({ id }).set('Authorization', adminAuth()).buffer(true).parse(binary).expect(200);
      expect(content.body.toString()).toBe('original');
      expect(tempFiles()).toEqual([]);
    });

    it('a multipart part without a usable Content-Length is cut at the limit too', async () => {
      const p = await port();
      const boundary = 'limit-boundary';
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: p,
            method: 'POST',
            path: `${gw.api}/repo/fs/file?folderId=fs-&fileName=streamed.bin`,
            headers: { Authorization: adminAuth(), 'Content-Type': `multipart/form-data; boundary=${boundary}` },
          },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="streamed.bin"\r\n\r\n`);
        const chunk = Buffer.alloc(16 * 1024, 3);
        let sent = 0;
        const pump = () => {
          while (sent < 16) {
            sent++;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end(`\r\n--${boundary}--\r\n`);
        };
        pump();
      });
      expect(status).toBe(413);
      expect(repoNames()).not.toContain('streamed.bin');
      expect(tempFiles()).toEqual([]);
    });

    // Node's fetch reading the 413 of an upload far over the limit: process.e2e-spec.ts (a gateway of its own process).
    it('a refused body that ends within the lingering bounds leaves the connection reusable; one that does not is cut', async () => {
      const p = await port();
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const post = (body: Buffer) =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const req = http.request(
            { host: '127.0.0.1', port: p, agent, method: 'POST', path: `${gw.api}/repo/fs/file?folderId=fs-&fileName=linger.bin`, headers: { Authorization: adminAuth(), 'Content-Type': 'application/octet-stream' } },
            (res) => (res.resume(), res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }))),
          );
          req.on('error', reject);
          req.end(body);
        });
      // 2 MiB: over the upload limit, within what the gateway still reads after answering.
      expect(await post(Buffer.alloc(2 * 1024 * 1024, 5))).toEqual({ status: 413, reused: false });
      expect(await post(Buffer.alloc(2 * 1024 * 1024, 5))).toEqual({ status: 413, reused: true });
      agent.destroy();

      // A client that keeps sending after the answer is cut once a bound is passed (a raw socket: Node's
      // own client stops writing once it has the answer, and would only meet the time bound).
      const total = 256 * 1024 * 1024;
      const outcome = await new Promise<{ status: number; cut: boolean }>((resolve) => {
        let sent = 0;
        let answer = '';
        const socket = net.connect(p, '127.0.0.1', () => {
          socket.write(
            `PUT ${gw.api}/repo/fs/updateContent?fileId=x HTTP/1.1\r\nHost: gateway\r\nAuthorization: ${adminAuth()}\r\n` +
              `Content-Type: application/octet-stream\r\nContent-Length: ${total}\r\n\r\n`,
          );
          const chunk = Buffer.alloc(256 * 1024, 6);
          const pump = () => {
            while (sent < total && !socket.destroyed) {
              sent += chunk.length;
              if (!socket.write(chunk)) return void socket.once('drain', pump);
            }
          };
          pump();
        });
        socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), cut: sent < total }));
      });
      expect(outcome.status).toBe(413);
      expect(outcome.cut).toBe(true);
    });

    it('an upload within the limit is stored', async () => {
      await gw
        .http()
        .post(`${gw.api}/repo/fs/file`)
        .query({ folderId: 'fs-', fileName: 'small.bin' })
        .set('Authorization', adminAuth())
        .attach('file', Buffer.alloc(MAX_UPLOAD - 1024, 1), 'small.bin')
        .expect(201);
      expect(repoNames()).toContain('small.bin');
    });
  });

  describe('the OpenAPI document states what the gateway enforces (defect 10)', () => {
    const doc = () => gw.openApi;
    const ops = () =>
      Object.entries(doc().paths).flatMap(([p, item]) =>
        Object.entries(item as Record<string, any>)
          .filter(([m]) => ['get', 'put', 'post', 'delete'].includes(m))
          .map(([m, op]) => ({ route: `${m.toUpperCase()} ${p}`, op })),
      );

    it('authenticated routes document 400 (malformed Authorization), 401 and 429 (lock-out)', () => {
      const missing = ops()
        .filter(({ op }) => op.security?.some((s: object) => 'basic' in s))
        .filter(({ op }) => !['400', '401', '429'].every((s) => s in op.responses))
        .map(({ route }) => route);
      expect(missing).toEqual([]);
    });

    it('JSON routes document 413 and 415', () => {
      const json = ops().filter(({ op }) => op.requestBody?.content?.['application/json']);
      expect(json.map(({ route }) => route)).toEqual(expect.arrayContaining(['POST /api/admin/users', 'POST /api/admin/jobs', 'PUT /api/admin/jobs/{jobId}', 'POST /api/repo/batch']));
      expect(json.filter(({ op }) => !('413' in op.responses && '415' in op.responses)).map(({ route }) => route)).toEqual([]);
    });

    it('download routes document any media type for content and JSON for errors', () => {
      const download = doc().paths['/api/public/download'].get!;
      expect(Object.keys((download.responses['200'] as any).content)).toEqual(['*/*']);
      for (const status of ['400', '404', '410', '416', '429']) {
        expect(Object.keys((download.responses[status] as any).content)).toEqual(['application/json']);
      }
    });

    it('constraints the validation enforces are in the schemas', () => {
      const schemas = doc().components!.schemas as Record<string, any>;
      expect(schemas.BatchRequestDto.properties.batch.minItems).toBe(1);
      expect(schemas.BatchEntryDto.properties.id).toMatchObject({ minLength: 1, maxLength: 4096 });
      expect(schemas.JobSourceDto.properties.folderPath.pattern).toBe('^\\/.*$');
      expect(schemas.JobOptionsDto.properties.maxErrors).toMatchObject({ minimum: 0, type: 'integer' });
      const param = (p: string, m: string, name: string) => ((doc().paths[p] as any)[m].parameters as any[]).find((x) => x.name === name).schema;
      expect(param('/api/repo/{connectorId}/folderitems', 'get', 'limit')).toMatchObject({ minimum: 1, maximum: 10_000, type: 'integer' });
      expect(param('/api/repo/{connectorId}/file', 'get', 'id')).toMatchObject({ minLength: 1, maxLength: 4096 });
      expect(param('/api/files/external/link', 'get', 'lifeSpan')).toMatchObject({ minimum: 1 });
      expect(param('/api/files/external/link', 'get', 'fileName').pattern).toBeDefined();
    });
  });
});
