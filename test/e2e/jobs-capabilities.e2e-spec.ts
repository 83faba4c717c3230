import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { adminAuth } from '../support/gateway';
import { Faulty, MODE, call, defineJob, jobBody, listTree, startJobsGateway, status, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Run-errors needs a source that fetches documents by id (spec 4.5: "not
 * available for all connectors"). The job service asks the connector's derived
 * capabilities — deriveCapabilities(connector).getFileItem, the same answer
 * repositoryInfo gives — and answers 501 naming the capability when it is false.
 *
 * Every connector kind shipped today (filesystem, CMIS) fetches by id: getItem
 * is a core operation of ContentConnector and deriveCapabilities reports
 * getFileItem as always true. So this file declares one connector, `noid`,
 * without the capability at that one seam (deriveCapabilities, for that
 * connector id only), as a connector kind without fetch-by-id would declare
 * itself; everything else — the connector, the run, the control call, the
 * error mapping — is the real code.
 */
jest.mock('@gateway/connector-api', () => {
  const actual = jest.requireActual<typeof import('@gateway/connector-api')>('@gateway/connector-api');
  return {
    ...actual,
    deriveCapabilities: (connector: import('@gateway/connector-api').ContentConnector) => ({
      ...actual.deriveCapabilities(connector),
      ...(connector.id === 'noid' ? { getFileItem: false } : {}),
    }),
  };
});

describe(`Run-errors and the source's fetch-by-id capability, ${MODE} mode`, () => {
  let gw: JobsGateway;
  let noid: Faulty;

  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-jobs-caps-'));
    gw = await startJobsGateway({ root, extraYaml: `  - {id: noid, typeId: filesystem, params: {root: ${path.join(root, 'noid')}}}\n` });
    noid = new Faulty(gw.app.get(ConnectorRegistry).get('noid'));
  });
  afterAll(() => gw?.close());

  it('declares getFileItem false for that connector only (repositoryInfo)', async () => {
    const info = await gw.http().get(`${gw.api}/repo/noid/repositoryInfo`).set('Authorization', adminAuth()).expect(200);
    expect(info.body.results.capabilities).toMatchObject({ getFileItem: false, listFolderItems: true, getContent: true });
    const src = await gw.http().get(`${gw.api}/repo/src/repositoryInfo`).set('Authorization', adminAuth()).expect(200);
    expect(src.body.results.capabilities.getFileItem).toBe(true);
  });

  it('answers 501 naming getFileItem to runerrors over such a source, and starts no run', async () => {
    writeTree(path.join(gw.root, 'noid'), { 'in/a.txt': 'A', 'in/b.txt': 'B', 'in/c.txt': 'C' });
    const jobId = await defineJob(gw, jobBody('noid-errors', { source: { connectorId: 'noid', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/noid-out' } }));
    noid.failing = /^b\.txt$/;
    await call(gw, jobId, 'start');
    const first = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(first).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', jobRunId: `${jobId}_1`, read: 3, written: 2, failed: 1, canStartJob: true });
    noid.failing = undefined;

    const res = await call(gw, jobId, 'runerrors', 501);
    expect(res).toMatchObject({ success: false, error: { code: 'NOT_SUPPORTED', capability: 'getFileItem', connectorType: 'filesystem' } });
    // no run was created: the previous one is still the latest, unchanged
    expect(await status(gw, jobId)).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', jobRunId: `${jobId}_1`, failed: 1 });
    expect(Object.keys(listTree(path.join(gw.dstRoot, 'noid-out'))).sort()).toEqual(['a.txt', 'c.txt']);

    // a whole new run still works (it lists the folder; it does not fetch by id)
    await call(gw, jobId, 'start');
    const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(second).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 3, written: 1, skipped: 2, failed: 0 });
  });

  it('still runs errors again over a source that fetches by id', async () => {
    writeTree(gw.srcRoot, { 'caps/x.txt': 'X', 'caps/y.txt': 'Y' });
    const jobId = await defineJob(gw, jobBody('src-errors', { source: { connectorId: 'src', folderPath: '/caps' }, target: { connectorId: 'dst', folderPath: '/caps-out' } }));
    gw.src.failing = /^y\.txt$/;
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', failed: 1 });
    gw.src.failing = undefined;
    await call(gw, jobId, 'runerrors');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 1, written: 1 });
  });
});
