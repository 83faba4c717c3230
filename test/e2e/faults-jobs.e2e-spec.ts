import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Client } from 'pg';
import { ENGINES_FILE_ENV, readEngines, startEngines, type PostgresInfo } from '../engines';
import { toxiproxyClient, type ToxiProxy, type ToxiproxyInfo } from '../engines/toxiproxy';
import { adminAuth } from '../support/gateway';
import { defineJob, jobBody, startJobsGateway, writeTree, treeBytes } from './jobs-helpers';

/**
 * A job running while its gateway's PostgreSQL goes away (issue 16, faults): reached through Toxiproxy,
 * the database is cut while documents are in flight. Status calls during the outage answer 503; once it
 * is back the run resumes by itself or fails with a message (then a resume completes it), and every
 * document arrives exactly. Its own file: it needs only PostgreSQL and Toxiproxy, and a gateway of its own.
 */
const TIMEOUT_MS = 3000;
const HANG_GUARD_MS = 30_000;

describe('Engine faults: PostgreSQL outage while a job runs', () => {
  let engines: { postgres: PostgresInfo; toxiproxy: ToxiproxyInfo };
  let release: () => Promise<void> = async () => undefined;
  const proxies: Record<string, ToxiProxy> = {};
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    const shared = process.env[ENGINES_FILE_ENV] ? readEngines() : {};
    const missing = (['postgres', 'toxiproxy'] as const).filter((n) => shared[n] === undefined);
    const started = missing.length > 0 ? await startEngines(missing, { log: () => undefined }) : {};
    engines = { ...shared, ...started } as unknown as typeof engines;
    release = async () => void (await Promise.all(Object.values(started).map((h) => (h as { stop(): Promise<void> }).stop())));
    proxies.postgres = await toxiproxyClient(engines.toxiproxy).createProxy(`faults-jobs-pg-${randomBytes(3).toString('hex')}`, `127.0.0.1:${engines.postgres.port}`);
  }, 300_000);

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await proxies.postgres?.delete().catch(() => undefined);
    await release();
    expect(unhandled).toEqual([]);
  }, 120_000);

    it('the job resumes or fails with a message once the database is back, and then completes exactly', async () => {
      const name = `gw_faults_jobs_${randomBytes(3).toString('hex')}`;
      const admin = new Client({ connectionString: engines.postgres.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(engines.postgres.url);
      url.port = String(proxies.postgres.port);
      url.pathname = `/${name}`;
      const jobs = await startJobsGateway({
        env: { DATABASE_URL: url.toString(), DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS), DATABASE_QUERY_TIMEOUT_MS: String(TIMEOUT_MS * 2), GATEWAY_AUTH_CACHE_SECONDS: '60' },
      });
      try {
        const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`in/doc-${i}.txt`, `document ${i} ${'x'.repeat(i * 100)}`]));
        writeTree(jobs.srcRoot, files);
        const jobId = await defineJob(jobs, jobBody('pg-outage'));
        const jobCall = (action: string) => jobs.http().get(`${jobs.api}/job/service/${jobId}/${action}`).set('Authorization', adminAuth()).timeout(HANG_GUARD_MS).ok(() => true);
        jobs.src.close();
        expect((await jobCall('start')).status).toBe(200);
        await jobs.src.waitOpened(1);
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
        const cleanup = new Client({ connectionString: engines.postgres.url });
        await cleanup.connect();
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await cleanup.end();
        fs.rmSync(jobs.root, { recursive: true, force: true });
      }
    }, 300_000);
  });
