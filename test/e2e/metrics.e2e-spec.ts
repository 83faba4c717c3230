import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createUser, listen, seedDocument, startBatch, waitFor, waitForExport, type TestUser } from '../support/files';
import { freePort } from '../support/process';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { multipartFile, rawRequest } from '../support/proxy';
import { call, defineJob, jobBody, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/** The value of one sample of the Prometheus text (0 when the series does not exist yet). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (wanted.every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

describe('Metrics are off by default', () => {
  it('serves no /metrics anywhere on the API port', async () => {
    const gw = await startGateway();
    try {
      for (const p of ['/metrics', '/api/metrics']) await gw.http().get(p).set('Authorization', adminAuth()).expect(404);
    } finally {
      await gw.close();
    }
  });
});

describe('GET /metrics on GATEWAY_METRICS_PORT', () => {
  let gw: TestGateway;
  let metricsUrl: string;
  let alice: TestUser;
  const scrape = async () => {
    const res = await rawRequest(metricsUrl);
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body.toString('utf8');
  };

  beforeAll(async () => {
    const port = await freePort();
    gw = await startGateway({ env: { HOST: '127.0.0.1', GATEWAY_METRICS_PORT: String(port), GATEWAY_LOGIN_MAX_FAILURES: '2', GATEWAY_CONTEXT_PATH: '/gateway' } });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    alice = await createUser(gw, 'alice');
  });
  afterAll(() => gw?.close());

  /** The id of a document that was deleted from the disk since. */
  async function goneDocument(): Promise<string> {
    const id = await seedDocument(gw, 'm/gone.txt', 'soon gone');
    fs.rmSync(path.join(gw.dataDir, 'repository', 'm', 'gone.txt'));
    return id;
  }

  it('is served on its own port only: not on the API port, nothing else on the metrics port', async () => {
    await gw.http().get('/gateway/api/metrics').set('Authorization', adminAuth()).expect(404);
    await gw.http().get('/metrics').expect(404);
    expect((await rawRequest(metricsUrl.replace('/metrics', '/gateway/api/repo/connections'), { headers: { Authorization: adminAuth() } })).status).toBe(404);
    expect((await rawRequest(metricsUrl, { method: 'POST' })).status).toBe(404);
  });

  it('counts requests by route template and status, with latency and bytes', async () => {
    const id = await seedDocument(gw, 'm/doc.bin', Buffer.alloc(100_000, 7));
    const gone = await goneDocument();
    const before = await scrape();
    const labels = { method: 'GET', route: '/api/repo/:connectorId/file', status: '200' };
    for (let i = 0; i < 3; i++) await gw.http().get(`${gw.api}/repo/fs/file`).query({ id }).set('Authorization', alice.auth).expect(200);
    await gw.http().get(`${gw.api}/repo/fs/file`).query({ id: gone }).set('Authorization', alice.auth).expect(404);
    await gw.http().get('/gateway/no/such/route').expect(404);
    const after = await scrape();
    // Counters are cumulative over the whole describe: every figure is what this test added to them.
    const grew = (name: string, sampleLabels: Record<string, string>) => sample(after, name, sampleLabels) - sample(before, name, sampleLabels);
    expect(grew('gateway_http_requests_total', labels)).toBe(3);
    expect(grew('gateway_http_requests_total', { ...labels, status: '404' })).toBe(1);
    expect(grew('gateway_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(grew('gateway_http_request_duration_seconds_count', labels)).toBe(3);
    expect(grew('gateway_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(3);
    expect(grew('gateway_http_sent_bytes_total', { route: labels.route })).toBeGreaterThanOrEqual(300_000);

    const base = await listen(gw);
    const upload = multipartFile('up.bin', Buffer.alloc(50_000, 1));
    const rootId = (await gw.http().get(`${gw.api}/repo/fs/rootfolderid`).set('Authorization', alice.auth).expect(200)).body.results.folderId;
    const receivedBefore = sample(await scrape(), 'gateway_http_received_bytes_total', { route: '/api/repo/:connectorId/file' });
    const created = await rawRequest(`${base}${gw.api}/repo/fs/file?folderId=${encodeURIComponent(rootId)}`, { method: 'POST', headers: { ...upload.headers, Authorization: alice.auth }, body: upload.body });
    expect(created.status).toBe(201);
    const receivedAfter = sample(await scrape(), 'gateway_http_received_bytes_total', { route: '/api/repo/:connectorId/file' });
    expect(receivedAfter - receivedBefore).toBeGreaterThanOrEqual(50_000);
  });

  it('counts connector calls by connector, operation (groups included) and outcome', async () => {
    const id = await seedDocument(gw, 'm/versioned.txt', 'v1');
    const gone = await goneDocument();
    const before = await scrape();
    await gw.http().get(`${gw.api}/repo/fs/listversions`).query({ id }).set('Authorization', alice.auth).expect(200);
    await gw.http().get(`${gw.api}/repo/fs/properties`).query({ id: gone }).set('Authorization', alice.auth).expect(404);
    const after = await scrape();
    const calls = (operation: string, outcome: string, text: string) => sample(text, 'gateway_connector_calls_total', { connector: 'fs', operation, outcome });
    expect(calls('versioning.listVersions', 'ok', after) - calls('versioning.listVersions', 'ok', before)).toBe(1);
    expect(calls('getItem', 'not_found', after) - calls('getItem', 'not_found', before)).toBeGreaterThanOrEqual(1);
    const timed = (text: string) => sample(text, 'gateway_connector_call_duration_seconds_count', { connector: 'fs', operation: 'versioning.listVersions', outcome: 'ok' });
    expect(timed(after) - timed(before)).toBe(1);
  });

  it('shows a download in progress as an active transfer until it ends', async () => {
    const big = path.join(gw.dataDir, 'repository', 'm', 'big.bin');
    fs.writeFileSync(big, Buffer.alloc(64 * 1024 * 1024, 3));
    const id = await seedDocument(gw, 'm/big.bin', fs.readFileSync(big));
    const base = await listen(gw);
    const active = async () => sample(await scrape(), 'gateway_active_transfers', { direction: 'download' });
    expect(await active()).toBe(0);
    // A client that reads one chunk and then stops: the gateway waits on backpressure, the transfer stays open.
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${base}${gw.api}/repo/fs/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: alice.auth } }, resolve).on('error', reject),
    );
    res.pause();
    expect(await active()).toBe(1);
    res.destroy();
    await waitFor(async () => ((await active()) === 0 ? true : undefined), 'the transfer to end');
  });

  it('counts login failures, lock-outs started and lock-out refusals, and exports by outcome', async () => {
    const before = await scrape();
    await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'mallory', password: 'mallory-pass-1', roles: ['user'] }).expect(201);
    await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('mallory', 'wrong-1')).expect(401);
    await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('mallory', 'wrong-2')).expect(401);
    await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('mallory', 'mallory-pass-1')).expect(429);
    await gw.http().get(`${gw.api}/repo/connections`).expect(401); // no credentials: not a login failure

    const id = await seedDocument(gw, 'm/for-export.txt', 'export me');
    const batch = await startBatch(gw, alice, [{ connId: 'fs', id }]);
    await waitForExport(gw, alice, batch.docId);
    const after = await scrape();
    expect(sample(after, 'gateway_login_failures_total') - sample(before, 'gateway_login_failures_total')).toBe(2);
    expect(sample(after, 'gateway_login_locked_out_total') - sample(before, 'gateway_login_locked_out_total')).toBe(1);
    // The second failure reached the limit (2): one lock-out started.
    expect(sample(after, 'gateway_login_lockouts_total') - sample(before, 'gateway_login_lockouts_total')).toBe(1);
    expect(sample(after, 'gateway_exports_total', { outcome: 'ready' }) - sample(before, 'gateway_exports_total', { outcome: 'ready' })).toBe(1);
    // Process metrics.
    expect(sample(after, 'gateway_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(after, 'gateway_nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(after).toContain('gateway_nodejs_eventloop_lag_seconds');
  });
});

describe('Job documents by outcome', () => {
  let gw: JobsGateway;
  let metricsUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    gw = await startJobsGateway({ env: { HOST: '127.0.0.1', GATEWAY_METRICS_PORT: String(port) } });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  });
  afterAll(() => gw?.close());

  it('counts documents written, then skipped as duplicates', async () => {
    writeTree(gw.srcRoot, { 'in/a.txt': 'a', 'in/b.txt': 'b', 'in/sub/c.txt': 'c' });
    const jobId = await defineJob(gw, jobBody('metrics'));
    await call(gw, jobId, 'start');
    await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    await call(gw, jobId, 'start');
    await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const text = (await rawRequest(metricsUrl)).body.toString('utf8');
    expect(sample(text, 'gateway_job_documents_total', { outcome: 'written' })).toBe(3);
    expect(sample(text, 'gateway_job_documents_total', { outcome: 'skipped' }) + sample(text, 'gateway_job_documents_total', { outcome: 'duplicate' })).toBe(3);
  });
});
