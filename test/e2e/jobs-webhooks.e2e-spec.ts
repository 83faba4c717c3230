import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { ADMIN, adminAuth, basic } from '../support/gateway';
import { REPO_ROOT, ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { MODE, REDIS_URL, sleep, writeTree } from './jobs-helpers';

/** The endpoint is down this long from the test's start (503, then no answer, then reset connections), then up. */
const DOWN_MS = 180_000;
const SECRET = 'e2e-webhook-secret-0123456789';
const ACTIVE = ['RUNNING', 'PAUSING', 'ABORTING'];

type Verify = (secret: string, header: string, rawBody: string) => boolean;

/** The verification recipe exactly as the webhooks README documents it, run as a receiver would. */
function documentedRecipe(): Verify {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'apps/api/src/webhooks/README.md'), 'utf8');
  const block = /```js\n(\/\/ verify-gateway-signature\.js[\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('the README has no verify-gateway-signature.js block');
  const module = { exports: {} as { verifyGatewaySignature?: Verify } };
  (vm.runInThisContext(`(function (require, module) {\n${block[1]}\n})`) as (r: NodeJS.Require, m: typeof module) => void)(require, module);
  return module.exports.verifyGatewaySignature!;
}

interface Request {
  path: string;
  at: number;
  eventId: string;
  event: string;
  attempt: number;
  body: { id: string; type: string; data: { jobId: number; runId: string; status: string } };
  answered: number | 'hang' | 'reset';
}

/** A real endpoint on 127.0.0.1: /hook is down for DOWN_MS after `start`, /gone always answers 410. */
function receiver(verify: Verify) {
  const requests: Request[] = [];
  const start = Date.now();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw) as Request['body'];
      const record = (answered: Request['answered']) =>
        requests.push({
          path: req.url ?? '',
          at: Date.now(),
          eventId: String(req.headers['gateway-event-id']),
          event: String(req.headers['gateway-event']),
          attempt: Number(req.headers['gateway-delivery-attempt']),
          body,
          answered,
        });
      if (req.url === '/gone') {
        record(410);
        res.writeHead(410).end();
        return;
      }
      const down = Date.now() - start;
      if (down < DOWN_MS / 3) {
        record(503);
        res.writeHead(503).end();
      } else if (down < (2 * DOWN_MS) / 3) {
        record('hang'); // never answered: the gateway's 10-s time-out ends it
      } else if (down < DOWN_MS) {
        record('reset');
        req.socket.destroy();
      } else {
        const ok = verify(SECRET, String(req.headers['gateway-signature']), raw) && body.id === req.headers['gateway-event-id'];
        record(ok ? 200 : 400);
        res.writeHead(ok ? 200 : 400).end();
      }
    });
  });
  return { server, requests, start };
}

describe(`Webhooks of run events (${MODE} mode)`, () => {
  let root: string;
  let databaseUrl: string | undefined;
  let hooks: ReturnType<typeof receiver>;
  const processes: GatewayProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-webhooks-'));
    databaseUrl = await createTestDatabaseUrl();
  });
  afterAll(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    hooks?.server.closeAllConnections();
    hooks?.server.close();
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function call(gw: GatewayProcess, method: string, p: string, body?: unknown, auth = adminAuth()) {
    const res = await fetch(`${gw.baseUrl}/api${p}`, {
      method,
      headers: { Authorization: auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { success: boolean; message?: string; results: any; error?: any } };
  }

  async function ended(gw: GatewayProcess, jobId: number): Promise<string> {
    for (;;) {
      const s = (await call(gw, 'GET', `/job/service/${jobId}/status`)).body.results as { status: string };
      if (!ACTIVE.includes(s.status)) return s.status;
      await sleep(50);
    }
  }

  const EVENT_OF: Record<string, string> = { COMPLETED: 'run.completed', COMPLETED_WITH_ERRORS: 'run.completedWithErrors', FAILED: 'run.failed', ABORTED: 'run.aborted' };

  it(
    'an endpoint down for 3 minutes, then up, receives every event once, in order per job, signed as documented; 4xx is not retried; a restart keeps the pending deliveries',
    async () => {
      hooks = receiver(documentedRecipe());
      await new Promise<void>((resolve) => hooks.server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(hooks.server.address() as AddressInfo).port}`;

      const files: Record<string, string> = {};
      for (let i = 0; i < 20; i++) files[`small/doc-${i}.txt`] = `document ${i}\n`;
      for (let i = 0; i < 3000; i++) files[`large/f${i % 5}/doc-${i}.txt`] = `document ${i}\n`;
      writeTree(path.join(root, 'src'), files);
      fs.writeFileSync(
        path.join(root, 'gateway.yaml'),
        `connectors:
  - {id: src, typeId: filesystem, params: {root: ${root}/src}}
  - {id: dst, typeId: filesystem, params: {root: ${root}/dst}}
webhooks:
  - url: ${base}/hook
    events: [run.started, run.completed, run.failed, run.completedWithErrors, run.aborted]
    secret: \${HOOK_SECRET}
`,
      );
      const env: Record<string, string> = {
        GATEWAY_DATA_DIR: path.join(root, 'data'),
        GATEWAY_CONFIG: path.join(root, 'gateway.yaml'),
        GATEWAY_ADMIN_USER: ADMIN.username,
        GATEWAY_ADMIN_PASSWORD: ADMIN.password,
        GATEWAY_JOB_CONCURRENCY: '2',
        GATEWAY_JOB_LOCAL_CONCURRENCY: '2',
        HOOK_SECRET: SECRET,
        // Retries every 2 s doubling up to 15 s (defaults 10 s and 1 h): they land within the test's window.
        GATEWAY_WEBHOOK_RETRY_BASE_MS: '2000',
        GATEWAY_WEBHOOK_RETRY_MAX_MS: '15000',
        LOG_LEVEL: 'warn',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        ...(REDIS_URL ? { REDIS_URL } : {}),
      };
      const a = await spawnGateway(env);
      processes.push(a);

      // The admin API: validation naming the field, admin only, the file's webhook read-only.
      const listed = (await call(a, 'GET', '/admin/webhooks')).body.results as Array<{ id: string; url: string; origin: string; events: string[] }>;
      expect(listed).toEqual([expect.objectContaining({ url: `${base}/hook`, origin: 'config', events: expect.arrayContaining(['run.started', 'run.aborted']) })]);
      expect(JSON.stringify(listed)).not.toContain(SECRET);
      const fromFile = listed[0].id;
      for (const [body, parameter] of [
        [{ url: `${base}/x`, events: ['run.paused'], secret: SECRET }, 'events'],
        [{ url: `${base}/x`, events: [], secret: SECRET }, 'events'],
        [{ url: 'ftp://127.0.0.1/x', events: ['run.failed'], secret: SECRET }, 'url'],
        [{ url: `${base}/x`, events: ['run.failed'], secret: 'short' }, 'secret'],
        [{ url: `${base}/x`, events: ['run.failed'] }, 'secret'],
        [{ url: `${base}/x`, events: ['run.failed'], secret: SECRET, retries: 3 }, 'retries'],
      ] as const) {
        const refused = await call(a, 'POST', '/admin/webhooks', body);
        expect({ status: refused.status, parameter: refused.body.error?.parameter }).toEqual({ status: 400, parameter });
      }
      expect((await call(a, 'POST', '/admin/users', { username: 'reader', password: 'reader-password-1', roles: ['user'] })).status).toBe(201);
      expect((await call(a, 'GET', '/admin/webhooks', undefined, basic('reader', 'reader-password-1'))).status).toBe(403);
      expect((await call(a, 'POST', '/admin/webhooks', { url: `${base}/gone`, events: ['run.failed'], secret: SECRET }, basic('reader', 'reader-password-1'))).status).toBe(403);
      const gone = await call(a, 'POST', '/admin/webhooks', { url: `${base}/gone`, events: ['run.completed', 'run.failed'], secret: SECRET });
      expect(gone.status).toBe(201);
      expect(gone.body.results).toMatchObject({ url: `${base}/gone`, origin: 'api', events: ['run.completed', 'run.failed'], pendingDeliveries: 0 });
      expect(gone.body.results).not.toHaveProperty('secret');
      const goneId = gone.body.results.id as string;
      expect((await call(a, 'GET', `/admin/webhooks/${goneId}`)).body.results).toMatchObject({ id: goneId, url: `${base}/gone` });
      const spare = (await call(a, 'POST', '/admin/webhooks', { url: `${base}/spare`, events: ['run.started'], secret: SECRET })).body.results.id as string;
      expect((await call(a, 'DELETE', `/admin/webhooks/${spare}`)).body.results).toMatchObject({ id: spare });
      expect((await call(a, 'GET', `/admin/webhooks/${spare}`)).status).toBe(404);
      expect((await call(a, 'DELETE', `/admin/webhooks/${fromFile}`)).status).toBe(409);

      // Jobs: each moves through several events while the endpoint is down.
      const define = async (name: string, folder: string) =>
        (await call(a, 'POST', '/admin/jobs', { jobName: name, source: { connectorId: 'src', folderPath: folder }, target: { connectorId: 'dst', folderPath: `/${name}` } })).body.results
          .jobId as number;
      const expected = new Map<number, Array<{ event: string; runId: string }>>();
      const expect_ = (jobId: number, event: string, runId: string) => expected.set(jobId, [...(expected.get(jobId) ?? []), { event, runId }]);
      const once = await define('once', '/small');
      const failing = await define('failing', '/missing');
      const aborted = await define('aborted', '/large');
      for (const run of [1, 2]) {
        await call(a, 'GET', `/job/service/${once}/start`);
        expect_(once, 'run.started', `${once}_${run}`);
        expect_(once, EVENT_OF[await ended(a, once)], `${once}_${run}`);
      }
      await call(a, 'GET', `/job/service/${failing}/start`);
      expect_(failing, 'run.started', `${failing}_1`);
      expect(await ended(a, failing)).toBe('FAILED');
      expect_(failing, 'run.failed', `${failing}_1`);
      expect((await call(a, 'GET', `/job/service/${failing}/resume`)).status).toBe(200);
      expect_(failing, 'run.started', `${failing}_1`);
      expect(await ended(a, failing)).toBe('FAILED');
      expect_(failing, 'run.failed', `${failing}_1`);
      await call(a, 'GET', `/job/service/${aborted}/start`);
      expect_(aborted, 'run.started', `${aborted}_1`);
      // Aborted while it runs, or, if it finished first, completed: either way its event is expected.
      await call(a, 'GET', `/job/service/${aborted}/abort`);
      expect_(aborted, EVENT_OF[await ended(a, aborted)], `${aborted}_1`);
      const total = [...expected.values()].reduce((n, list) => n + list.length, 0);

      // The endpoint is down: deliveries wait in the outbox with their attempts recorded; /gone's 410 is final at once.
      const attemptsOf = async (gw: GatewayProcess, id: string) => (await call(gw, 'GET', `/admin/webhooks/${id}/deliveries?limit=1000`)).body.results as Array<Record<string, any>>;
      for (;;) {
        const tried = await attemptsOf(a, fromFile);
        if (tried.some((t) => t.statusCode === 503 && t.attempt >= 2)) {
          expect(tried[0]).toMatchObject({ event: expect.any(String), eventId: expect.stringMatching(/^evt_/), outcome: 'retry', nextAttempt: expect.any(String) });
          break;
        }
        await sleep(500);
      }
      expect((await call(a, 'GET', `/admin/webhooks/${fromFile}`)).body.results.pendingDeliveries).toBe(total);

      // A restart in the middle of the outage: the first process is killed outright, another takes over.
      expect(Date.now() - hooks.start).toBeLessThan(DOWN_MS / 3);
      a.child.kill('SIGKILL');
      await a.exited;
      const b = await spawnGateway(env);
      processes.push(b);
      expect((await call(b, 'GET', `/admin/webhooks/${fromFile}`)).body.results.pendingDeliveries).toBe(total);

      // Up after DOWN_MS: every event arrives.
      const accepted = () => hooks.requests.filter((r) => r.path === '/hook' && r.answered === 200);
      const deadline = hooks.start + DOWN_MS + 90_000;
      while (accepted().length < total && Date.now() < deadline) await sleep(500);
      await sleep(3000); // anything sent twice would arrive now
      const got = accepted();
      expect(hooks.requests.filter((r) => r.answered === 400)).toEqual([]);
      expect(got).toHaveLength(total);
      expect(new Set(got.map((r) => r.eventId)).size).toBe(total);
      expect(got.every((r) => r.at >= hooks.start + DOWN_MS)).toBe(true);
      for (const [jobId, events] of expected) {
        const mine = got.filter((r) => r.body.data.jobId === jobId);
        expect(mine.map((r) => ({ event: r.event, runId: r.body.data.runId }))).toEqual(events);
        expect(mine.map((r) => r.body.type)).toEqual(events.map((e) => e.event));
      }
      // Every event was written by the first process and delivered by the second: the outbox kept them across the restart.
      // The first of each job was tried during the outage with the same id; the later ones waited behind it (attempt 1 once up).
      const down = hooks.requests.filter((r) => r.path === '/hook' && r.answered !== 200);
      expect(down.map((r) => r.answered)).toEqual(expect.arrayContaining([503, 'hang', 'reset']));
      expect(down.some((r) => r.at > hooks.start + (2 * DOWN_MS) / 3)).toBe(true);
      for (const jobId of expected.keys()) {
        const [first, ...later] = got.filter((r) => r.body.data.jobId === jobId);
        expect(first.attempt).toBeGreaterThan(1);
        // (A set: an attempt in flight when the first process was killed is made again under its number.)
        const tried = [...new Set(down.filter((r) => r.eventId === first.eventId).map((r) => r.attempt))].sort((x, y) => x - y);
        expect(tried).toEqual(Array.from({ length: first.attempt - 1 }, (_, i) => i + 1));
        for (const r of later) expect(down.filter((d) => d.eventId === r.eventId)).toEqual([]);
      }

      // 410 is not retried: /gone saw each of its events once, and its history says failed.
      const goneRequests = hooks.requests.filter((r) => r.path === '/gone');
      const goneWanted = [...expected.values()].flat().filter((e) => e.event === 'run.completed' || e.event === 'run.failed');
      expect(goneRequests).toHaveLength(goneWanted.length);
      expect(new Set(goneRequests.map((r) => r.eventId)).size).toBe(goneWanted.length);
      const goneAttempts = await attemptsOf(b, goneId);
      expect(goneAttempts).toHaveLength(goneWanted.length);
      expect(goneAttempts.every((t) => t.statusCode === 410 && t.outcome === 'failed' && t.attempt === 1 && t.nextAttempt === null)).toBe(true);

      // The endpoint's history: failures with their reasons, then one delivery per event; nothing pending.
      const history = await attemptsOf(b, fromFile);
      expect(history.filter((t) => t.outcome === 'delivered').map((t) => t.eventId).sort()).toEqual(got.map((r) => r.eventId).sort());
      expect(history.some((t) => t.error === 'timed out after 10000 ms')).toBe(true);
      expect(history.some((t) => t.statusCode === null && t.error !== 'timed out after 10000 ms')).toBe(true);
      expect((await call(b, 'GET', `/admin/webhooks/${fromFile}`)).body.results.pendingDeliveries).toBe(0);
      const page = await call(b, 'GET', `/admin/webhooks/${fromFile}/deliveries?limit=2`);
      expect(page.body.results).toEqual(history.slice(0, 2));
      const next = await call(b, 'GET', `/admin/webhooks/${fromFile}/deliveries?limit=2&cursor=${page.headers.get('x-next-cursor')}`);
      expect(next.body.results).toEqual(history.slice(2, 4));
      expect((await call(b, 'GET', `/admin/webhooks/${fromFile}/deliveries?limt=2`)).status).toBe(400);
    },
    DOWN_MS + 180_000,
  );
});
