import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { adminAuth } from '../support/gateway';
import { rawBody, sha256 } from '../contract/support';
import { Faulty, MODE, call, defineJob, jobBody, startJobsGateway, treeBytes, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Jobs between a filesystem connector and the CMIS connector, against the real
 * OpenCMIS InMemory server of the engine harness: the documents arrive with
 * their bytes, the counters are exact, run-errors fetches CMIS documents by id,
 * and abort / kill leave nothing half-written in the CMIS repository.
 */

/** A few documents of different sizes (an empty one, binary ones, one over several network chunks), in nested folders. */
function documents(): Record<string, Buffer> {
  return {
    'a.bin': randomBytes(300_000),
    'b.txt': Buffer.from('a small text document\n'),
    'empty.txt': Buffer.alloc(0),
    'sub/c.bin': randomBytes(70_000),
    'sub/deeper/d.txt': Buffer.from('déjà vu, deep down\n'),
  };
}

const digests = (files: Record<string, Buffer>) => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, `${v.length}:${sha256(v)}`]));

describe(`Jobs with the CMIS connector (OpenCMIS InMemory), ${MODE} mode`, () => {
  let engine: CmisEngine;
  let gw: JobsGateway;
  let base: string;
  let cmis: Faulty;

  beforeAll(async () => {
    engine = await useCmisEngine();
    base = (await new CmisSetup(engine.info).createTestFolder('jobs')).path;
    const cmisConnector = {
      id: 'cmis',
      typeId: 'cmis',
      description: 'OpenCMIS InMemory',
      // A small page size: every source listing spans several server pages.
      params: { url: engine.info.browserUrl, repositoryId: engine.info.repositoryId, user: engine.info.username, password: '${JOBS_CMIS_PASSWORD}', pageSize: 2 },
    };
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify(cmisConnector)}\n`, env: { JOBS_CMIS_PASSWORD: engine.info.password } });
    cmis = new Faulty(gw.app.get(ConnectorRegistry).get('cmis'));
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.release();
  });
  afterEach(() => {
    gw.src.open();
    gw.src.failing = undefined;
    cmis.open();
    cmis.failing = undefined;
  });

  function repo(connector: string, route: string, query: Record<string, string>) {
    return gw.http().get(`${gw.api}/repo/${connector}/${route}`).query(query).set('Authorization', adminAuth());
  }

  /** The documents under a CMIS folder (recursively; none when the folder does not exist), read through the gateway, as bytes. */
  async function cmisFiles(folderPath: string): Promise<Record<string, Buffer>> {
    const out: Record<string, Buffer> = {};
    const walk = async (folderId: string, rel: string) => {
      const items = (await repo('cmis', 'folderitems', { id: folderId }).expect(200)).body.results as Record<string, { BaseType: string; Id: string; Name: string }>;
      for (const item of Object.values(items)) {
        const r = rel ? `${rel}/${item.Name}` : item.Name;
        if (item.BaseType === 'folder') await walk(item.Id, r);
        else out[r] = (await repo('cmis', 'file', { id: item.Id }).buffer(true).parse(rawBody).expect(200)).body as Buffer;
      }
    };
    const folder = await repo('cmis', 'idbypath', { folderPath: path.posix.dirname(folderPath), fileName: path.posix.basename(folderPath) });
    if (folder.status === 404) return out;
    expect(folder.status).toBe(200);
    await walk(folder.body.results.id, '');
    return out;
  }

  it('filesystem → CMIS: every document arrives with its bytes in nested folders; a second start skips them as duplicates', async () => {
    const files = documents();
    writeTree(path.join(gw.srcRoot, 'to-cmis'), files);
    const target = `${base}/from-fs/deeper`;
    const jobId = await defineJob(gw, jobBody('fs-to-cmis', { source: { connectorId: 'src', folderPath: '/to-cmis' }, target: { connectorId: 'cmis', folderPath: target } }));
    await call(gw, jobId, 'start');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_1`, read: 5, written: 5, skipped: 0, failed: 0, removed: 0 });
    expect(digests(await cmisFiles(target))).toEqual(digests(files));

    // the audit record names the CMIS document written
    const srcId = (await repo('src', 'idbypath', { folderPath: '/to-cmis/sub', fileName: 'c.bin' }).expect(200)).body.results.id;
    const cmisId = (await repo('cmis', 'idbypath', { folderPath: `${target}/sub`, fileName: 'c.bin' }).expect(200)).body.results.id;
    const p = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId: srcId, recordType: 'p' }).set('Authorization', adminAuth()).expect(200);
    expect(p.body.results).toContain(`target=${cmisId}`);

    await call(gw, jobId, 'start');
    const again = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(again).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 5, written: 0, skipped: 5, failed: 0 });
    expect(digests(await cmisFiles(target))).toEqual(digests(files));
  });

  it('CMIS → filesystem: every document arrives with its bytes; run-errors fetches the failed ones from CMIS by id', async () => {
    const files = documents();
    const source = `${base}/to-fs`;
    // set-up through the gateway's own CMIS routes
    for (const rel of Object.keys(files)) {
      const dir = path.posix.dirname(`${source}/${rel}`);
      const folderId = (await gw.http().post(`${gw.api}/repo/cmis/folder`).query({ path: dir }).set('Authorization', adminAuth()).expect(201)).body.results.id;
      await gw
        .http()
        .post(`${gw.api}/repo/cmis/file`)
        .query({ folderId, fileName: path.posix.basename(rel) })
        .set('Authorization', adminAuth())
        .attach('file', files[rel], { filename: path.posix.basename(rel), contentType: 'application/octet-stream' })
        .expect(201);
    }
    expect(digests(await cmisFiles(source))).toEqual(digests(files));

    const jobId = await defineJob(gw, jobBody('cmis-to-fs', { source: { connectorId: 'cmis', folderPath: source }, target: { connectorId: 'dst', folderPath: '/from-cmis' } }));
    cmis.failing = /^(b\.txt|c\.bin)$/;
    await call(gw, jobId, 'start');
    const first = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(first).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', read: 5, written: 3, skipped: 0, failed: 2 });
    const partial = Object.fromEntries(Object.entries(files).filter(([k]) => !/(b\.txt|c\.bin)$/.test(k)));
    expect(digests(treeBytes(path.join(gw.dstRoot, 'from-cmis')))).toEqual(digests(partial));

    cmis.failing = undefined;
    await call(gw, jobId, 'runerrors');
    const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(second).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 2, written: 2, failed: 0 });
    expect(digests(treeBytes(path.join(gw.dstRoot, 'from-cmis')))).toEqual(digests(files));
  });

  describe('nothing half-written in CMIS', () => {
    const six = () => Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`doc-${i}.bin`, randomBytes(40_000 + i)]));

    it('abort: the in-flight documents finish whole, the rest is not started; resume completes the folder', async () => {
      const files = six();
      writeTree(path.join(gw.srcRoot, 'abort-cmis'), files);
      const target = `${base}/aborted`;
      const jobId = await defineJob(gw, jobBody('abort-to-cmis', { source: { connectorId: 'src', folderPath: '/abort-cmis' }, target: { connectorId: 'cmis', folderPath: target } }));
      const sent = gw.src.leadSent;
      gw.src.close({ leadBytes: 4096 }); // the in-flight documents have started to arrive at CMIS when abort comes
      await call(gw, jobId, 'start');
      await gw.src.waitLeadSent(sent + 2);
      expect((await call(gw, jobId, 'abort', 200, 'post')).results.status).toBe('ABORTING');
      gw.src.open();
      const aborted = await waitStatus(gw, jobId, 'ABORTED');
      expect(aborted).toMatchObject({ written: 2, failed: 0 });
      const landed = await cmisFiles(target);
      expect(Object.keys(landed)).toHaveLength(2);
      for (const [name, content] of Object.entries(landed)) expect(sha256(content)).toBe(sha256(files[name]));

      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', read: 6, written: 6, skipped: 0, failed: 0 });
      expect(digests(await cmisFiles(target))).toEqual(digests(files));
    });

    it('kill: the uploads cut half-way leave no document behind; resume writes each document once, whole', async () => {
      const files = six();
      writeTree(path.join(gw.srcRoot, 'kill-cmis'), files);
      const target = `${base}/killed`;
      const jobId = await defineJob(gw, jobBody('kill-to-cmis', { source: { connectorId: 'src', folderPath: '/kill-cmis' }, target: { connectorId: 'cmis', folderPath: target } }));
      const sent = gw.src.leadSent;
      gw.src.close({ leadBytes: 4096 }); // the uploads are under way when kill cuts them
      await call(gw, jobId, 'start');
      await gw.src.waitLeadSent(sent + 2);
      await call(gw, jobId, 'kill', 200, 'post');
      const aborted = await waitStatus(gw, jobId, 'ABORTED');
      expect(aborted).toMatchObject({ written: 0, failed: 0 });
      expect(await cmisFiles(target)).toEqual({});

      gw.src.open();
      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', read: 6, written: 6, skipped: 0, failed: 0 });
      expect(digests(await cmisFiles(target))).toEqual(digests(files));
    });
  });
});
