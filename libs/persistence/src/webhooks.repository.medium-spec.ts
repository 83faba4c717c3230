import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { JobsRepository } from './jobs.repository';
import { WebhooksRepository, type ClaimedDelivery } from './webhooks.repository';

/**
 * The webhook outbox against a real database (SQLite and PostgreSQL, each case on both): events
 * written by the run's own transitions, claims by lease, and the per-job order of deliveries.
 */
describe.each(DATABASE_KINDS)('WebhooksRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let jobs: JobsRepository;
  let hooks: WebhooksRepository;

  beforeEach(async () => {
    jobs = new JobsRepository(database());
    hooks = new WebhooksRepository(database());
  });

  async function job(name: string): Promise<number> {
    return (await jobs.insertJob({ name, group: 'g', origin: 'api', definition: {}, now: 1 }))!;
  }

  async function startAndComplete(jobId: number, status: 'COMPLETED' | 'FAILED' = 'COMPLETED') {
    const run = await jobs.createRun(jobId, { kind: 'start', startedBy: 'admin', now: 5 }, async () => []);
    await jobs.transition(run.id, (locked) => locked.change({ status, endTime: 6 }));
    return run;
  }

  const claimAll = (now: number, node = 'n1') => hooks.claimDue(now, now + 30_000, node, 100);
  const deliver = (d: ClaimedDelivery, at: number) =>
    hooks.recordAttempt(d, { attempt: d.attempts + 1, attemptedAt: at, durationMs: 1, statusCode: 200, error: null, outcome: 'delivered', nextAttemptAt: null });

  it('writes nothing for a run when no webhook wants its events', async () => {
    const jobId = await job('quiet');
    await startAndComplete(jobId);
    expect(await claimAll(Date.now())).toEqual([]);
  });

  it("writes a run's events in its own transitions, one delivery per subscribed webhook, with the run as it was", async () => {
    await hooks.saveWebhook({ id: 'all', url: 'http://a/', secret: 's'.repeat(16), origin: 'api', events: ['run.started', 'run.completed', 'run.failed'] }, 1);
    await hooks.saveWebhook({ id: 'ends', url: 'http://b/', secret: 's'.repeat(16), origin: 'api', events: ['run.completed'] }, 1);
    const jobId = await job('copy');
    const run = await startAndComplete(jobId);
    // The first of each chain only: a job's later event waits for the earlier one.
    const first = await claimAll(Date.now());
    expect(first.map((d) => [d.webhookId, d.event])).toEqual([
      ['all', 'run.started'],
      ['ends', 'run.completed'],
    ]);
    expect(first[0]).toMatchObject({ url: 'http://a/', jobId, runId: run.id, attempts: 0, data: { jobName: 'copy', run: { id: run.id, status: 'RUNNING' } } });
    expect(first[1].data.run).toMatchObject({ status: 'COMPLETED', endTime: 6 });
    expect(first[0].eventId).toMatch(/^evt_/);
    // Claimed: nobody else gets them while the claim runs.
    expect(await claimAll(Date.now(), 'n2')).toEqual([]);
    await deliver(first[0], Date.now());
    const second = await claimAll(Date.now());
    expect(second.map((d) => [d.webhookId, d.event])).toEqual([['all', 'run.completed']]);
  });

  it('a pause is no event; a resume is a run.started of the next attempt', async () => {
    await hooks.saveWebhook({ id: 'all', url: 'http://a/', secret: 's'.repeat(16), origin: 'api', events: ['run.started', 'run.aborted'] }, 1);
    const jobId = await job('copy');
    const run = await jobs.createRun(jobId, { kind: 'start', startedBy: 'admin', now: 5 }, async () => []);
    await jobs.transition(run.id, async (locked) => {
      await locked.change({ status: 'PAUSING' });
      await locked.change({ status: 'PAUSED' });
    });
    await jobs.transition(run.id, (locked) => locked.change({ status: 'RUNNING', attempt: 2 }));
    await jobs.transition(run.id, (locked) => locked.change({ status: 'ABORTED' }));
    const seen: string[] = [];
    for (let d = await claimAll(Date.now()); d.length > 0; d = await claimAll(Date.now())) {
      seen.push(`${d[0].event}#${d[0].data.run.attempt}`);
      await deliver(d[0], Date.now());
    }
    expect(seen).toEqual(['run.started#1', 'run.started#2', 'run.aborted#2']);
  });

  it('a move that rolls back leaves no event', async () => {
    await hooks.saveWebhook({ id: 'all', url: 'http://a/', secret: 's'.repeat(16), origin: 'api', events: ['run.started', 'run.failed'] }, 1);
    const jobId = await job('copy');
    await expect(jobs.createRun(jobId, { kind: 'start', startedBy: 'admin', now: 5 }, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await claimAll(Date.now())).toEqual([]);
  });

  it('keeps each job in order while retrying, lets other jobs through, and hands a run-out claim to another node', async () => {
    await hooks.saveWebhook({ id: 'all', url: 'http://a/', secret: 's'.repeat(16), origin: 'api', events: ['run.started', 'run.completed'] }, 1);
    const a = await job('a');
    const b = await job('b');
    await startAndComplete(a);
    await startAndComplete(b);
    const now = Date.now();
    const [aStart, bStart] = await claimAll(now);
    expect([aStart.jobId, bStart.jobId]).toEqual([a, b]);
    // a's first event fails and waits 60 s; b goes on.
    await hooks.recordAttempt(aStart, { attempt: 1, attemptedAt: now, durationMs: 5, statusCode: 503, error: null, outcome: 'retry', nextAttemptAt: now + 60_000 });
    await deliver(bStart, now);
    const next = await claimAll(now + 1);
    expect(next.map((d) => [d.jobId, d.event])).toEqual([[b, 'run.completed']]);
    // The claim of b's second event runs out (its node died): another node takes it.
    expect(await claimAll(now + 10_000, 'n2')).toEqual([]);
    const retaken = await claimAll(now + 30_002, 'n2');
    expect(retaken.map((d) => [d.jobId, d.event, d.attempts])).toEqual([[b, 'run.completed', 0]]);
    // The dead node's late result no longer moves the delivery.
    await deliver(next[0], now + 30_003);
    expect(await hooks.pendingCount('all')).toBe(3);
    await deliver(retaken[0], now + 30_004);
    expect(await hooks.pendingCount('all')).toBe(2);
    // a's retry is due: its first event comes again, then its second.
    const again = await claimAll(now + 60_001);
    expect(again.map((d) => [d.jobId, d.event, d.attempts])).toEqual([[a, 'run.started', 1]]);
    await deliver(again[0], now + 60_002);
    expect((await claimAll(now + 60_003)).map((d) => [d.jobId, d.event])).toEqual([[a, 'run.completed']]);
    const attempts = await hooks.listAttempts('all', { limit: 10 });
    expect(attempts.map((x) => [x.jobId, x.event, x.attempt, x.outcome])).toEqual([
      [a, 'run.started', 2, 'delivered'],
      [b, 'run.completed', 1, 'delivered'],
      [b, 'run.completed', 1, 'delivered'],
      [b, 'run.started', 1, 'delivered'],
      [a, 'run.started', 1, 'retry'],
    ]);
    expect(await hooks.listAttempts('all', { limit: 2, before: attempts[1].id })).toEqual(attempts.slice(2, 4));
  });

  it('nodes claiming at the same time never get the same delivery', async () => {
    await hooks.saveWebhook({ id: 'all', url: 'http://a/', secret: 's'.repeat(16), origin: 'api', events: ['run.started'] }, 1);
    for (let i = 0; i < 30; i++) await jobs.createRun(await job(`j${i}`), { kind: 'start', startedBy: 'admin', now: 5 }, async () => []);
    const now = Date.now();
    const claims = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((node) => hooks.claimDue(now, now + 30_000, node, 30)));
    const ids = claims.flat().map((d) => d.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('a deleted webhook takes its deliveries and history with it; saving again replaces its events', async () => {
    await hooks.saveWebhook({ id: 'w', url: 'http://a/', secret: 's'.repeat(16), origin: 'config', events: ['run.started', 'run.failed'] }, 1);
    await hooks.saveWebhook({ id: 'w', url: 'http://c/', secret: 't'.repeat(16), origin: 'config', events: ['run.failed', 'run.aborted'] }, 2);
    expect(await hooks.findWebhook('w')).toMatchObject({ url: 'http://c/', secret: 't'.repeat(16), origin: 'config', createdAt: 1 });
    expect((await hooks.findWebhook('w'))!.events.sort()).toEqual(['run.aborted', 'run.failed']);
    const jobId = await job('copy');
    await startAndComplete(jobId, 'FAILED');
    expect(await hooks.pendingCount('w')).toBe(1);
    expect(await hooks.deleteWebhook('w')).toBe(true);
    expect(await hooks.deleteWebhook('w')).toBe(false);
    expect(await claimAll(Date.now())).toEqual([]);
  });
});
