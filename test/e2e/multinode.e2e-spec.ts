import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { startEngines, stopEngines } from '../engines';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { ADMIN, adminAuth, basic } from '../support/gateway';
import { sha256 } from '../support/files';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { listTree, writeTree } from './jobs-helpers';

/*
 * Three gateway processes (the built main.js) on one PostgreSQL and one Redis, sharing the user-file folder
 * and the repository folder, with requests spread round-robin over them as a load balancer would. Runs in
 * the PostgreSQL + Redis pass of scripts/test.sh (GATEWAY_TEST_POSTGRES_URL, GATEWAY_TEST_REDIS_URL) and
 * starts its own PostgreSQL and Redis through the engine harness when they are not given. The nodes run under
 * the context path /gateway, and Debian's nginx with the shipped docker/nginx.conf balances over them
 * round-robin (`PROXY`); most tests address a node directly to say which one answers.
 */

/** Through nginx, round-robin over the nodes, as a client of the deployment sees it. */
const PROXY = 'proxy' as const;

const NODES = 3;
const JOB_DOCS = 2000;

interface Answer {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createDatabase(adminUrl: string): Promise<string> {
  const name = `gw_multinode_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(adminUrl: string, databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

describe('Three gateway nodes on one PostgreSQL and one Redis (issue 17)', () => {
  let root: string;
  let pgAdmin: string;
  let redisUrl: string;
  let databaseUrl: string;
  let ownEngines = false;
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

  beforeAll(async () => {
    ensureBuilt();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-multinode-'));
    const missing = [
      ...(process.env.GATEWAY_TEST_POSTGRES_URL ? [] : (['postgres'] as const)),
      ...(process.env.GATEWAY_TEST_REDIS_URL ? [] : (['redis'] as const)),
    ];
    const started = missing.length > 0 ? await startEngines(missing) : {};
    ownEngines = missing.length > 0;
    pgAdmin = process.env.GATEWAY_TEST_POSTGRES_URL ?? (started as { postgres: { url: string } }).postgres.url;
    redisUrl = process.env.GATEWAY_TEST_REDIS_URL ?? (started as { redis: { url: string } }).redis.url;
    databaseUrl = await createDatabase(pgAdmin);

    writeTree(path.join(root, 'jobsrc'), Object.fromEntries(Array.from({ length: JOB_DOCS }, (_, i) => [`in/f${i % 4}/doc-${i}.txt`, `document ${i}\n`])));
    fs.mkdirSync(path.join(root, 'repo'), { recursive: true });
    fs.writeFileSync(
      path.join(root, 'gateway.yaml'),
      `connectors:
  - {id: fs, typeId: filesystem, params: {root: ${root}/repo}}
  - {id: src, typeId: filesystem, params: {root: ${root}/jobsrc}}
  - {id: dst, typeId: filesystem, params: {root: ${root}/jobdst}}
jobs:
  - jobName: spread
    source: {connectorId: src, folderPath: /in}
    target: {connectorId: dst, folderPath: /out}
`,
    );
    env = (i: number) => ({
      GATEWAY_DATA_DIR: path.join(root, `data-${i}`),
      GATEWAY_USER_FILES_DIR: path.join(root, 'user-files'),
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
      LOG_LEVEL: 'warn',
    });
    // The first node migrates the database; the others then start on it.
    nodes.push(await spawnGateway(env(0)));
    nodes.push(...(await Promise.all([1, 2].map((i) => spawnGateway(env(i))))));
    nginx = await startNginx({ upstreams: nodes.map((n) => ({ port: Number(new URL(n.baseUrl).port) })) });
  }, 300_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const n of nodes) await n.stop('SIGKILL');
    if (databaseUrl) await dropDatabase(pgAdmin, databaseUrl).catch(() => undefined);
    if (ownEngines) await stopEngines();
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
    fs.writeFileSync(path.join(root, 'repo', 'via-proxy.bin'), content);
    const id = (await call(PROXY, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=via-proxy.bin', auth)).body.results.id as string;
    const started = await call(PROXY, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'fs', id }] });
    expect(started.status).toBe(202);
    const fileId = started.body.results.docId as string;
    let handle: any;
    for (;;) {
      handle = (await call(PROXY, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId);
      if (handle.state !== 'running') break;
      await sleep(50);
    }
    expect(handle).toMatchObject({ state: 'ready', progress: { entriesTotal: 1, entriesDone: 1, errors: 0 } });
    // Three downloads: each node serves it once.
    for (let i = 0; i < 3; i++) {
      const zip = await call(PROXY, 'GET', `/files/user/download?id=${fileId}`, auth);
      expect([zip.status, zip.body.length]).toEqual([200, handle.size]);
    }
    expect((await call(PROXY, 'DELETE', `/files/user/delete?id=${fileId}`, auth)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(PROXY, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(404);

    const link = await call(PROXY, 'GET', `/files/external/link?internal=false&connectorId=fs&docId=${encodeURIComponent(id)}`, auth);
    const key = link.body.results.key as string;
    const downloads = await Promise.all(Array.from({ length: 30 }, () => call(PROXY, 'GET', `/public/download?key=${encodeURIComponent(key)}`, '')));
    expect(downloads.every((d) => d.status === 200 && sha256(d.body) === sha256(content))).toBe(true);
    expect((await call(PROXY, 'GET', '/files/user', auth)).body.results.links.find((l: any) => l.id === key).used).toBe(30);
  });

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

  it('refuses on the other nodes, within 1 s, a user deleted or a password changed on one node', async () => {
    const [a, b, c] = nodes;
    const conn = (node: GatewayProcess, auth: string) => call(node, 'GET', '/repo/connections', auth, { 'X-Forwarded-For': '10.7.1.1' }).then((r) => r.status);
    await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'ephemeral', password: 'ephemeral-pw-1', roles: ['user'] });
    await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'changer', password: 'changer-pw-old', roles: ['user'] });
    // Verified (and so cached) on every node.
    for (const node of nodes) {
      expect(await conn(node, basic('ephemeral', 'ephemeral-pw-1'))).toBe(200);
      expect(await conn(node, basic('changer', 'changer-pw-old'))).toBe(200);
    }
    expect((await call(a, 'DELETE', '/admin/users/ephemeral')).status).toBe(200);
    expect((await call(a, 'PATCH', '/admin/users/changer', adminAuth(), {}, { password: 'changer-pw-new' })).status).toBe(200);
    await sleep(1000);
    for (const node of [b, c]) {
      expect(await conn(node, basic('ephemeral', 'ephemeral-pw-1'))).toBe(401);
      expect(await conn(node, basic('changer', 'changer-pw-old'))).toBe(401);
      expect(await conn(node, basic('changer', 'changer-pw-new'))).toBe(200);
    }
  });

  it('lists, downloads and deletes through B an export built on A', async () => {
    const [a, b, c] = nodes;
    await call(a, 'POST', '/admin/users', adminAuth(), {}, { username: 'exporter', password: 'exporter-pw-1', roles: ['user'] });
    const auth = basic('exporter', 'exporter-pw-1');
    const content = randomBytes(256 * 1024);
    fs.writeFileSync(path.join(root, 'repo', 'one.bin'), content);
    const id = (await call(a, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=one.bin', auth)).body.results.id as string;
    const started = await call(a, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'fs', id }, { connId: 'fs', id, fileName: 'two.bin' }] });
    expect(started.status).toBe(202);
    const fileId = started.body.results.docId as string;
    let handle: any;
    for (;;) {
      handle = (await call(b, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId);
      if (handle.state !== 'running') break;
      await sleep(50);
    }
    expect(handle).toMatchObject({ state: 'ready', ready: true, progress: { entriesTotal: 2, entriesDone: 2, errors: 0 } });
    const zip = await call(b, 'GET', `/files/user/download?id=${fileId}`, auth);
    expect(zip.status).toBe(200);
    expect(zip.body.length).toBe(handle.size);
    expect((zip.body as Buffer).subarray(0, 4).toString('hex')).toBe('504b0304');
    expect((zip.body as Buffer).includes(content.subarray(0, 4096))).toBe(true);
    expect((await call(b, 'DELETE', `/files/user/delete?id=${fileId}`, auth)).status).toBe(200);
    expect((await call(c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === fileId)).toBeUndefined();
    expect((await call(a, 'GET', `/files/user/download?id=${fileId}`, auth)).status).toBe(404);
    expect(fs.readdirSync(path.join(root, 'user-files')).filter((n) => n.startsWith(fileId))).toEqual([]);
  });

  it('stops through B an export waiting on A, and fails through the lease the export of A once A is killed', async () => {
    const [a, b, c] = nodes;
    const auth = basic('exporter', 'exporter-pw-1');
    const big = randomBytes(20 * 1024 * 1024);
    fs.writeFileSync(path.join(root, 'repo', 'big.bin'), big);
    const id = (await call(a, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=big.bin', auth)).body.results.id as string;
    // A builds one export at a time (GATEWAY_EXPORT_CONCURRENCY=1): the second waits behind the first.
    const first = await call(a, 'POST', '/repo/batch', auth, {}, { batch: Array.from({ length: 10 }, (_, i) => ({ connId: 'fs', id, fileName: `big-${i}.bin` })) });
    const second = await call(a, 'POST', '/repo/batch', auth, {}, { batch: [{ connId: 'fs', id }] });
    // Frozen, A can neither finish them nor renew their leases: a node that hangs, then dies.
    a.child.kill('SIGSTOP');
    const firstId = first.body.results.docId as string;
    const secondId = second.body.results.docId as string;
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
    // Past A's lease (3 s), the lease check of B or C fails A's export with a message and removes its partial file.
    let first_: any;
    for (let i = 0; ; i++) {
      first_ = (await call(i % 2 ? b : c, 'GET', '/files/user', auth)).body.results.files.find((f: any) => f.id === firstId);
      if (first_.state !== 'running') break;
      await sleep(200);
    }
    expect(first_).toMatchObject({ state: 'failed', message: expect.stringMatching(/stopped answering/) });
    expect(fs.readdirSync(path.join(root, 'user-files')).filter((n) => n.startsWith(firstId) || n.startsWith(secondId))).toEqual([]);
    expect((await call(c, 'GET', `/files/user/download?id=${firstId}`, auth)).status).toBe(409);

    // A comes back under its name and finds nothing of its own to fail: the database had the word.
    nodes[0] = await spawnGateway(env(0));
    expect(await states(nodes[0])).toEqual({ first: 'failed', second: 'stopped' });
  }, 120_000);

  it('counts public link downloads exactly under parallel downloads spread over the nodes', async () => {
    const auth = basic('exporter', 'exporter-pw-1');
    const content = randomBytes(512 * 1024);
    fs.writeFileSync(path.join(root, 'repo', 'shared.bin'), content);
    const id = (await call(next(), 'GET', '/repo/fs/idbypath?folderPath=/&fileName=shared.bin', auth)).body.results.id as string;
    const link = await call(next(), 'GET', `/files/external/link?internal=false&connectorId=fs&docId=${encodeURIComponent(id)}`, auth);
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
    for (;;) {
      const s = (await call(nodes[0], 'GET', `/job/service/${jobId}/status`)).body.results;
      if (s.written >= 200 || s.status !== 'RUNNING') break;
      await sleep(20);
    }
    victim.child.kill('SIGKILL');
    await victim.exited;
    nodes.splice(2, 1);
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
});
