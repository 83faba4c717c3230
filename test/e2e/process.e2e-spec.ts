import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { GATEWAY_CONNECTOR_MODULES } from '../../apps/api/src/connectors/connectors.module';
import { connectorParams, createBucket, directClient, useS3Engine } from '../contract/fixtures/s3-engine';
import { basic } from '../support/gateway';
import { ensureBuilt, freePort, spawnGateway } from '../support/process';

/** The gateway as a user runs it: the built main.js in its own process. */
describe('The gateway process', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  const newDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-proc-'));

  it('generates and prints the admin password once, on the first start only', async () => {
    const dataDir = newDataDir();
    const first = await spawnGateway({ GATEWAY_DATA_DIR: dataDir });
    const match = /Created admin user 'admin' with generated password: (\S+)/.exec(first.stdout());
    expect(match).not.toBeNull();
    const password = match![1];
    expect(password.length).toBeGreaterThanOrEqual(24);
    const ok = await fetch(`${first.baseUrl}/api/repo/connections`, { headers: { Authorization: basic('admin', password) } });
    expect(ok.status).toBe(200);
    expect(await first.stop()).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'repository'))).toBe(true);

    const second = await spawnGateway({ GATEWAY_DATA_DIR: dataDir });
    try {
      expect(second.stdout()).not.toContain('generated password');
      const again = await fetch(`${second.baseUrl}/api/repo/connections`, { headers: { Authorization: basic('admin', password) } });
      expect(again.status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  // Each kind's lib is reached from dist/ through its kinds/ file (connectors.module.ts); a kind whose path
  // did not survive the build would stop this start. The kinds whose engines are down here accept that at
  // start-up (health reports them), so one real engine is enough: MinIO for s3, which asks its bucket.
  it('starts with a connector of every kind, loading each kind\'s module from dist/, and only the configured kinds', async () => {
    const s3 = await useS3Engine('minio');
    const downUrl = `127.0.0.1:${await freePort()}`; // a port nobody listens on: connections refused, as by a stopped engine
    const dir = newDataDir();
    const auth = basic('admin', 'admin-process-pw-1');
    try {
      const bucket = await createBucket(directClient(s3.info), 'process-kinds');
      const microsoft = { tenantId: 't', clientId: 'c', clientSecret: 's', authorityHost: `https://${downUrl}` };
      const connectors = [
        { id: 'fs', typeId: 'filesystem', params: { root: path.join(dir, 'fs') } },
        { id: 'cmis', typeId: 'cmis', params: { url: `http://${downUrl}/cmis/browser`, repositoryId: 'A1', user: 'u', password: 'p' } },
        { id: 'solr', typeId: 'solr', params: { url: `http://${downUrl}/solr` } },
        { id: 'es', typeId: 'elasticsearch', params: { url: `http://${downUrl}` } },
        { id: 'os', typeId: 'opensearch', params: { url: `http://${downUrl}` } },
        { id: 'mongo', typeId: 'mongodb', params: { uri: `mongodb://${downUrl}/`, database: 'gateway' } },
        { id: 's3', typeId: 's3', params: connectorParams(s3.info, bucket) },
        { id: 'graph', typeId: 'graph', params: { ...microsoft, graphUrl: `https://${downUrl}/v1.0`, siteId: 'site', driveId: 'drive' } },
        { id: 'sp', typeId: 'sharepoint', params: { ...microsoft, siteUrl: `https://${downUrl}/sites/gateway` } },
      ];
      const config = path.join(dir, 'every-kind.yaml');
      fs.writeFileSync(config, `connectors:\n${connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join('')}`);
      const gw = await spawnGateway({ GATEWAY_CONFIG: config, GATEWAY_DATA_DIR: path.join(dir, 'data'), GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1', S3_TEST_SECRET: s3.info.secretAccessKey, LOG_LEVEL: 'debug' });
      try {
        const listed = (await (await fetch(`${gw.baseUrl}/api/repo/connections`, { headers: { Authorization: auth } })).json()) as { results: Array<{ typeId: string }> };
        expect(listed.results.map((c) => c.typeId).sort()).toEqual(Object.keys(GATEWAY_CONNECTOR_MODULES).sort());
        const root = (await (await fetch(`${gw.baseUrl}/api/repo/s3/rootfolderid`, { headers: { Authorization: auth } })).json()) as { results: { folderId: string } };
        const upload = new FormData();
        upload.append('file', new Blob(['every kind']), 'kinds.txt');
        const stored = await fetch(`${gw.baseUrl}/api/repo/s3/file?folderId=${encodeURIComponent(root.results.folderId)}`, { method: 'POST', headers: { Authorization: auth }, body: upload });
        expect(stored.status).toBe(201);
        const ready = (await (await fetch(`${gw.baseUrl}/api/health/ready`)).json()) as { error: { details: Record<string, { status: string }> } };
        expect(Object.entries(ready.error.details).filter(([, d]) => d.status === 'up').map(([name]) => name).sort()).toEqual(['connector:fs', 'connector:s3', 'database']);
      } finally {
        await gw.stop();
      }
      // Nest's line per module loaded (InstanceLoader) is a debug line (logging/README.md).
      const loaded = (log: string) => [...log.matchAll(/"msg":"(\w+ConnectorModule) dependencies initialized"/g)].map((m) => m[1]).sort();
      expect(loaded(gw.stdout())).toEqual(['CmisConnectorModule', 'ElasticsearchConnectorModule', 'FilesystemConnectorModule', 'GraphConnectorModule', 'MongoConnectorModule', 'OpenSearchConnectorModule', 'S3ConnectorModule', 'SharePointConnectorModule', 'SolrConnectorModule']);

      const fsOnly = await spawnGateway({ GATEWAY_DATA_DIR: path.join(dir, 'fs-only'), GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1', LOG_LEVEL: 'debug' });
      await fsOnly.stop();
      expect(loaded(fsOnly.stdout())).toEqual(['FilesystemConnectorModule']);
    } finally {
      await s3.release();
    }
  }, 180_000);

  it('writes JSON logs: a start-up summary, one line per request with its user, never a header or a credential', async () => {
    const gw = await spawnGateway({ GATEWAY_DATA_DIR: newDataDir(), GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1', LOG_LEVEL: 'info' });
    try {
      const auth = basic('admin', 'admin-process-pw-1');
      const res = await fetch(`${gw.baseUrl}/api/admin/users`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': 'application/json', 'X-Request-Id': 'req-log-check-1' },
        body: JSON.stringify({ username: 'logged', password: 'never-in-the-log-42', roles: ['user'] }),
      });
      expect(res.status).toBe(201);
      const answer = await res.text();
      const entries = () =>
        gw
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, any>);
      // The completion line is written after the response is sent: poll for it, up to a deadline.
      const completedLine = () => entries().find((e) => e.reqId === 'req-log-check-1');
      const deadline = Date.now() + 10_000;
      while (!completedLine() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const completed = completedLine()!;
      expect(completed).toMatchObject({ level: 30, user: 'admin', method: 'POST', path: '/api/admin/users', status: 201, msg: 'request completed' });
      expect(completed.bytes).toBeGreaterThan(Buffer.byteLength(answer));
      expect(typeof completed.ms).toBe('number');
      expect(Object.keys(completed).sort()).toEqual(['bytes', 'hostname', 'level', 'method', 'ms', 'msg', 'path', 'pid', 'reqId', 'status', 'time', 'user']);
      // A request without credentials names no user (and its query string is not logged either).
      await (await fetch(`${gw.baseUrl}/api/repo/connections?probe=query-never-logged`, { headers: { 'X-Request-Id': 'req-log-check-2' } })).text();
      while (!entries().some((e) => e.reqId === 'req-log-check-2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const refused = entries().find((e) => e.reqId === 'req-log-check-2');
      expect(refused).toMatchObject({ level: 40, method: 'GET', path: '/api/repo/connections', status: 401 });
      expect(refused).not.toHaveProperty('user');

      const lines = entries();
      // What Nest and the services log goes through the same JSON logger, with its context named.
      expect(lines.find((e) => e.context === 'NestApplication')).toMatchObject({ level: 30, msg: expect.stringMatching(/started/) });
      // Start-up: a short summary, not a line per route or module.
      const summary = lines.filter((e) => e.context === 'Gateway').map((e) => e.msg as string);
      expect(summary).toEqual([
        `Listening on http://127.0.0.1:${gw.port}/api (OpenAPI at /api/docs)`,
        'Connectors: fs (filesystem)',
        expect.stringMatching(/^Database: SQLite at .*gateway\.sqlite$/),
        'Job queue: in-process (this process only)',
      ]);
      expect(lines.filter((e) => ['RoutesResolver', 'RouterExplorer', 'InstanceLoader'].includes(e.context))).toEqual([]);
      const all = gw.stdout() + gw.stderr();
      expect(all).not.toContain(auth.slice(6));
      expect(all).not.toContain('admin-process-pw-1');
      expect(all).not.toContain('never-in-the-log-42');
      expect(all).not.toContain('query-never-logged');
    } finally {
      await gw.stop();
    }
  });

  // Node's fetch (undici) keeps sending while the answer arrives; a connection closed under it reset before
  // the 413 was read (EPIPE, no status). The gateway reads the rest within bounds instead (common/lingering-close.ts).
  it("answers Node's fetch a readable 413 for an upload far over the limit, declared or streamed", async () => {
    const gw = await spawnGateway({ GATEWAY_DATA_DIR: newDataDir(), GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1', GATEWAY_MAX_UPLOAD_BYTES: String(1024 * 1024) });
    try {
      const auth = basic('admin', 'admin-process-pw-1');
      for (let attempt = 0; attempt < 3; attempt++) {
        const form = new FormData();
        form.append('file', new Blob([Buffer.alloc(64 * 1024 * 1024, 4)]), 'huge.bin');
        const declared = await fetch(`${gw.baseUrl}/api/repo/fs/file?folderId=fs-&fileName=huge.bin`, { method: 'POST', headers: { Authorization: auth }, body: form });
        expect(declared.status).toBe(413);
        expect(((await declared.json()) as { error: unknown }).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: 1024 * 1024 });
      }
      const seed = new FormData();
      seed.append('file', new Blob(['original']), 'seed.bin');
      const seeded = await fetch(`${gw.baseUrl}/api/repo/fs/file?folderId=fs-&fileName=seed.bin`, { method: 'POST', headers: { Authorization: auth }, body: seed });
      const id = ((await seeded.json()) as { results: { id: string } }).results.id;
      let chunksLeft = 1024; // 64 MiB of 64 KiB chunks, no Content-Length
      const streamed = await fetch(`${gw.baseUrl}/api/repo/fs/updateContent?fileId=${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers: { Authorization: auth, 'Content-Type': 'application/octet-stream' },
        duplex: 'half',
        body: new ReadableStream({
          pull(controller) {
            controller.enqueue(new Uint8Array(64 * 1024));
            if (--chunksLeft === 0) controller.close();
          },
        }),
      });
      expect(streamed.status).toBe(413);
      expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      await gw.stop();
    }
  });

  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const gw = await spawnGateway({ GATEWAY_DATA_DIR: newDataDir(), GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1' });
    const body = JSON.stringify({ username: 'late', password: 'late-password-1', roles: ['user'] });
    // Send the headers and half the body, signal, then send the rest: the request is in flight throughout.
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        `${gw.baseUrl}/api/admin/users`,
        {
          method: 'POST',
          headers: { Authorization: basic('admin', 'admin-process-pw-1'), 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        gw.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 300);
    });
    const answer = await response;
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.text).results.username).toBe('late');
    expect(await gw.exited).toBe(0);
    await expect(fetch(`${gw.baseUrl}/api/health`)).rejects.toThrow();
  });

  it.each([
    ['an unknown key in the config file', { file: 'connectors:\n  - id: x\n    typeId: filesystem\n    root: /tmp\n' }, 'connectors[0].root: unknown key'],
    ['an unset variable in the config file', { file: 'users:\n  - {username: u, password: "${NOT_SET_ANYWHERE_42}"}\n' }, 'users[0].password: environment variable NOT_SET_ANYWHERE_42 is not set'],
    ['an unknown connector type', { file: 'connectors:\n  - {id: x, typeId: nosuchkind}\n' }, "connectors[0].typeId: unknown connector type 'nosuchkind'"],
    ['a bad environment variable', { env: { GATEWAY_LOGIN_MAX_FAILURES: '0' } }, "GATEWAY_LOGIN_MAX_FAILURES: must be an integer between 1 and 1000000 (got '0')"],
  ])('refuses to start on %s: one line naming it on stderr, exit code 1, no port opened', async (_what, given: { file?: string; env?: Record<string, string> }, message) => {
    const dir = newDataDir();
    const env: Record<string, string> = { GATEWAY_DATA_DIR: dir, GATEWAY_ADMIN_PASSWORD: 'admin-process-pw-1', ...given.env };
    if (given.file !== undefined) {
      env.GATEWAY_CONFIG = path.join(dir, 'bad.yaml');
      fs.writeFileSync(env.GATEWAY_CONFIG, given.file);
    }
    const gw = await spawnGateway(env, { waitReady: false });
    expect(await gw.exited).toBe(1);
    expect(gw.stderr()).toContain(`Configuration error: `);
    expect(gw.stderr()).toContain(message);
    expect(gw.stderr()).not.toMatch(/\n\s+at /); // no stack trace
    await expect(fetch(`${gw.baseUrl}/api/health`)).rejects.toThrow();
  });
});
