import { freePort } from '../support/process';
import { rawRequest } from '../support/proxy';
import { call, defineJob, jobBody, startJobsGateway, treeBytes, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

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

// Production's configuration: metrics on, so the registry hands out every connector wrapped in the
// metrics Proxy (apps/api/src/metrics/instrument-connector.ts). The target finds the source's files
// through its localFiles group, whatever wraps it; a check of the driver's identity failed here, and
// every document was streamed.
describe('A job between two filesystem connectors, metrics on', () => {
  let gw: JobsGateway;
  let metricsUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    gw = await startJobsGateway({ env: { HOST: '127.0.0.1', GATEWAY_METRICS_PORT: String(port) } });
    // The source as the registry hands it out, without the suite's fault injection.
    gw.src.restore();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  });
  afterAll(() => gw?.close());

  it('copies every document directly (the copy thread), counted as directCopy.copyFrom: no content stream, no createFile', async () => {
    const tree = { 'in/a.txt': 'alpha', 'in/b.txt': 'beta', 'in/sub/c.txt': 'gamma', 'in/sub/deeper/d.bin': Buffer.from([0, 1, 2]) };
    writeTree(gw.srcRoot, tree);
    const jobId = await defineJob(gw, jobBody('direct'));
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED' });
    expect(treeBytes(gw.dstRoot)).toEqual(Object.fromEntries(Object.entries(tree).map(([rel, content]) => [rel.replace(/^in\//, 'out/'), Buffer.from(content)])));

    const text = (await rawRequest(metricsUrl)).body.toString('utf8');
    const calls = (connector: string, operation: string, outcome?: string) =>
      total(text, 'gateway_connector_calls_total', { connector, operation, ...(outcome ? { outcome } : {}) });
    expect(calls('dst', 'directCopy.copyFrom', 'ok')).toBe(4);
    expect(calls('src', 'localFiles.unverifiedFile', 'ok')).toBe(4);
    expect(calls('src', 'openContent')).toBe(0);
    expect(calls('dst', 'createFile')).toBe(0);
  });
});
