import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { ENGINES_FILE_ENV, readEngines, startEngines, type PostgresInfo, type RedisInfo } from '../engines';
import { toxiproxyClient, type ToxiProxy, type ToxiproxyInfo } from '../engines/toxiproxy';
import { Client } from 'pg';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { adminAuth } from '../support/gateway';
import { DOCS_PER_TASK } from '../../apps/api/src/jobs/task-plan';
import { defineJob, jobBody, startJobsGateway, writeTree, treeBytes } from './jobs-helpers';

/**
 * A job running while its gateway's PostgreSQL goes away (issue 16, faults): reached through Toxiproxy,
 * the database is cut while documents are in flight. Status calls during the outage answer 503; once it
 * is back the run resumes by itself or fails with a message (then a resume completes it), and every
 * document arrives exactly. And a job on the BullMQ queue while Redis goes away the same way. Its own
 * file: it needs only PostgreSQL, Redis and Toxiproxy, and a gateway of its own per test. In `npm test`,
 * once, in the PostgreSQL pass (scripts/test.sh); it brings its database and Redis through the proxies
 * whatever the pass. By hand:
 * GATEWAY_TEST_ENGINES=toxiproxy,postgres,redis npx jest --config jest.config.js --selectProjects e2e --runInBand test/e2e/faults-jobs.e2e-spec.ts
 */
const TIMEOUT_MS = 3000;
const HANG_GUARD_MS = 30_000;

describe('Engine faults while a job runs: PostgreSQL and Redis outages', () => {
  let engines: { postgres: PostgresInfo; redis: RedisInfo; toxiproxy: ToxiproxyInfo };
  let release: () => Promise<void> = async () => undefined;
  const proxies: Record<string, ToxiProxy> = {};
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    const shared = process.env[ENGINES_FILE_ENV] ? readEngines() : {};
    const missing = (['postgres', 'redis', 'toxiproxy'] as const).filter((n) => shared[n] === undefined);
    const started = missing.length > 0 ? await startEngines(missing, { log: () => undefined }) : {};
    engines = { ...shared, ...started } as unknown as typeof engines;
    release = async () => void (await Promise.all(Object.values(started).map((h) => (h as { stop(): Promise<void> }).stop())));
    const suffix = randomBytes(3).toString('hex');
    proxies.postgres = await toxiproxyClient(engines.toxiproxy).createProxy(`faults-jobs-pg-${suffix}`, `127.0.0.1:${engines.postgres.port}`);
    proxies.redis = await toxiproxyClient(engines.toxiproxy).createProxy(`faults-jobs-redis-${suffix}`, `127.0.0.1:${engines.redis.port}`);
  }, 300_000);

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    for (const proxy of Object.values(proxies)) await proxy.delete().catch(() => undefined);
    await release();
    expect(unhandled).toEqual([]);
  }, 120_000);

  /** A database of its own on the harness's PostgreSQL; `viaProxy`: the URL the gateway gets goes through the PostgreSQL proxy. */
  async function createDatabase(viaProxy: boolean): Promise<{ direct: string; url: string }> {
    const direct = (await createTestDatabaseUrl(engines.postgres.url)) as string;
    const url = new URL(direct);
    if (viaProxy) url.port = String(proxies.postgres.port);
    return { direct, url: url.toString() };
  }

  type JobsGateway = Awaited<ReturnType<typeof startJobsGateway>>;

  /**
   * Writes `files` under the source root, defines a job over them and starts it with the source held,
   * returning once the first document is being read: the run is mid-run. The caller lets the source go
   * (`jobs.src.open()`) when its fault is in place.
   */
  async function startHeldJob(jobs: JobsGateway, name: string, files: Record<string, string>) {
    writeTree(jobs.srcRoot, files);
    const jobId = await defineJob(jobs, jobBody(name));
    const jobCall = (action: string) => jobs.http().get(`${jobs.api}/job/service/${jobId}/${action}`).set('Authorization', adminAuth()).timeout(HANG_GUARD_MS).ok(() => true);
    jobs.src.close();
    expect((await jobCall('start')).status).toBe(200);
    await jobs.src.waitOpened(1);
    return jobCall;
  }

    it('the job resumes or fails with a message once the database is back, and then completes exactly', async () => {
      const { direct, url } = await createDatabase(true);
      const jobs = await startJobsGateway({
        env: { DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS), DATABASE_QUERY_TIMEOUT_MS: String(TIMEOUT_MS * 2), GATEWAY_AUTH_CACHE_SECONDS: '60' },
      });
      try {
        const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`in/doc-${i}.txt`, `document ${i} ${'x'.repeat(i * 100)}`]));
        const jobCall = await startHeldJob(jobs, 'pg-outage', files);
        // Documents are in flight when the database goes away; they finish during the outage.
        await proxies.postgres.disable();
        jobs.src.open();
        const during = await jobCall('status');
        expect(`${during.status} ${during.body.message}`).toMatch(/^503 /);
        await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
        await proxies.postgres.enable();

        // Back: the run settles by itself (resumed, or failed with a message), never stays stuck.
        const settled = ['COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'PAUSED'];
        let state: { status: string; message?: string } = { status: '' };
        const deadline = Date.now() + 120_000;
        while (Date.now() < deadline) {
          const res = await jobCall('status');
          if (res.status === 200) {
            state = { status: res.body.results.status, message: res.body.message };
            if (settled.includes(state.status)) break;
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(settled).toContain(state.status);
        if (state.status !== 'COMPLETED') {
          expect(state.message ?? '').not.toBe('');
          const again = await jobCall(state.status === 'COMPLETED_WITH_ERRORS' ? 'runerrors' : 'resume');
          expect(again.status).toBe(200);
          for (;;) {
            const res = await jobCall('status');
            if (res.status === 200 && ['COMPLETED', 'FAILED', 'COMPLETED_WITH_ERRORS'].includes(res.body.results.status)) {
              expect(res.body.results.status).toBe('COMPLETED');
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        }
        // Every document copied, byte for byte.
        const copied = treeBytes(jobs.dstRoot);
        for (const [file, content] of Object.entries(files)) expect(copied[file.replace(/^in\//, 'out/')]?.toString()).toBe(content);
      } finally {
        await jobs.close();
        await dropTestDatabase(direct, engines.postgres.url);
        fs.rmSync(jobs.root, { recursive: true, force: true });
      }
    }, 300_000);

    it.each([
      ['5 s, within the worker\'s task locks', 5_000],
      // Past LOCK_DURATION_MS (10 s, renewed every 5 s): the tasks in flight lose their locks, BullMQ refuses to
      // finish them and hands them out again once Redis is back (stalled), and the rerun must add nothing.
      ['12 s, past the worker\'s task locks', 12_000],
    ])('a BullMQ job through a Redis outage of %s mid-run completes with every document copied once, exact counters and audit', async (_title, outageMs) => {
      // BullMQ prints a worker error that has no listener with console.error, outside the gateway's JSON log.
      const consoleError = jest.spyOn(console, 'error');
      const DOCS = 5 * DOCS_PER_TASK; // five docs tasks: more than the worker's four at a time, so one waits in Redis through the outage
      const { direct, url } = await createDatabase(false);
      const jobs = await startJobsGateway({
        env: { DATABASE_URL: url, REDIS_URL: `redis://127.0.0.1:${proxies.redis.port}`, GATEWAY_AUTH_CACHE_SECONDS: '3600' },
      });
      try {
        const files = Object.fromEntries(Array.from({ length: DOCS }, (_, i) => [`in/doc-${i}.txt`, `document ${i} ${'y'.repeat(i % 300)}`]));
        // Listed and queued, documents in flight: the run is mid-run when Redis goes away.
        const jobCall = await startHeldJob(jobs, 'redis-outage', files);
        await proxies.redis.disable();
        jobs.src.open();
        // A few seconds of outage. The status lives in the database and the admin's verification is cached,
        // so status calls go on answering meanwhile.
        const outageEnds = Date.now() + outageMs;
        while (Date.now() < outageEnds) {
          const during = await jobCall('status');
          expect(`${during.status} ${during.body.message ?? ''}`).toMatch(/^200 /);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        const atRestore = (await jobCall('status')).body.results;
        expect(atRestore.status).toBe('RUNNING');
        expect(atRestore.written).toBeLessThan(DOCS);
        await proxies.redis.enable();

        // Back: the run settles by itself: completed, or failed with a message and then resumed to completion.
        let state = await waitSettled(jobCall);
        if (state.status !== 'COMPLETED') {
          expect(state).toMatchObject({ status: expect.stringMatching(/^(FAILED|PAUSED)$/), message: expect.stringMatching(/./) });
          expect((await jobCall('resume')).status).toBe(200);
          state = await waitSettled(jobCall);
        }
        expect(state.results).toMatchObject({ status: 'COMPLETED', read: DOCS, written: DOCS, skipped: 0, failed: 0, removed: 0 });

        // Every document copied, byte for byte, and nothing else.
        const copied = treeBytes(jobs.dstRoot);
        expect(Object.keys(copied).sort()).toEqual(Object.keys(files).map((f) => f.replace(/^in\//, 'out/')).sort());
        for (const [file, content] of Object.entries(files)) expect(copied[file.replace(/^in\//, 'out/')].toString()).toBe(content);
        // The audit agrees: one processed record per document, each with its read, nothing else.
        const db = new Client({ connectionString: url });
        await db.connect();
        try {
          const audit = await db.query<{ record_type: string; records: string; docs: string; reads: string }>(
            'select record_type, count(*) as records, count(distinct doc_id) as docs, count(read_at) as reads from job_audit where run_id = $1 group by record_type order by record_type',
            [state.results.jobRunId],
          );
          expect(audit.rows.map((r) => `${r.record_type} ${r.records} ${r.docs} ${r.reads}`)).toEqual([`p ${DOCS} ${DOCS} ${DOCS}`]);
        } finally {
          await db.end();
        }
        expect(consoleError.mock.calls.map((args) => String(args[0]))).toEqual([]);
      } finally {
        consoleError.mockRestore();
        await jobs.close();
        await dropTestDatabase(direct, engines.postgres.url);
        fs.rmSync(jobs.root, { recursive: true, force: true });
      }
    }, 300_000);
  });

/** Polls a job's status until its run settled; the deadline only turns a run that never settles into a failure. */
async function waitSettled(jobCall: (action: string) => Promise<{ status: number; body: any }>): Promise<{ status: string; message?: string; results: any }> {
  const settled = ['COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'PAUSED', 'ABORTED'];
  let last: { status: string; message?: string; results: any } = { status: '', results: undefined };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const res = await jobCall('status');
    if (res.status === 200) {
      last = { status: res.body.results.status, message: res.body.message, results: res.body.results };
      if (settled.includes(last.status)) return last;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`The run did not settle within 120 s; last status ${JSON.stringify(last)}`);
}
