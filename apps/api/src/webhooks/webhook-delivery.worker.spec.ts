import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JobsRepository, WebhooksRepository } from '@gateway/persistence';
import { useTempDatabase } from '../../../../test/support/temp-database';
import type { GatewayConfig } from '../config/gateway-config';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { verifySignature } from './webhook-signature';

const SECRET = 'worker-spec-secret-0123';

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real endpoint: answers each path with the status its handler gives, after `delayMs`. */
async function endpoint(answer: (path: string, seen: Seen[]) => number | 'hang', delayMs = 0) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = answer(req.url ?? '', seen);
      if (status !== 'hang') setTimeout(() => res.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, seen, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('WebhookDeliveryWorker', () => {
  const database = useTempDatabase();
  let jobs: JobsRepository;
  let hooks: WebhooksRepository;
  let worker: WebhookDeliveryWorker | undefined;

  beforeEach(() => {
    jobs = new JobsRepository(database());
    hooks = new WebhooksRepository(database());
  });
  afterEach(async () => {
    await worker?.beforeApplicationShutdown();
    worker = undefined;
  });

  function start(settings: Partial<GatewayConfig['webhooks']> = {}) {
    const webhooks = { definitions: [], timeoutMs: 2000, retryBaseMs: 100, retryMaxMs: 200, retryWindowMs: 60_000, pollMs: 50, concurrency: 4, retentionDays: 0, ...settings };
    worker = new WebhookDeliveryWorker(hooks, { webhooks, nodeId: 'spec-node' });
    worker.onApplicationBootstrap();
    return worker;
  }

  async function completedRun(name: string) {
    const jobId = (await jobs.insertJob({ name, group: 'g', origin: 'api', definition: {}, now: 1 }))!;
    const run = await jobs.createRun(jobId, { kind: 'start', startedBy: 'admin', now: Date.now() }, async () => []);
    await jobs.transition(run.id, (locked) => locked.change({ status: 'COMPLETED', endTime: Date.now() }));
    return { jobId, runId: run.id };
  }

  async function until(check: () => boolean | Promise<boolean>) {
    while (!(await check())) await new Promise((r) => setTimeout(r, 20));
  }

  it('POSTs each event signed, with its id and name, and records the attempt', async () => {
    const ep = await endpoint(() => 204);
    try {
      await hooks.saveWebhook({ id: 'w', url: `${ep.base}/in`, secret: SECRET, origin: 'api', events: ['run.started', 'run.completed'] }, 1);
      const { jobId, runId } = await completedRun('copy');
      start();
      await until(() => ep.seen.length === 2);
      const [started, completed] = ep.seen;
      for (const s of ep.seen) {
        expect(s.headers['content-type']).toBe('application/json');
        expect(verifySignature(SECRET, String(s.headers['gateway-signature']), s.body, Math.floor(Date.now() / 1000))).toBe(true);
        expect(s.headers['gateway-delivery-attempt']).toBe('1');
        expect(JSON.parse(s.body)).toMatchObject({ id: s.headers['gateway-event-id'], type: s.headers['gateway-event'] });
      }
      expect(JSON.parse(started.body)).toMatchObject({ type: 'run.started', data: { jobId, jobName: 'copy', runId, status: 'RUNNING', endTime: null } });
      expect(JSON.parse(completed.body)).toMatchObject({ type: 'run.completed', data: { jobId, runId, status: 'COMPLETED', counters: { read: 0, written: 0 } } });
      await until(async () => (await hooks.pendingCount('w')) === 0);
      const attempts = await hooks.listAttempts('w', { limit: 10 });
      expect(attempts.map((a) => [a.event, a.statusCode, a.outcome, a.attempt])).toEqual([
        ['run.completed', 204, 'delivered', 1],
        ['run.started', 204, 'delivered', 1],
      ]);
    } finally {
      await ep.close();
    }
  });

  it('retries a 5xx and a time-out with the same event id, never a 4xx; a later event of the job waits for the earlier', async () => {
    const ep = await endpoint((path, seen) => {
      if (path === '/gone') return 410;
      const tries = seen.filter((s) => s.path === path).length;
      return tries === 1 ? 503 : tries === 2 ? 'hang' : 200;
    });
    try {
      await hooks.saveWebhook({ id: 'flaky', url: `${ep.base}/flaky`, secret: SECRET, origin: 'api', events: ['run.started', 'run.completed'] }, 1);
      await hooks.saveWebhook({ id: 'gone', url: `${ep.base}/gone`, secret: SECRET, origin: 'api', events: ['run.completed'] }, 1);
      await completedRun('copy');
      start({ timeoutMs: 1000 });
      await until(async () => (await hooks.pendingCount('flaky')) === 0 && (await hooks.pendingCount('gone')) === 0);
      const flaky = ep.seen.filter((s) => s.path === '/flaky').map((s) => [s.headers['gateway-event'], s.headers['gateway-delivery-attempt']]);
      expect(flaky).toEqual([
        ['run.started', '1'],
        ['run.started', '2'],
        ['run.started', '3'],
        ['run.completed', '1'],
      ]);
      expect(new Set(ep.seen.filter((s) => s.headers['gateway-event'] === 'run.started').map((s) => s.headers['gateway-event-id'])).size).toBe(1);
      const history = await hooks.listAttempts('flaky', { limit: 10 });
      expect(history.map((a) => [a.event, a.attempt, a.statusCode, a.error, a.outcome])).toEqual([
        ['run.completed', 1, 200, null, 'delivered'],
        ['run.started', 3, 200, null, 'delivered'],
        ['run.started', 2, null, 'timed out after 1000 ms', 'retry'],
        ['run.started', 1, 503, null, 'retry'],
      ]);
      expect(history[2].nextAttemptAt).toBeGreaterThan(history[2].attemptedAt);
      expect(ep.seen.filter((s) => s.path === '/gone')).toHaveLength(1);
      expect((await hooks.listAttempts('gone', { limit: 10 })).map((a) => [a.statusCode, a.outcome, a.nextAttemptAt])).toEqual([[410, 'failed', null]]);
    } finally {
      await ep.close();
    }
  });

  it('records an unreachable endpoint as a network error, and gives up once the retry window is over', async () => {
    const ep = await endpoint(() => 200);
    await ep.close();
    await hooks.saveWebhook({ id: 'dead', url: `${ep.base}/x`, secret: SECRET, origin: 'api', events: ['run.started'] }, 1);
    // Polling before the event exists: its first attempt comes within a poll, well inside the window.
    start({ retryBaseMs: 200, retryMaxMs: 200, retryWindowMs: 1500 });
    await completedRun('copy');
    await until(async () => (await hooks.pendingCount('dead')) === 0);
    const history = await hooks.listAttempts('dead', { limit: 10 });
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history.every((a) => a.statusCode === null && /^ECONNREFUSED/.test(a.error ?? ''))).toBe(true);
    expect(history[0]).toMatchObject({ outcome: 'failed', nextAttemptAt: null });
    expect(history.slice(1).every((a) => a.outcome === 'retry')).toBe(true);
  });

  it('at shutdown claims nothing more and lets the attempt in flight end', async () => {
    const ep = await endpoint(() => 200, 300);
    try {
      await hooks.saveWebhook({ id: 'slow', url: `${ep.base}/slow`, secret: SECRET, origin: 'api', events: ['run.started', 'run.completed'] }, 1);
      await completedRun('copy');
      const w = start();
      await until(() => ep.seen.length === 1);
      await w.beforeApplicationShutdown();
      worker = undefined;
      expect(w.busy).toBe(0);
      expect((await hooks.listAttempts('slow', { limit: 10 })).map((a) => [a.event, a.outcome])).toEqual([['run.started', 'delivered']]);
      await new Promise((r) => setTimeout(r, 200));
      expect(ep.seen).toHaveLength(1);
      expect(await hooks.pendingCount('slow')).toBe(1);
    } finally {
      await ep.close();
    }
  });
});
