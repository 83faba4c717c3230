import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { sha256 } from '../contract/support';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, jobBody, startJobsGateway, treeBytes, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/** Documents of the first run; the change set is scaled from the acceptance (10,000 there). */
const N = 500;
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
    const pick = (from: number, n: number) => rels.slice(from, from + n);
    const changed = pick(0, N / 100);
    const deleted = pick(100, N / 200);
    const renamed = pick(200, N / 200);
    const moved = pick(300, N / 200);
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
    expect((await connectorTree(cmis, target))[conflicted]).toEqual(edit);
  });
});
