import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from '../contract/fixtures';
import { ENGINES_FILE_ENV, readEngines, startEngines, type FerretDbInfo } from '../engines';
import { adminAuth } from '../support/gateway';
import { freePort } from '../support/process';
import { rawRequest } from '../support/proxy';
import { MODE, call, defineJob, startJobsGateway, status, treeBytes, waitStatus, writeTree, type JobBody, type JobsGateway } from './jobs-helpers';

/**
 * Dry runs (issue 34 §3) end to end: `start?dryRun=true` from a filesystem source into the filesystem and into S3 on
 * MinIO. The dry run writes nothing (fs: the target's directory tree is byte for byte the same; S3: its listing), reads
 * no content (the connector call counts of the metrics port: no openContent, createFile, direct copy, delete or
 * folder made), and its plan is, document for document, what the real run then records. Nor is it the job's last
 * run: a follow-up onExisting=skip run, and an incremental indexing run, do what they would have done without it.
 */

interface Row {
  docId: string;
  relPath: string;
  outcome: string;
  message: string | null;
  targetId: string | null;
  plan: string | null;
}

/** The sum of a Prometheus counter's samples whose labels include `labels`. */
function total(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Connector operations that read content or change a repository: a dry run makes none. */
const WRITES_AND_READS = ['openContent', 'createFile', 'directCopy.copyFrom', 'deleteItem', 'folders.createFolder', 'contentUpdate.updateContent', 'localFiles.unverifiedFile'];

/** What a real run's outcome says it did, as a plan names it. */
function actionOf(row: Row): string {
  if (row.outcome === 'e') return 'fail';
  if (row.outcome === 'd' || row.outcome === 's') return 'skip';
  if (row.message === 'overwritten') return 'overwrite';
  if (row.message === 'new version') return 'version';
  return 'create';
}

/** A filesystem source into each target: the jobs gateway's own `dst` folder, and S3 on MinIO (the contract fixture). */
const TARGETS = [
  { name: 'filesystem', fixture: undefined },
  { name: 's3 (MinIO)', fixture: CONNECTOR_FIXTURES.s3 },
] as const;

describe.each(TARGETS)(`Dry runs: filesystem → $name, ${MODE} mode`, ({ name, fixture }) => {
  let env: ContractEnvironment | undefined;
  let gw: JobsGateway;
  let targetId: string;
  let targetBase: string;
  let target: ContentConnector;
  let metricsUrl: string;
  let seq = 0;

  beforeAll(async () => {
    env = fixture ? await fixture.setup() : undefined;
    const port = await freePort();
    gw = await startJobsGateway({ extraYaml: env ? `  - ${env.connectorYaml}\n` : '', env: { HOST: '127.0.0.1', GATEWAY_METRICS_PORT: String(port), ...env?.env } });
    // The source as the registry hands it out (its localFiles group back, so fs → fs copies directly as in production).
    gw.src.restore();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    targetId = env?.connectorId ?? 'dst';
    targetBase = env?.testFolderPath ?? '';
    target = gw.app.get(ConnectorRegistry).get(targetId);
  });
  afterAll(async () => {
    await gw?.close();
    await env?.teardown();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  const counts = async () => {
    const text = (await rawRequest(metricsUrl)).body.toString('utf8');
    return Object.fromEntries(
      ['src', targetId].flatMap((c) => WRITES_AND_READS.map((op) => [`${c} ${op}`, total(text, 'gateway_connector_calls_total', { connector: c, operation: op })])),
    ) as Record<string, number>;
  };

  /** Every document below a target folder, by path, with its size and modification time: what a write would change. */
  async function targetListing(folderPath: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const walk = async (folder: string) => {
      let id: string;
      try {
        id = await target.idByPath(path.posix.dirname(folder), path.posix.basename(folder));
      } catch {
        return; // not there (yet)
      }
      let cursor: string | undefined;
      do {
        const page = await target.listFolder(id, { limit: 1000, cursor });
        for (const item of page.items) {
          if (item.baseType === 'folder') await walk(`${folder}/${item.name}`);
          else out[`${folder}/${item.name}`] = `${item.size} ${item.modified?.toISOString()} ${item.etag ?? ''}`;
        }
        cursor = page.nextCursor;
      } while (cursor);
    };
    await walk(folderPath);
    return out;
  }

  async function rows(jobId: number, runId: string): Promise<Row[]> {
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).query({ runId }).set('Authorization', adminAuth()).expect(200);
    return res.body.results.rows as Row[];
  }

  async function run(jobId: number, dryRun: boolean) {
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query(dryRun ? { dryRun: 'true' } : {}).set('Authorization', adminAuth()).expect(200);
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    return { message: res.body.message as string, status: done };
  }

  /** A fresh source folder with its documents, one of them already at the target, and a job copying it there. */
  async function job(onExisting: string) {
    const folder = `dry-${++seq}-${randomBytes(3).toString('hex')}`;
    writeTree(path.join(gw.srcRoot, folder), {
      'new.txt': 'new',
      'old.txt': 'the newer text',
      'skip.tmp': 'excluded',
      'sub/deep.txt': 'deep',
      'sub/large.bin': randomBytes(1024 * 1024),
    });
    const targetFolder = `${targetBase}/${folder}`;
    const jobId = await defineJob(gw, {
      jobName: folder,
      source: { connectorId: 'src', folderPath: `/${folder}`, recursive: true },
      target: { connectorId: targetId, folderPath: targetFolder },
      options: { onExisting, exclude: ['*.tmp'] },
    });
    // old.txt is at the target already, written through the gateway's own connector (before the counts are taken).
    const folderId = await target.folders!.createFolder(targetFolder, { username: 'admin' });
    await target.createFile({ folderId, fileName: 'old.txt', mimeType: 'text/plain', content: Readable.from([Buffer.from('previous')]) }, { username: 'admin' });
    return { jobId, folder, targetFolder };
  }

  it.each(['skip', 'overwrite'])('onExisting=%s: the plan writes and reads nothing, and is what the real run then does, document for document', async (onExisting) => {
    const { jobId, targetFolder } = await job(onExisting);
    const fsBefore = fixture ? undefined : treeBytes(gw.dstRoot);
    const listed = await targetListing(targetFolder);
    const before = await counts();

    const dry = await run(jobId, true);
    expect(dry.message).toContain('as a dry run');
    const written = onExisting === 'skip' ? 3 : 4;
    expect(dry.status).toMatchObject({ status: 'COMPLETED', dryRun: true, read: 5, written, skipped: 5 - written, failed: 0, removed: 0, bytesRead: 0 });
    expect(await counts()).toEqual(before);
    expect(await targetListing(targetFolder)).toEqual(listed);
    if (fsBefore) expect(treeBytes(gw.dstRoot)).toEqual(fsBefore);

    const plan = await rows(jobId, dry.status.jobRunId as string);
    const page = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200);
    // No mapping in this job: nothing unmapped (the mappings of issue 34 §1–2 fill it).
    expect(page.body.results).toMatchObject({ dryRun: true, unmapped: { property: {}, type: {}, principal: {} } });
    const byPath = Object.fromEntries(plan.map((r) => [r.relPath, [r.outcome, r.plan]]));
    expect(byPath).toEqual({
      'new.txt': ['p', 'create'],
      'old.txt': onExisting === 'skip' ? ['d', 'skip'] : ['p', 'overwrite'],
      'skip.tmp': ['s', 'skip'],
      'sub/deep.txt': ['p', 'create'],
      'sub/large.bin': ['p', 'create'],
    });
    const csv = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).query({ format: 'csv' }).set('Authorization', adminAuth()).expect(200);
    expect(csv.text.split('\r\n')[0].split(',').pop()).toBe('plan');
    expect(csv.text).toContain(',create\r\n');
    // A dry run's failures are predictions: run-errors has nothing to re-run.
    await call(gw, jobId, 'runerrors', 409);

    const real = await run(jobId, false);
    expect(real.status).toMatchObject({ status: 'COMPLETED', dryRun: false, read: 5, written, skipped: 5 - written });
    const outcomes = await rows(jobId, real.status.jobRunId as string);
    expect(outcomes.map((r) => [r.docId, r.outcome, actionOf(r)])).toEqual(plan.map((r) => [r.docId, r.outcome, r.plan]));
    expect(outcomes.every((r) => r.plan === null)).toBe(true);
    // The same counts move with a real run (so they would have caught a dry run reading or writing).
    const after = await counts();
    expect(after[fixture ? 'src openContent' : `${targetId} directCopy.copyFrom`]).toBeGreaterThan(before[fixture ? 'src openContent' : `${targetId} directCopy.copyFrom`]);
    expect(Object.keys(await targetListing(targetFolder)).sort()).toEqual(['new.txt', 'old.txt', 'sub/deep.txt', 'sub/large.bin'].map((f) => `${targetFolder}/${f}`));
  });

  it('is never the last run: an onExisting=skip run after a dry run writes what changed since the last real run', async () => {
    const { jobId, folder, targetFolder } = await job('skip');
    await run(jobId, false);
    writeTree(path.join(gw.srcRoot, folder), { 'added.txt': 'added after the first run' });
    const dry = await run(jobId, true);
    const planned = await rows(jobId, dry.status.jobRunId as string);
    expect(planned.filter((r) => r.plan === 'create').map((r) => r.relPath)).toEqual(['added.txt']);
    const real = await run(jobId, false);
    expect(real.status).toMatchObject({ dryRun: false, written: 1, skipped: 5 });
    const outcomes = await rows(jobId, real.status.jobRunId as string);
    expect(outcomes.map((r) => [r.docId, r.outcome])).toEqual(planned.map((r) => [r.docId, r.outcome]));
    expect(Object.keys(await targetListing(targetFolder))).toContain(`${targetFolder}/added.txt`);
  });

  it(`refuses dryRun other than true or false, naming it (${name})`, async () => {
    const { jobId } = await job('skip');
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query({ dryRun: 'yes' }).set('Authorization', adminAuth()).expect(400);
    expect(JSON.stringify(res.body)).toContain('dryRun');
    expect((await status(gw, jobId)).jobRunId).toBeNull();
  });
});

/** FerretDB (MongoDB wire protocol) from the shared engines, or started for this file. */
async function useFerretDb(): Promise<{ info: FerretDbInfo; release(): Promise<void> }> {
  if (process.env[ENGINES_FILE_ENV]) {
    const shared = readEngines().ferretdb;
    if (shared) return { info: shared, release: async () => undefined };
  }
  const started = await startEngines(['ferretdb'], { log: () => undefined });
  return { info: started.ferretdb, release: () => started.ferretdb.stop() };
}

describe(`Dry runs of an indexing job: filesystem → MongoDB (FerretDB), ${MODE} mode`, () => {
  let gw: JobsGateway;
  let engine: { info: FerretDbInfo; release(): Promise<void> };

  beforeAll(async () => {
    engine = await useFerretDb();
    const suffix = randomBytes(4).toString('hex');
    const index = { id: 'index', typeId: 'mongodb', params: { uri: `${engine.info.uri}?directConnection=true`, database: 'jobs_dryrun', collection: `dry_${suffix}`, timeoutMs: 60_000 } };
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify(index)}\n` });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.release();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  it('plans from the index stamps without writing them: the next real run still indexes what changed since the last real one', async () => {
    writeTree(path.join(gw.srcRoot, 'idx'), { 'a.txt': 'alpha', 'b.txt': 'beta' });
    const body = { jobName: 'index-dry', source: { connectorId: 'src', folderPath: '/idx' }, target: { connectorId: 'index' }, options: { extract: false } };
    const jobId = await defineJob(gw, body as unknown as JobBody);
    const start = async (dryRun: boolean) => {
      await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query(dryRun ? { dryRun: 'true' } : {}).set('Authorization', adminAuth()).expect(200);
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200);
      return { done, rows: (res.body.results.rows as Row[]).map((r) => [r.relPath, r.outcome, r.plan]).sort() };
    };
    const first = await start(true);
    expect(first.done).toMatchObject({ dryRun: true, written: 2 });
    expect(first.rows).toEqual([['a.txt', 'p', 'create'], ['b.txt', 'p', 'create']]);
    // Nothing was indexed: the collection is empty (or not made yet).
    const found = await gw.http().get(`${gw.api}/search/index/select`).query({ q: '*:*' }).set('Authorization', adminAuth());
    if (found.status === 200) expect(found.body.results.numFound).toBe(0);
    else expect(found.status).toBe(404);

    expect((await start(false)).rows).toEqual([['a.txt', 'p', null], ['b.txt', 'p', null]]);
    fs.writeFileSync(path.join(gw.srcRoot, 'idx', 'b.txt'), 'beta, changed');
    const planned = await start(true);
    expect(planned.rows).toEqual([['a.txt', 's', 'skip'], ['b.txt', 'p', 'overwrite']]);
    // The dry run stamped nothing: the real run finds b.txt changed still, and a.txt unchanged.
    expect((await start(false)).rows).toEqual([['a.txt', 's', null], ['b.txt', 'p', null]]);
  });
});
