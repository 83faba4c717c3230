import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { startEngines, stopEngines } from '../engines';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { connectorParams, createBucket, directClient, useS3Engine, type S3EngineName } from '../contract/fixtures/s3-engine';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { ADMIN, adminAuth, basic } from '../support/gateway';
import { sha256, waitFor } from '../support/files';
import { gatewayRows } from '../support/gateway-rows';
import { stopWhen } from '../support/held-process';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { listTree, writeTree } from './jobs-helpers';

/*
 * Three gateway processes (the built main.js) on one PostgreSQL and one Redis, with requests spread round-robin
 * over them as a load balancer would. Runs in the PostgreSQL + Redis pass of scripts/test.sh
 * (GATEWAY_TEST_POSTGRES_URL, GATEWAY_TEST_REDIS_URL) and starts its own PostgreSQL and Redis through the engine
 * harness when they are not given. The nodes run under the context path /gateway, and Debian's nginx with the
 * shipped docker/nginx.conf balances over them round-robin (`PROXY`); most tests address a node directly to say
 * which one answers.
 *
 * Once per user-file store (GATEWAY_MULTINODE_STORES, default all three):
 *   local    user files in one folder all nodes share (GATEWAY_USER_FILES_DIR), documents in a shared
 *            filesystem repository; every test, the ones that do not touch user files too;
 *   s3proxy, minio
 *            user files on S3 (GATEWAY_USER_FILES_STORE=s3://…) and documents in a bucket (an s3 connector):
 *            each node has only its own data folder, nothing on disk is shared; the tests of user files
 *            (exports built on one node, listed, downloaded, stopped, deleted and failed through the others).
 */

/** Through nginx, round-robin over the nodes, as a client of the deployment sees it. */
const PROXY = 'proxy' as const;

const NODES = 3;
const JOB_DOCS = 2000;
const MiB = 1024 * 1024;

type StoreName = 'local' | S3EngineName;
const STORES = (process.env.GATEWAY_MULTINODE_STORES ?? 'local,s3proxy,minio')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean) as StoreName[];

interface Answer {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Where the documents exported come from and where the user files go, for one store; and what a test can
 * see there directly, around the gateway.
 */
interface Storage {
  /** The gateway.yaml `connectors:` entries (the documents' connector `docs` first). */
  connectors: string[];
  /** The store's variables for node i (its own data folder is set apart). */
  env(i: number): Record<string, string>;
  /** Puts a document `name` at the root of `docs`. */
  putDocument(name: string, bytes: Buffer): Promise<void>;
  /** The complete user file `id` as the store holds it. */
  readStored(id: string): Promise<Buffer>;
  /** Whether the export `id` is being written (its partial file, or its unfinished multipart upload, exists). */
  writing(id: string): Promise<boolean>;
  /** What the store still holds of these user files: complete files, partial files, unfinished uploads. */
  leftovers(ids: string[]): Promise<string[]>;
  release(): Promise<void>;
}

/** User files in one folder every node shares; documents in a shared filesystem repository. */
function localStorage(root: string): Storage {
  const userFiles = path.join(root, 'user-files');
  const repo = path.join(root, 'repo');
  fs.mkdirSync(repo, { recursive: true });
  const named = (ids: string[]) => (fs.existsSync(userFiles) ? fs.readdirSync(userFiles).filter((n) => ids.some((id) => n.startsWith(id))) : []);
  return {
    connectors: [`{id: docs, typeId: filesystem, params: {root: ${repo}}}`],
    env: () => ({ GATEWAY_USER_FILES_DIR: userFiles }),
    putDocument: async (name, bytes) => fs.writeFileSync(path.join(repo, name), bytes),
    readStored: async (id) => fs.readFileSync(path.join(userFiles, id)),
    writing: async (id) => fs.existsSync(path.join(userFiles, `${id}.part`)),
    leftovers: async (ids) => named(ids),
    release: async () => undefined,
  };
}

/**
 * User files on S3 (bucket `exports`, prefix `user-files/`), documents in another bucket of the same server
 * (connector `docs`). S3Proxy's nodes name the store's connection by their own variables, MinIO's by reference
 * to the `docs` connector: the two forms the store's README documents.
 */
async function s3Storage(engineName: S3EngineName): Promise<Storage> {
  const engine = await useS3Engine(engineName);
  const s3 = directClient(engine.info);
  const docsBucket = await createBucket(s3, 'multinode-docs');
  const exportsBucket = await createBucket(s3, 'multinode-exports');
  const prefix = 'user-files/';
  const connection: Record<string, string> =
    engineName === 'minio'
      ? { GATEWAY_USER_FILES_S3_CONNECTOR: 'docs' }
      : {
          GATEWAY_USER_FILES_S3_ENDPOINT: engine.info.endpoint,
          GATEWAY_USER_FILES_S3_REGION: engine.info.region,
          GATEWAY_USER_FILES_S3_ACCESS_KEY_ID: engine.info.accessKeyId,
          GATEWAY_USER_FILES_S3_SECRET_ACCESS_KEY: engine.info.secretAccessKey,
          GATEWAY_USER_FILES_S3_FORCE_PATH_STYLE: 'true',
        };
  // One listing per key: MinIO lists the unfinished uploads of one exact key only, not of a prefix.
  const uploads = async (ids: string[]) => {
    const found: string[] = [];
    for (const id of ids) {
      const page = await s3.send(new ListMultipartUploadsCommand({ Bucket: exportsBucket, Prefix: prefix + id }));
      if ((page.Uploads ?? []).some((u) => u.Key === prefix + id)) found.push(id);
    }
    return found;
  };
  return {
    connectors: [`${JSON.stringify({ id: 'docs', typeId: 's3', params: connectorParams(engine.info, docsBucket, { multipartThresholdBytes: 5 * MiB }) })}`],
    env: () => ({
      S3_TEST_SECRET: engine.info.secretAccessKey,
      GATEWAY_USER_FILES_STORE: `s3://${exportsBucket}/${prefix.slice(0, -1)}`,
      GATEWAY_USER_FILES_S3_PART_BYTES: String(5 * MiB),
      ...connection,
    }),
    putDocument: async (name, bytes) => {
      await s3.send(new PutObjectCommand({ Bucket: docsBucket, Key: name, Body: bytes }));
    },
    readStored: async (id) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: exportsBucket, Key: prefix + id }))).Body!.transformToByteArray()),
    writing: async (id) => (await uploads([id])).length > 0,
    leftovers: async (ids) => {
      const objects = ((await s3.send(new ListObjectsV2Command({ Bucket: exportsBucket, Prefix: prefix }))).Contents ?? [])
        .map((o) => o.Key!.slice(prefix.length))
        .filter((name) => ids.includes(name));
      return [...objects, ...(await uploads(ids)).map((name) => `${name} (unfinished upload)`)];
    },
    release: async () => {
      s3.destroy();
      await engine.release();
    },
  };
}

let pgAdmin: string;
let redisUrl: string;
let ownEngines = false;

beforeAll(async () => {
  ensureBuilt();
  const missing = [
    ...(process.env.GATEWAY_TEST_POSTGRES_URL ? [] : (['postgres'] as const)),
    ...(process.env.GATEWAY_TEST_REDIS_URL ? [] : (['redis'] as const)),
  ];
  const started = missing.length > 0 ? await startEngines(missing) : {};
  ownEngines = missing.length > 0;
  pgAdmin = process.env.GATEWAY_TEST_POSTGRES_URL ?? (started as { postgres: { url: string } }).postgres.url;
  redisUrl = process.env.GATEWAY_TEST_REDIS_URL ?? (started as { redis: { url: string } }).redis.url;
}, 300_000);

afterAll(async () => {
  if (ownEngines) await stopEngines();
}, 60_000);

describe.each(STORES)('Three gateway nodes on one PostgreSQL and one Redis (issue 17), user files: %s (issue 15)', (store) => {
  const local = store === 'local';
  let root: string;
  let databaseUrl: string;
  let storage: Storage;
  let env: (i: number) => Record<string, string>;
  const nodes: GatewayProcess[] = [];
  let nginx: NginxHandle | undefined;
  let turn = 0;
  /** The next node in round-robin order. */
  const next = () => nodes[turn++ % nodes.length];

  /**
   * One request on a connection of its own (node:http, no agent): a load balancer's connections are its
   * own business, and a reused keep-alive socket the server closes at that moment would fail the test
   * for a reason that has nothing to do with the nodes.
   */
  function call(node: GatewayProcess | typeof PROXY, method: string, p: string, auth = adminAuth(), headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${node === PROXY ? `${nginx!.url}/gateway` : node.baseUrl}/api${p}`,
        {
          method,
          agent: false,
          headers: {
            ...(auth ? { Authorization: auth } : {}),
            ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const buffer = Buffer.concat(chunks);
            const type = String(res.headers['content-type'] ?? '');
            resolve({ status: res.statusCode ?? 0, body: type.includes('json') ? JSON.parse(buffer.toString()) : buffer, headers: res.headers });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Puts a document at the root of `docs` and answers its id, asked through `node`. */
  async function document(node: GatewayProcess | typeof PROXY, name: string, bytes: Buffer, auth: string): Promise<string> {
    await storage.putDocument(name, bytes);
    const found = await call(node, 'GET', `/repo/docs/idbypath?folderPath=/&fileName=${encodeURIComponent(name)}`, auth);
    expect(found.status).toBe(200);
    return found.body.results.id as string;
  }

  /** Polls the user's list through `node` until the export `id` is no longer running; answers its handle. */
  async function settled(node: GatewayProcess | typeof PROXY, auth: string, id: string): Promise<any> {
    for (;;) {
      const handle = (await call(node, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === id);
      if (handle.state !== 'running') return handle;
      await sleep(50);
    }
  }

  /** Until the store holds nothing more of these user files (the node that removes them may still be at it). */
  const storeEmptied = (ids: string[], what: string) => waitFor(async () => ((await storage.leftovers(ids)).length === 0 ? true : undefined), what, 30_000);

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), `gateway-multinode-${store}-`));
    databaseUrl = (await createTestDatabaseUrl(pgAdmin))!;
    storage = local ? localStorage(root) : await s3Storage(store);

    const connectors = [...storage.connectors];
    if (local) {
      writeTree(path.join(root, 'jobsrc'), Object.fromEntries(Array.from({ length: JOB_DOCS }, (_, i) => [`in/f${i % 4}/doc-${i}.txt`, `document ${i}\n`])));
      connectors.push(`{id: src, typeId: filesystem, params: {root: ${root}/jobsrc}}`, `{id: dst, typeId: filesystem, params: {root: ${root}/jobdst}}`);
    }
    fs.writeFileSync(
      path.join(root, 'gateway.yaml'),
      `connectors:\n${connectors.map((c) => `  - ${c}\n`).join('')}` +
        (local ? `jobs:\n  - jobName: spread\n    source: {connectorId: src, folderPath: /in}\n    target: {connectorId: dst, folderPath: /out}\n` : ''),
    );
    env = (i: number) => ({
      GATEWAY_DATA_DIR: path.join(root, `data-${i}`),
      GATEWAY_CONFIG: path.join(root, 'gateway.yaml'),
      GATEWAY_CONTEXT_PATH: '/gateway',
      GATEWAY_ADMIN_USER: ADMIN.username,
      GATEWAY_ADMIN_PASSWORD: ADMIN.password,
      GATEWAY_NODE_ID: `node-${i}`,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      TRUST_PROXY: 'true',
      GATEWAY_LOGIN_MAX_FAILURES: '10',
      GATEWAY_EXPORT_LEASE_SECONDS: '3',
      GATEWAY_EXPORT_CONCURRENCY: '1',
      GATEWAY_JOB_CONCURRENCY: '2',
      GATEWAY_JOB_LOCAL_CONCURRENCY: '2',
      LOG_LEVEL: 'warn',
      ...storage.env(i),
    });
    // The first node migrates the database; the others then start on it.
    nodes.push(await spawnGateway(env(0)));
    nodes.push(...(await Promise.all(Array.from({ length: NODES - 1 }, (_, i) => spawnGateway(env(i + 1))))));
    nginx = await startNginx({ upstreams: nodes.map((n) => ({ port: Number(new URL(n.baseUrl).port) })) });
  }, 600_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const n of nodes) await n.stop('SIGKILL');
    if (databaseUrl) await dropTestDatabase(databaseUrl, pgAdmin).catch(() => undefined);
    await storage?.release();
    fs.rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('reports Redis in readiness on every node', async () => {
    for (const node of nodes) {
      const ready = await call(node, 'GET', '/health/ready', '');
      expect(ready.status).toBe(200);
      expect(ready.body.results.details.redis.status).toBe('up');
      expect(ready.body.results.details.database.engine).toBe('postgres');
    }
  });

  it('behind nginx round-robin over the three nodes: one lock-out, and an export and a public link whichever node answers', async () => {
    await call(PROXY, 'POST', '/admin/users', adminAuth(), {}, { username: 'proxied', password: 'proxied-pw-1', roles: ['user'] });
    await call(PROXY, 'POST', '/admin/users', adminAuth(), {}, { username: 'proxied-target', password: 'proxied-target-pw-1', roles: ['user'] });
    // 30 wrong passwords in parallel through the proxy reach all three nodes; counted in one place, 10 are evaluated
    // (three separate counts would evaluate up to 30).
    const wrong = await Promise.all(Array.from({ length: 30 }, (_, i) => call(PROXY, 'GET', '/repo/connections', basic('proxied-target', `wrong-${i}`))));
    const counts: Record<number, number> = {};
    for (const r of wrong) counts[r.status] = (counts[r.status] ?? 0) + 1;
    expect(counts).toEqual({ 401: 10, 429: 20 });

    const auth = basic('proxied', 'proxied-pw-1');
    const content = randomBytes(300 * 1024);
    const id = await document(PROXY, 'via-proxy.bin', content, auth);
    const started = await call(PROXY, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'docs', id }] });
    expect(started.status).toBe(202);
    const fileId = started.body.results.docId as string;
    const handle = await settled(PROXY, auth, fileId);
    expect(handle).toMatchObject({ state: 'ready', progress: { entriesTotal: 1, entriesDone: 1, errors: 0 } });
    // Three downloads: each node serves it once.
    for (let i = 0; i < 3; i++) {
      const zip = await call(PROXY, 'GET', `/files/user/download?id=${fileId}`, auth);
      expect([zip.status, zip.body.length]).toEqual([200, handle.size]);
    }
    expect((await call(PROXY, 'DELETE', `/files/user/delete?id=${fileId}`, auth)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(PROXY, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(404);

    const link = await call(PROXY, 'GET', `/files/external/link?internal=false&connectorId=docs&docId=${encodeURIComponent(id)}`, auth);
    const key = link.body.results.key as string;
    const downloads = await Promise.all(Array.from({ length: 30 }, () => call(PROXY, 'GET', `/public/download?key=${encodeURIComponent(key)}`, '')));
    expect(downloads.every((d) => d.status === 200 && sha256(d.body) === sha256(content))).toBe(true);
    expect((await call(PROXY, 'GET', '/files/user', auth)).body.results.links.find((l: any) => l.id === key).used).toBe(30);
  });

  if (local) {
    it('counts the lock-out across nodes: of 60 parallel wrong passwords from one address, spread over the nodes, 10 are evaluated', async () => {
      await call(nodes[0], 'POST', '/admin/users', adminAuth(), {}, { username: 'target', password: 'target-password-1', roles: ['user'] });
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => call(next(), 'GET', '/repo/connections', basic('target', `wrong-${i}`), { 'X-Forwarded-For': '10.7.0.1' })),
      );
      const counts: Record<number, number> = {};
      for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
      expect(counts).toEqual({ 401: 10, 429: 50 });
      // Locked on every node, even for the right password; another address is not.
      for (const node of nodes) {
        expect((await call(node, 'GET', '/repo/connections', basic('target', 'target-password-1'), { 'X-Forwarded-For': '10.7.0.1' })).status).toBe(429);
        expect((await call(node, 'GET', '/repo/connections', basic('target', 'target-password-1'), { 'X-Forwarded-For': '10.7.0.2' })).status).toBe(200);
      }
    });

    it('holds the public download rate limit (120 a minute per address, the default) across nodes: of 126 requests spread over them, 6 are refused', async () => {
      // The limit's window is the minute of the nodes' clocks: a burst that straddled two minutes would get two allowances.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 50_000) await sleep(60_000 - intoMinute);
      const results = await Promise.all(
        Array.from({ length: 126 }, (_, i) => call(next(), 'GET', `/public/download/ready?key=guess-${i}`, '', { 'X-Forwarded-For': '10.7.2.1' })),
      );
      const counts: Record<number, number> = {};
      for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
      expect(counts).toEqual({ 404: 120, 429: 6 });
      expect(results.filter((r) => r.status === 429).every((r) => Number(r.headers['retry-after']) > 0)).toBe(true);
      // Another address has its own allowance, on every node.
      for (const node of nodes) expect((await call(node, 'GET', '/public/download/ready?key=guess', '', { 'X-Forwarded-For': '10.7.2.2' })).status).toBe(404);
    });

    it('refuses on the other nodes, once they have read the events after it, a user deleted or a password changed on one node', async () => {
      const [a, b, c] = nodes;
      const conn = (node: GatewayProcess, auth: string) => call(node, 'GET', '/repo/connections', auth, { 'X-Forwarded-For': '10.7.1.1' }).then((r) => r.status);
      await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'ephemeral', password: 'ephemeral-pw-1', roles: ['user'] });
      await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'changer', password: 'changer-pw-old', roles: ['user'] });
      await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'barrier', password: 'barrier-pw-1', roles: ['user'] });
      // Verified (and so cached) on every node.
      for (const node of nodes) {
        expect(await conn(node, basic('ephemeral', 'ephemeral-pw-1'))).toBe(200);
        expect(await conn(node, basic('changer', 'changer-pw-old'))).toBe(200);
        expect(await conn(node, basic('barrier', 'barrier-pw-1'))).toBe(200);
      }
      // The barrier: its password changed in the database behind the gateway's back (no event), so the nodes go on
      // accepting the old one from their caches until an event about it reaches them.
      const db = new Client({ connectionString: databaseUrl });
      await db.connect();
      await db.query(`update users set password_hash = (select password_hash from users where username = 'changer') where username = 'barrier'`);
      await db.end();
      expect((await call(a, 'DELETE', '/admin/users/ephemeral')).status).toBe(200);
      expect((await call(a, 'PATCH', '/admin/users/changer', adminAuth(), {}, { password: 'changer-pw-new' })).status).toBe(200);
      // A has published both events before answering. The test publishes the barrier's after them on the same channel:
      // each node reads its one subscription in order, so a node that has dropped the barrier has handled both before it.
      const channel = `gw-${createHash('sha1').update(databaseUrl).digest('hex').slice(0, 12)}:events`;
      const redis = new Redis(redisUrl);
      try {
        expect(await redis.publish(channel, JSON.stringify({ from: 'multinode-test', event: { type: 'user-changed', username: 'barrier' } }))).toBeGreaterThanOrEqual(NODES);
      } finally {
        redis.disconnect();
      }
      for (const node of [b, c]) while ((await conn(node, basic('barrier', 'barrier-pw-1'))) !== 401);
      for (const node of [b, c]) {
        expect(await conn(node, basic('ephemeral', 'ephemeral-pw-1'))).toBe(401);
        expect(await conn(node, basic('changer', 'changer-pw-old'))).toBe(401);
        expect(await conn(node, basic('changer', 'changer-pw-new'))).toBe(200);
      }
    });
  }

  it('lists and downloads through B and C, whole and by Range, the same bytes of an export built on A; deleted through B, it is gone for all and from the store', async () => {
    const [a, b, c] = nodes;
    await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'exporter', password: 'exporter-pw-1', roles: ['user'] });
    const auth = basic('exporter', 'exporter-pw-1');
    // Two 3 MiB entries: above one 5 MiB part, so on S3 the zip is a multipart upload of two parts.
    const content = randomBytes(3 * MiB);
    const id = await document(a, 'one.bin', content, auth);
    const started = await call(a, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'docs', id }, { connId: 'docs', id, fileName: 'two.bin' }] });
    expect(started.status).toBe(202);
    const fileId = started.body.results.docId as string;
    const handle = await settled(b, auth, fileId);
    expect(handle).toMatchObject({ state: 'ready', ready: true, progress: { entriesTotal: 2, entriesDone: 2, errors: 0 } });
    expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toMatchObject({ state: 'ready', size: handle.size });

    const stored = await storage.readStored(fileId);
    expect(stored.length).toBe(handle.size);
    expect(stored.subarray(0, 4).toString('hex')).toBe('504b0304');
    expect(stored.includes(content.subarray(0, 4096))).toBe(true);
    const ranges: Array<[string, number, number]> = [
      ['bytes=100-5242979', 100, 5242979], // across the first part's end
      [`bytes=-1000`, handle.size - 1000, handle.size - 1],
    ];
    for (const node of [b, c]) {
      const zip = await call(node, 'GET', `/files/user/download?id=${fileId}`, auth);
      expect([zip.status, zip.body.length, sha256(zip.body)]).toEqual([200, handle.size, sha256(stored)]);
      for (const [range, first, last] of ranges) {
        const part = await call(node, 'GET', `/files/user/download?id=${fileId}`, auth, { Range: range });
        expect([part.status, part.headers['content-range'], sha256(part.body)]).toEqual([206, `bytes ${first}-${last}/${handle.size}`, sha256(stored.subarray(first, last + 1))]);
      }
    }
    if (!local) {
      // Nothing of it on any node's disk: each node's data folder is its own, and user files are not in it.
      for (let i = 0; i < NODES; i++) {
        const own = path.join(root, `data-${i}`, 'user-files');
        expect(fs.existsSync(own) ? fs.readdirSync(own) : []).toEqual([]);
      }
    }

    expect((await call(b, 'DELETE', `/files/user/delete?id=${fileId}`, auth)).status).toBe(200);
    expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toBeUndefined();
    for (const node of nodes) expect((await call(node, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(404);
    expect(await storage.leftovers([fileId])).toEqual([]);
  });

  it('audits downloads through A and through B, each node writing to the shared database; C reads both rows', async () => {
    const [a, b, c] = nodes;
    const content = randomBytes(100_000);
    const id = await document(a, 'audited.bin', content, adminAuth());
    // TRUST_PROXY=true: the forwarded address tells the two downloads apart.
    for (const [node, address] of [[a, '198.51.100.1'], [b, '198.51.100.2']] as const) {
      const got = await call(node, 'GET', `/repo/docs/file?id=${encodeURIComponent(id)}`, adminAuth(), { 'X-Forwarded-For': address });
      expect([got.status, sha256(got.body)]).toEqual([200, sha256(content)]);
    }
    // Each node writes its rows within its flush interval (1 s); C has never served this document.
    const rows = await waitFor(async () => {
      const listed = await call(c, 'GET', `/admin/audit?documentId=${encodeURIComponent(id)}`);
      expect(listed.status).toBe(200);
      return listed.body.results.length >= 2 ? (listed.body.results as Array<Record<string, unknown>>) : undefined;
    }, 'the audit rows of both nodes', 30_000);
    expect(rows.map((r) => [r.clientAddress, r.operation, r.connectorId, r.bytes, r.result, r.user]).sort()).toEqual([
      ['198.51.100.1', 'download', 'docs', content.length, 'complete', ADMIN.username],
      ['198.51.100.2', 'download', 'docs', content.length, 'complete', ADMIN.username],
    ]);
  });

  it('stops through B an export A is writing: ended at once for every node, its partial file left to A, which, thawed, discards it and leaves nothing behind', async () => {
    const [a, b, c] = nodes;
    const auth = basic('exporter', 'exporter-pw-1');
    const id = await document(a, 'stopped.bin', randomBytes(8 * MiB), auth);
    const small = await document(a, 'small.txt', Buffer.from('after the stop'), auth);
    const started = await call(a, 'POST', '/repo/batch', auth, {}, { batch: Array.from({ length: 20 }, (_, i) => ({ connId: 'docs', id, fileName: `stopped-${i}.bin` })) });
    const fileId = started.body.results.docId as string;
    await waitFor(async () => ((await storage.writing(fileId)) ? true : undefined), `export ${fileId} to be written`, 60_000);
    // Frozen while B stops it, A can neither finish it first nor discard it itself.
    a.child.kill('SIGSTOP');
    try {
      const stopped = await call(b, 'DELETE', `/files/user/stop?id=${fileId}`, auth);
      expect(stopped.body).toMatchObject({ success: true, results: 0 });
      expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toMatchObject({ state: 'stopped' });
      expect((await call(c, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(409);
      // A's lease runs: the partial file is A's to discard, since A may be sending a part (on S3 no abort is safe then).
      expect(await storage.writing(fileId)).toBe(true);
    } finally {
      a.child.kill('SIGCONT');
    }
    await storeEmptied([fileId], `the partial file of ${fileId} to be discarded`);
    // A builds one export at a time: the next one it takes is ready only once the stopped one has ended there.
    const after = await call(a, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'docs', id: small }] });
    expect(await settled(c, auth, after.body.results.docId as string)).toMatchObject({ state: 'ready' });
    expect(await storage.leftovers([fileId])).toEqual([]);
    expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toMatchObject({ state: 'stopped' });
    expect((await call(c, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(409);
  }, 120_000);

  it('stops through B an export waiting on A, and fails through the lease the export of A once A is killed', async () => {
    const [a, b, c] = nodes;
    const auth = basic('exporter', 'exporter-pw-1');
    const big = randomBytes(20 * MiB);
    const id = await document(a, 'big.bin', big, auth);
    // A builds one export at a time (GATEWAY_EXPORT_CONCURRENCY=1): the second waits behind the first.
    const first = await call(a, 'POST', '/repo/batch', auth, {}, { batch: Array.from({ length: 10 }, (_, i) => ({ connId: 'docs', id, fileName: `big-${i}.bin` })) });
    const second = await call(a, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'docs', id }] });
    const firstId = first.body.results.docId as string;
    const secondId = second.body.results.docId as string;
    // The first being written (on S3: a multipart upload open), frozen, A can neither finish the exports nor
    // renew their leases: a node that hangs, then dies.
    await waitFor(async () => ((await storage.writing(firstId)) ? true : undefined), `export ${firstId} to be written`, 60_000);
    a.child.kill('SIGSTOP');
    const states = async (node: GatewayProcess) => {
      const files = (await call(node, 'GET', '/files/user', auth)).body.results.files as any[];
      return Object.fromEntries(files.filter((f) => f.id === firstId || f.id === secondId).map((f) => [f.id === firstId ? 'first' : 'second', f.state]));
    };
    expect(await states(b)).toEqual({ first: 'running', second: 'running' });

    const stopped = await call(b, 'DELETE', `/files/user/stop?id=${secondId}`, auth);
    expect(stopped.body).toMatchObject({ success: true, results: 0 });
    expect((await states(c)).second).toBe('stopped');

    a.child.kill('SIGKILL');
    await a.exited;
    // Past A's lease (3 s), the lease check of B or C fails A's export with a message and removes its partial file
    // (on S3: aborts the upload A left open).
    let first_: any;
    for (let i = 0; ; i++) {
      first_ = (await call(i % 2 ? b : c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === firstId);
      if (first_.state !== 'running') break;
      await sleep(200);
    }
    expect(first_).toMatchObject({ state: 'failed', message: expect.stringMatching(/stopped answering/) });
    await storeEmptied([firstId, secondId], `the partial files of ${firstId} and ${secondId} to be removed`);
    expect((await call(c, 'GET', `/files/user/download?id=${firstId}`, auth)).status).toBe(409);

    // A comes back under its name and finds nothing of its own to fail: the database had the word.
    nodes[0] = await spawnGateway(env(0));
    expect(await states(nodes[0])).toEqual({ first: 'failed', second: 'stopped' });
  }, 180_000);

  it('deletes through B an export A is writing, then A dies: B discards the partial file itself once A\'s lease has run out', async () => {
    const [a, b, c] = nodes;
    const auth = basic('exporter', 'exporter-pw-1');
    const id = await document(a, 'orphaned.bin', randomBytes(8 * MiB), auth);
    const started = await call(a, 'POST', '/repo/batch', auth, {}, { batch: Array.from({ length: 20 }, (_, i) => ({ connId: 'docs', id, fileName: `orphaned-${i}.bin` })) });
    const fileId = started.body.results.docId as string;
    await waitFor(async () => ((await storage.writing(fileId)) ? true : undefined), `export ${fileId} to be written`, 60_000);
    a.child.kill('SIGSTOP');
    expect((await call(b, 'DELETE', `/files/user/delete?id=${fileId}`, auth)).status).toBe(200);
    expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toBeUndefined();
    expect(await storage.writing(fileId)).toBe(true);
    a.child.kill('SIGKILL');
    await a.exited;
    // Nobody else runs A's exports' lease check for a deleted one: B, which deleted it, discards it (on S3: aborts the upload).
    await storeEmptied([fileId], `the partial file of ${fileId} to be discarded by B`);
    nodes[0] = await spawnGateway(env(0));
  }, 120_000);

  if (local) {
    it('counts public link downloads exactly under parallel downloads spread over the nodes', async () => {
      const auth = basic('exporter', 'exporter-pw-1');
      const content = randomBytes(512 * 1024);
      const id = await document(next(), 'shared.bin', content, auth);
      const link = await call(next(), 'GET', `/files/external/link?internal=false&connectorId=docs&docId=${encodeURIComponent(id)}`, auth);
      expect(link.status).toBe(200);
      const key = link.body.results.key as string;
      const downloads = await Promise.all(Array.from({ length: 60 }, () => call(next(), 'GET', `/public/download?key=${encodeURIComponent(key)}`, '')));
      expect(downloads.every((d) => d.status === 200 && sha256(d.body) === sha256(content))).toBe(true);
      const listed = (await call(next(), 'GET', '/files/user', auth)).body.results.links.find((l: any) => l.id === key);
      expect(listed.used).toBe(60);
    });

    it('runs a job spread over the nodes, controlled through nginx; one node SIGKILLed mid-run, the run completes with exact counters', async () => {
      const jobs = (await call(PROXY, 'GET', '/admin/jobs')).body.results as Array<{ jobName: string; jobId: number }>;
      const jobId = jobs.find((j) => j.jobName === 'spread')!.jobId;
      expect((await call(PROXY, 'GET', `/job/service/${jobId}/start`)).status).toBe(200);
      const victim = nodes[2];
      // The nodes run in slices until the database shows 200 written; seen stopped with the run open, the victim dies mid-run.
      let row: { status: string; written: number } | undefined;
      await stopWhen(
        nodes.map((n) => n.child),
        async () => {
          [row] = await gatewayRows({ databaseUrl, sqliteFile: '' }, 'select status, written from job_runs where id = ?', [`${jobId}_1`]);
          return row !== undefined && (row.status !== 'RUNNING' || Number(row.written) >= 200);
        },
      );
      expect({ status: row?.status, midRun: Number(row?.written) >= 200 && Number(row?.written) < JOB_DOCS }).toEqual({ status: 'RUNNING', midRun: true });
      victim.child.kill('SIGKILL');
      await victim.exited;
      nodes.splice(2, 1);
      for (const n of nodes) n.child.kill('SIGCONT');
      let done: any;
      for (;;) {
        // Through the proxy, which still lists the dead node: nginx passes its share on to the others.
        done = (await call(PROXY, 'GET', `/job/service/${jobId}/status`)).body.results;
        if (!['RUNNING', 'PAUSING', 'ABORTING'].includes(done.status)) break;
        await sleep(50);
      }
      expect(done).toMatchObject({ status: 'COMPLETED', read: JOB_DOCS, written: JOB_DOCS, skipped: 0, failed: 0 });
      const copied = listTree(path.join(root, 'jobdst', 'out'));
      expect(Object.keys(copied)).toHaveLength(JOB_DOCS);
      expect(copied).toEqual(listTree(path.join(root, 'jobsrc', 'in')));
    }, 240_000);

    it('runs a schedule of every minute once a minute for five minutes across the nodes, one node SIGKILLed in the middle: five runs, no duplicate (issue 35)', async () => {
      while (nodes.length < NODES) nodes.push(await spawnGateway(env(nodes.length)));
      writeTree(path.join(root, 'jobsrc', 'sched'), Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`doc-${i}.txt`, `scheduled ${i}\n`])));
      const definition = (enabled: boolean) => ({
        jobName: 'every-minute',
        source: { connectorId: 'src', folderPath: '/sched' },
        target: { connectorId: 'dst', folderPath: '/sched-out' },
        schedule: { cron: '* * * * *', enabled },
      });
      const created = await call(PROXY, 'POST', '/admin/jobs', adminAuth(), {}, definition(true));
      expect(created.status).toBe(201);
      const jobId = created.body.results.jobId as number;
      const firstDue = Date.parse(created.body.results.nextRun as string);
      const statusOf = async () => (await call(nodes[0], 'GET', `/job/service/${jobId}/status`)).body.results as { jobRunId: string | null; status: string };
      const runNumber = (s: { jobRunId: string | null }) => (s.jobRunId === null ? 0 : Number(s.jobRunId.split('_')[1]));
      let killed = false;
      let status = await statusOf();
      // Five due starts: firstDue and the four minutes after it. No node is asked to start anything.
      while (!(runNumber(status) === 5 && status.status === 'COMPLETED')) {
        expect(runNumber(status)).toBeLessThanOrEqual(5);
        if (!killed && runNumber(status) === 3 && status.status === 'COMPLETED') {
          // In the middle, shortly before the fourth start falls due: the node may be the one about to claim it.
          await sleep(Math.max(0, firstDue + 3 * 60_000 - 1500 - Date.now()));
          const victim = nodes.splice(2, 1)[0];
          victim.child.kill('SIGKILL');
          await victim.exited;
          killed = true;
        }
        await sleep(500);
        status = await statusOf();
      }
      expect(killed).toBe(true);
      // Stopped before the sixth start is due (a run takes well under a second; the next start is a minute away).
      expect((await call(nodes[1], 'PUT', `/admin/jobs/${jobId}`, adminAuth(), {}, definition(false))).status).toBe(200);
      const job = (await call(nodes[1], 'GET', `/admin/jobs/${jobId}`)).body.results;
      expect(job.nextRun).toBeNull();
      expect(job.scheduleState).toEqual({ lastDue: new Date(firstDue + 4 * 60_000).toISOString(), lastSkipped: null, queued: null });
      // A duplicate start of any of the five would be a sixth run (each run ends long before the next due time).
      await sleep(Math.max(0, firstDue + 5 * 60_000 + 5000 - Date.now()));
      expect(await statusOf()).toMatchObject({ jobRunId: `${jobId}_5`, status: 'COMPLETED' });
      expect(Object.keys(listTree(path.join(root, 'jobdst', 'sched-out')))).toHaveLength(5);
    }, 600_000);
  }
});
