import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { ADMIN, adminAuth } from '../support/gateway';
import { gatewayRows } from '../support/gateway-rows';
import { stopWhen } from '../support/held-process';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { MODE, REDIS_URL, listTree, sleep, writeTree } from './jobs-helpers';

/**
 * Documents of the run. The kill lands mid-run by construction (the processes run in slices until the database shows
 * KILL_AFTER written, then are seen stopped with the run open), so the run needs no size of its own to outlast a poll.
 */
const N = 1000;
const KILL_AFTER = 300;

async function api(gw: GatewayProcess, p: string) {
  const res = await fetch(`${gw.baseUrl}/api${p}`, { headers: { Authorization: adminAuth() } });
  const body = (await res.json()) as { success: boolean; message?: string | null; results: Record<string, any> };
  if (!res.ok) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

type Counts = Record<'p' | 'e' | 'd' | 's' | 'r', number>;

/** The run report's counts (issue 35) add up to the run's counters exactly, whatever stopped it. */
async function expectReportMatches(gw: GatewayProcess, jobId: number, run: Record<string, any>): Promise<Counts> {
  const counts = (await api(gw, `/job/service/${jobId}/report?limit=1`)).results.counts as Counts;
  expect(counts.p + counts.e + counts.d + counts.s + counts.r).toBe(run.read);
  expect({ p: counts.p, e: counts.e, skipped: counts.d + counts.s }).toEqual({ p: run.written, e: run.failed, skipped: run.skipped });
  return counts;
}

async function waitFor(gw: GatewayProcess, jobId: number, done: (s: Record<string, any>) => boolean) {
  for (;;) {
    const s = (await api(gw, `/job/service/${jobId}/status`)).results;
    if (done(s)) return s;
    await sleep(20);
  }
}

/** Archived older versions in the filesystem connector's metadata: a document written twice would leave one. */
function archivedVersions(root: string): number {
  let n = 0;
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (path.basename(dir) === 'v') n++;
    }
  };
  walk(path.join(root, '.gateway', 'docs'));
  return n;
}

describe(`A gateway process killed mid-run (${MODE} mode)`, () => {
  let root: string;
  let databaseUrl: string | undefined;
  const processes: GatewayProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-jobs-kill-'));
    databaseUrl = await createTestDatabaseUrl();
  });
  afterAll(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it(
    REDIS_URL
      ? 'loses nothing and counts nothing twice: the other process finishes the run with exact counters'
      : 'loses nothing and counts nothing twice: after a restart, resume finishes the run with exact counters',
    async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < N; i++) files[`in/f${i % 3}/doc-${i}.txt`] = `document ${i}\n`;
      writeTree(path.join(root, 'src'), files);
      fs.writeFileSync(
        path.join(root, 'gateway.yaml'),
        `connectors:
  - {id: src, typeId: filesystem, params: {root: ${root}/src}}
  - {id: dst, typeId: filesystem, params: {root: ${root}/dst}}
jobs:
  - jobName: survive
    source: {connectorId: src, folderPath: /in}
    target: {connectorId: dst, folderPath: /out}
    options: {onExisting: version}
`,
      );
      const env: Record<string, string> = {
        GATEWAY_DATA_DIR: path.join(root, 'data'),
        GATEWAY_CONFIG: path.join(root, 'gateway.yaml'),
        GATEWAY_ADMIN_USER: ADMIN.username,
        GATEWAY_ADMIN_PASSWORD: ADMIN.password,
        GATEWAY_JOB_CONCURRENCY: '2',
        GATEWAY_JOB_LOCAL_CONCURRENCY: '2',
        LOG_LEVEL: 'warn',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        ...(REDIS_URL ? { REDIS_URL } : {}),
      };
      const a = await spawnGateway(env);
      processes.push(a);
      const jobId = (await api(a, '/admin/jobs')).results.find((j: { jobName: string }) => j.jobName === 'survive').jobId as number;
      const database = { databaseUrl, sqliteFile: path.join(root, 'data', 'gateway.sqlite') };
      /** Lets the processes run in slices until KILL_AFTER documents are written, and returns the run's row as they stopped. */
      const stopMidRun = async (held: GatewayProcess[]) => {
        let row: { status: string; written: number } | undefined;
        await stopWhen(
          held.map((p) => p.child),
          async () => {
            [row] = await gatewayRows(database, 'select status, written from job_runs where id = ?', [`${jobId}_1`]);
            return row !== undefined && (row.status !== 'RUNNING' || Number(row.written) >= KILL_AFTER);
          },
        );
        return { status: row!.status, written: Number(row!.written) };
      };

      let survivor: GatewayProcess;
      if (REDIS_URL) {
        const b = await spawnGateway(env);
        processes.push(b);
        await api(a, `/job/service/${jobId}/start`);
        const before = await stopMidRun([a, b]);
        expect({ status: before.status, midRun: before.written >= KILL_AFTER && before.written < N }).toEqual({ status: 'RUNNING', midRun: true });
        b.child.kill('SIGKILL');
        await b.exited;
        a.child.kill('SIGCONT');
        survivor = a;
      } else {
        await api(a, `/job/service/${jobId}/start`);
        const before = await stopMidRun([a]);
        expect({ status: before.status, midRun: before.written >= KILL_AFTER && before.written < N }).toEqual({ status: 'RUNNING', midRun: true });
        a.child.kill('SIGKILL');
        await a.exited;
        survivor = await spawnGateway(env);
        processes.push(survivor);
        const interrupted = await api(survivor, `/job/service/${jobId}/status`);
        expect(interrupted.results).toMatchObject({ status: 'FAILED', canResumeJob: true });
        expect(interrupted.message).toMatch(/stopped during the run/);
        expect(interrupted.results.written).toBeLessThan(N);
        // Documents the killed process had claimed and not finished are read, unfinished rows (`r`).
        await expectReportMatches(survivor, jobId, interrupted.results);
        await api(survivor, `/job/service/${jobId}/resume`);
      }

      const done = await waitFor(survivor, jobId, (s) => !['RUNNING', 'PAUSING', 'ABORTING'].includes(s.status));
      expect(done).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_1`, read: N, written: N, skipped: 0, failed: 0 });
      expect(await expectReportMatches(survivor, jobId, done)).toEqual({ p: N, e: 0, d: 0, s: 0, r: 0 });
      const copied = listTree(path.join(root, 'dst', 'out'));
      expect(Object.keys(copied)).toHaveLength(N);
      expect(copied).toEqual(listTree(path.join(root, 'src', 'in')));
      expect(archivedVersions(path.join(root, 'dst'))).toBe(0);
    },
    240_000,
  );
});
