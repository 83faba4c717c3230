import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { sha256 } from '../contract/support';
import * as os from 'node:os';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { ADMIN, adminAuth } from '../support/gateway';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { MODE, REDIS_URL, call, defineJob, jobBody, listTree, sleep, startJobsGateway, treeBytes, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Documents of the first run, the change set scaled from them. The acceptance is 10,000: scripts/test.sh
 * runs it at that size once (SYNC_ACCEPTANCE_DOCS=10000, the embedded SQLite pass), the other passes at 500.
 */
const N = Number(process.env.SYNC_ACCEPTANCE_DOCS || 500);
if (!Number.isInteger(N) || N < 500 || N > 10_000 || N % 100 !== 0) throw new Error(`SYNC_ACCEPTANCE_DOCS: a multiple of 100 from 500 to 10,000, not ${process.env.SYNC_ACCEPTANCE_DOCS}`);
const FOLDERS = 10;

const digests = (files: Record<string, Buffer>) => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, `${v.length}:${sha256(v)}`]));

/** Every document under a folder of a connector, by relative path, with its bytes (read through the driver). */
async function connectorTree(connector: ContentConnector, folderPath: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const walk = async (folderId: string, rel: string) => {
    let cursor: string | undefined;
    do {
      const page = await connector.listFolder(folderId, { limit: 1000, cursor });
      for (const item of page.items) {
        const r = rel ? `${rel}/${item.name}` : item.name;
        if (item.baseType === 'folder') await walk(item.id, r);
        else {
          const chunks: Buffer[] = [];
          for await (const c of await connector.openContent(item.id)) chunks.push(c as Buffer);
          if (out[r]) throw new Error(`Two documents named ${r}`);
          out[r] = Buffer.concat(chunks);
        }
      }
      cursor = page.nextCursor;
    } while (cursor);
  };
  await walk(await connector.idByPath(path.posix.dirname(folderPath), path.posix.basename(folderPath)), '');
  return out;
}

/**
 * Sync jobs (issue 36 §1–2) from the filesystem to the real OpenCMIS InMemory server: the second run
 * after a change set reads only the changed and added documents, moves the renamed and moved ones
 * at the target, deletes the deleted ones, and leaves the target tree equal to the source tree; a
 * document edited at the target is reported, not overwritten.
 */
describe(`Sync jobs, filesystem → CMIS (OpenCMIS InMemory), ${MODE} mode`, () => {
  let engine: CmisEngine;
  let gw: JobsGateway;
  let base: string;
  let cmis: ContentConnector;

  beforeAll(async () => {
    engine = await useCmisEngine();
    base = (await new CmisSetup(engine.info).createTestFolder('sync')).path;
    const cmisConnector = {
      id: 'cmis',
      typeId: 'cmis',
      description: 'OpenCMIS InMemory',
      params: { url: engine.info.browserUrl, repositoryId: engine.info.repositoryId, user: engine.info.username, password: '${JOBS_CMIS_PASSWORD}' },
    };
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify(cmisConnector)}\n`, env: { JOBS_CMIS_PASSWORD: engine.info.password } });
    cmis = gw.app.get(ConnectorRegistry).get('cmis');
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.release();
  });

  it('follows changes, additions, deletions, renames and moves, reading only what changed; a target edit is a conflict', async () => {
    const root = path.join(gw.srcRoot, 'sync-in');
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < N; i++) files[`f${i % FOLDERS}/doc-${i}.bin`] = randomBytes(1024);
    writeTree(root, files);
    const target = `${base}/out`;
    const jobId = await defineJob(
      gw,
      jobBody('sync-to-cmis', { source: { connectorId: 'src', folderPath: '/sync-in' }, target: { connectorId: 'cmis', folderPath: target }, options: { mode: 'sync', deletions: 'delete' } }),
    );
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', read: N, written: N, failed: 0 });

    // The change set: 1% changed, 0.5% deleted, 0.5% renamed, 0.5% moved to another folder, 1% added.
    const rels = Object.keys(files);
    const pick = (from: number, n: number) => rels.slice(from, from + Math.floor(n));
    const changed = pick(0, N / 100);
    const deleted = pick(N / 5, N / 200);
    const renamed = pick((2 * N) / 5, N / 200);
    const moved = pick((3 * N) / 5, N / 200);
    const expected = { ...files };
    for (const rel of changed) {
      expected[rel] = randomBytes(1500);
      fs.writeFileSync(path.join(root, rel), expected[rel]);
    }
    for (const rel of deleted) {
      fs.rmSync(path.join(root, rel));
      delete expected[rel];
    }
    for (const rel of renamed) {
      const to = rel.replace('doc-', 'renamed-');
      fs.renameSync(path.join(root, rel), path.join(root, to));
      expected[to] = expected[rel];
      delete expected[rel];
    }
    for (const rel of moved) {
      const to = `moved-here/${path.posix.basename(rel)}`;
      fs.mkdirSync(path.join(root, 'moved-here'), { recursive: true });
      fs.renameSync(path.join(root, rel), path.join(root, to));
      expected[to] = expected[rel];
      delete expected[rel];
    }
    const added: Record<string, Buffer> = {};
    for (let i = 0; i < N / 100; i++) added[`f${i}/new-${i}.bin`] = randomBytes(700 + i);
    writeTree(root, added);
    Object.assign(expected, added);
    expect(digests(treeBytes(root))).toEqual(digests(expected));

    const opened = gw.src.opened;
    await call(gw, jobId, 'start');
    const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const unchanged = N - changed.length - deleted.length - renamed.length - moved.length;
    expect(second).toMatchObject({
      status: 'COMPLETED',
      jobRunId: `${jobId}_2`,
      read: N - deleted.length + Object.keys(added).length,
      written: changed.length + renamed.length + moved.length + Object.keys(added).length,
      skipped: unchanged,
      removed: deleted.length,
      failed: 0,
    });
    // Content read: the changed and the added documents, nothing else (renames and moves are the same files).
    const readBytes = [...changed.map((r) => expected[r]), ...Object.values(added)].reduce((n, b) => n + b.length, 0);
    expect(gw.src.opened - opened).toBe(changed.length + Object.keys(added).length);
    expect(second.bytesRead).toBe(readBytes);
    // The target equals the source: names and bytes, no orphan, no duplicate (connectorTree throws on one).
    expect(digests(await connectorTree(cmis, target))).toEqual(digests(expected));

    // A run with nothing changed opens nothing.
    const before = gw.src.opened;
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 0, skipped: Object.keys(expected).length, removed: 0, bytesRead: 0 });
    expect(gw.src.opened).toBe(before);

    // A document edited at the target and changed at the source: reported (e, both stamps), not overwritten.
    const conflicted = changed[0];
    const targetId = await cmis.idByPath(path.posix.dirname(`${target}/${conflicted}`), path.posix.basename(conflicted));
    const edit = Buffer.from('edited in CMIS');
    await cmis.contentUpdate!.updateContent(targetId, { content: Readable.from([edit]), fileName: path.posix.basename(conflicted) }, { username: engine.info.username });
    fs.writeFileSync(path.join(root, conflicted), randomBytes(900));
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', written: 0, failed: 1 });
    const report = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).query({ outcome: 'e' }).set('Authorization', adminAuth()).expect(200);
    expect(report.body.results.rows).toEqual([
      expect.objectContaining({ relPath: conflicted, outcome: 'e', message: expect.stringMatching(/^TARGET_CHANGED: changed at the target since run 2 wrote it \(target stamp \S+, ours \S+; source stamp \S+\); kept/) }),
    ]);
    const kept: Buffer[] = [];
    for await (const c of await cmis.openContent(await cmis.idByPath(path.posix.dirname(`${target}/${conflicted}`), path.posix.basename(conflicted)))) kept.push(c as Buffer);
    expect(Buffer.concat(kept)).toEqual(edit);
    // Only a bound for a hung run (a loaded machine writes 10,000 CMIS documents slowly); it measures nothing.
  }, 60_000 + N * 60);
});

async function api(gw: GatewayProcess, p: string) {
  const res = await fetch(`${gw.baseUrl}/api${p}`, { headers: { Authorization: adminAuth() } });
  const body = (await res.json()) as { success: boolean; message?: string | null; results: Record<string, any> };
  if (!res.ok) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function waitFor(gw: GatewayProcess, jobId: number, done: (s: Record<string, any>) => boolean) {
  for (;;) {
    const s = (await api(gw, `/job/service/${jobId}/status`)).results;
    if (done(s)) return s;
    await sleep(20);
  }
}

/**
 * kill -9 in the middle of a sync run (as jobs-process.e2e-spec.ts does for copies): the resumed run
 * (embedded) or the other process (BullMQ) completes it; every deletion is done and counted once,
 * every rename moved once, and the target equals the source with nothing left over.
 */
describe(`A sync run whose gateway process is killed (${MODE} mode)`, () => {
  const KILL_N = 3000;
  let root: string;
  let databaseUrl: string | undefined;
  const processes: GatewayProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-sync-kill-'));
    databaseUrl = await createTestDatabaseUrl();
  });
  afterAll(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('completes after the kill with nothing deleted twice and nothing orphaned', async () => {
    const src = path.join(root, 'src', 'in');
    const files: Record<string, string> = {};
    for (let i = 0; i < KILL_N; i++) files[`f${i % 3}/doc-${i}.txt`] = `document ${i}\n`;
    writeTree(src, files);
    fs.writeFileSync(
      path.join(root, 'gateway.yaml'),
      `connectors:
  - {id: src, typeId: filesystem, params: {root: ${root}/src}}
  - {id: dst, typeId: filesystem, params: {root: ${root}/dst}}
jobs:
  - jobName: mirror
    source: {connectorId: src, folderPath: /in}
    target: {connectorId: dst, folderPath: /out}
    options: {mode: sync, deletions: delete}
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
    const jobId = (await api(a, '/admin/jobs')).results.find((j: { jobName: string }) => j.jobName === 'mirror').jobId as number;
    await api(a, `/job/service/${jobId}/start`);
    expect(await waitFor(a, jobId, (s) => s.status !== 'RUNNING')).toMatchObject({ status: 'COMPLETED', written: KILL_N });

    // A fifth of the documents deleted, a fifth renamed, a fifth changed, a tenth added.
    const rels = Object.keys(files);
    const fifth = KILL_N / 5;
    for (const rel of rels.slice(0, fifth)) fs.rmSync(path.join(src, rel));
    for (const rel of rels.slice(fifth, 2 * fifth)) fs.renameSync(path.join(src, rel), path.join(src, rel.replace('doc-', 'renamed-')));
    for (const rel of rels.slice(2 * fifth, 3 * fifth)) fs.writeFileSync(path.join(src, rel), `changed ${rel}\n`);
    const added: Record<string, string> = {};
    for (let i = 0; i < KILL_N / 10; i++) added[`f${i % 3}/new-${i}.txt`] = `new ${i}\n`;
    writeTree(src, added);

    let survivor: GatewayProcess;
    await api(a, `/job/service/${jobId}/start`);
    if (REDIS_URL) {
      const b = await spawnGateway(env);
      processes.push(b);
      const before = await waitFor(a, jobId, (s) => s.written >= 300 || s.status !== 'RUNNING');
      expect(before.status).toBe('RUNNING');
      b.child.kill('SIGKILL');
      await b.exited;
      survivor = a;
    } else {
      const before = await waitFor(a, jobId, (s) => s.written >= 300 || s.status !== 'RUNNING');
      expect(before.status).toBe('RUNNING');
      a.child.kill('SIGKILL');
      await a.exited;
      survivor = await spawnGateway(env);
      processes.push(survivor);
      expect((await api(survivor, `/job/service/${jobId}/status`)).results).toMatchObject({ status: 'FAILED', canResumeJob: true });
      await api(survivor, `/job/service/${jobId}/resume`);
    }
    const done = await waitFor(survivor, jobId, (s) => !['RUNNING', 'PAUSING', 'ABORTING'].includes(s.status));
    const listed = KILL_N - fifth + KILL_N / 10;
    expect((await api(survivor, `/job/service/${jobId}/report?outcome=e`)).results.rows).toEqual([]);
    expect(done).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: listed, written: 2 * fifth + KILL_N / 10, skipped: listed - 2 * fifth - KILL_N / 10, failed: 0, removed: fifth });
    const counts = (await api(survivor, `/job/service/${jobId}/report?limit=1`)).results.counts as Record<string, number>;
    expect(counts).toEqual({ p: 2 * fifth + KILL_N / 10 + fifth, e: 0, d: 0, s: listed - 2 * fifth - KILL_N / 10, r: 0 });
    expect(listTree(path.join(root, 'dst', 'out'))).toEqual(listTree(src));

    // And the next run finds nothing to do.
    await api(survivor, `/job/service/${jobId}/start`);
    expect(await waitFor(survivor, jobId, (s) => s.status !== 'RUNNING')).toMatchObject({ status: 'COMPLETED', written: 0, removed: 0, skipped: listed });
  }, 300_000);
});
