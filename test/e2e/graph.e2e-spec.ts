/**
 * The Graph connector through the gateway against the Graph simulator, beyond the contract suite:
 * permissions (spec 4.3), throttling honoured and, when it lasts, answered 503 + Retry-After, the
 * token refreshed once after an early expiry, a download cut mid-way not passed off as whole, and a
 * job Graph → filesystem of 100 documents with a throttled window in the middle.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { adminAuth } from '../support/gateway';
import { rawBody } from '../contract/support';
import { GraphSetup, useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';
import { SimulatorControl } from '../engines/simulators/common/control';
import { call, defineJob, jobBody, startJobsGateway, treeBytes, waitStatus, type JobsGateway } from './jobs-helpers';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('Graph connector against the Graph simulator', () => {
  let engine: GraphEngine;
  let setup: GraphSetup;
  let control: SimulatorControl;
  let gw: JobsGateway;
  let folder: string;
  let folderId: string;

  beforeAll(async () => {
    engine = await useGraphEngine();
    setup = new GraphSetup(engine.info);
    control = new SimulatorControl(engine.info.url, engine.info.caFile);
    folder = `e2e-${randomBytes(4).toString('hex')}`;
    folderId = await setup.createFolder(folder);
    const params = { ...engine.info.connectorParams, clientSecret: '${GRAPH_SECRET}' };
    const connectors = [
      { id: 'graph', typeId: 'graph', description: 'Graph simulator', params },
      { id: 'graph-once', typeId: 'graph', description: 'Graph simulator, one retry', params: { ...params, maxRetries: 1 } },
      {
        id: 'graph-cert',
        typeId: 'graph',
        description: 'Graph simulator, certificate credential',
        params: { ...engine.info.connectorParams, clientSecret: undefined, certificatePath: engine.info.certificatePath, certificateThumbprint: engine.info.certificateThumbprint },
      },
    ];
    gw = await startJobsGateway({ extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join(''), env: { GRAPH_SECRET: engine.info.clientSecret } });
  });

  afterAll(async () => {
    await control?.clearFaults().catch(() => undefined);
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  afterEach(() => control.clearFaults());

  const repo = (method: 'get' | 'post' | 'delete' | 'put', connector: string, route: string, query: Record<string, string>) =>
    gw.http()[method](`${gw.api}/repo/${connector}/${route}`).query(query).set('Authorization', adminAuth());

  async function uploadViaGateway(name: string, bytes: Buffer): Promise<string> {
    const res = await repo('post', 'graph', 'file', { folderId, fileName: name }).attach('file', bytes, { filename: name, contentType: 'application/octet-stream' }).expect(201);
    return res.body.results.id;
  }

  it('manages permissions: grant, replace, list, remove; roles are read, write, owner', async () => {
    const id = await uploadViaGateway('acl.txt', Buffer.from('shared'));
    const before = (await repo('get', 'graph', 'acls', { id }).expect(200)).body.results as string[];
    expect(before).toEqual(['owners@contoso.onmicrosoft.com:owner']); // inherited from the library
    const granted = (await repo('post', 'graph', 'acls', { id }).send({ 'ryan@contoso.com': 'read,write', 'ann@contoso.com': 'read' }).expect(200)).body.results;
    expect([...granted].sort()).toEqual(['ann@contoso.com:read', 'owners@contoso.onmicrosoft.com:owner', 'ryan@contoso.com:read,write']);
    const replaced = (await repo('post', 'graph', 'acls', { id }).send({ 'ryan@contoso.com': 'read' }).expect(200)).body.results;
    expect(replaced).toContain('ryan@contoso.com:read');
    expect(replaced).not.toContain('ryan@contoso.com:read,write');
    const removed = await repo('delete', 'graph', 'acls', { id, aclId: 'ryan@contoso.com,nobody@contoso.com' }).expect(200);
    expect(removed.body.results).toBe('ryan@contoso.com');
    expect((await repo('get', 'graph', 'acls', { id }).expect(200)).body.results).toEqual(['ann@contoso.com:read', 'owners@contoso.onmicrosoft.com:owner']);
    // What Graph cannot grant is refused before any call, naming the principal.
    const badRole = await repo('post', 'graph', 'acls', { id }).send({ 'ann@contoso.com': 'cmis:all' });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.parameter).toBe('ann@contoso.com');
    const notEmail = await repo('post', 'graph', 'acls', { id }).send({ alice: 'read' });
    expect(notEmail.status).toBe(400);
    expect(notEmail.body.error.parameter).toBe('alice');
  });

  it('refuses to remove an inherited permission: 409 naming the ancestor; breakInheritance=true is 501 (Graph has no such call)', async () => {
    const id = await uploadViaGateway(`inherits-${randomBytes(3).toString('hex')}.txt`, Buffer.from('inherits'));
    const refused = await repo('delete', 'graph', 'acls', { id, aclId: 'owners@contoso.onmicrosoft.com' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('ACL_INHERITED');
    expect(refused.body.message).toContain("inherited from '/'");
    expect(refused.body.error).toMatchObject({ principal: 'owners@contoso.onmicrosoft.com', inheritedFrom: '/' });
    const breaking = await repo('delete', 'graph', 'acls', { id, aclId: 'owners@contoso.onmicrosoft.com', breakInheritance: 'true' });
    expect(breaking.status).toBe(501);
    expect(breaking.body.error.capability).toBe('breakInheritance');
    expect((await repo('get', 'graph', 'acls', { id }).expect(200)).body.results).toEqual(['owners@contoso.onmicrosoft.com:owner']);
  });

  it('authenticates with a certificate (client assertion) as well as with a secret', async () => {
    // graph-cert has no clientSecret at all: the upload succeeding means its assertion was accepted.
    const res = await repo('post', 'graph-cert', 'file', { folderId, fileName: 'by-cert.txt' }).attach('file', Buffer.from('signed in with a certificate'), { filename: 'by-cert.txt' }).expect(201);
    const body = await repo('get', 'graph', 'file', { id: res.body.results.id }).buffer(true).parse(rawBody).expect(200);
    expect(body.body.toString()).toBe('signed in with a certificate');
  });

  it('lists sites, sub-sites and the libraries of a site (the sites group)', async () => {
    const connector = gw.app.get(ConnectorRegistry).get('graph');
    const sites = (await connector.sites!.getAllSites()) as Array<{ id: string; name: string }>;
    expect(sites.map((s) => s.id)).toContain(engine.info.siteId);
    const subSites = (await connector.sites!.getSubSites(engine.info.siteId)) as Array<{ name: string }>;
    expect(subSites.map((s) => s.name)).toEqual(['team']);
    const libraries = (await connector.sites!.getLibrariesForSite(engine.info.siteId)) as Array<{ id: string; name: string }>;
    expect(libraries.map((l) => l.name)).toEqual(['Documents', 'Archive']);
    expect(libraries[0].id).toBe(engine.info.driveId);
  });

  it('honours 429 + Retry-After: the call succeeds after the throttled answers', async () => {
    const bytes = randomBytes(50_000);
    const id = await uploadViaGateway('throttled.bin', bytes);
    const mark = await control.mark();
    await control.setFaults({ throttle: { count: 2, status: 429, retryAfterSeconds: 1 } });
    const res = await repo('get', 'graph', 'file', { id }).buffer(true).parse(rawBody).expect(200);
    expect(sha256(res.body)).toBe(sha256(bytes));
    const statuses = (await control.requests(mark)).requests.filter((r) => r.path.startsWith('/v1.0/')).map((r) => r.status);
    expect(statuses.slice(0, 3)).toEqual([429, 429, 200]);
  });

  it('answers 503 with Retry-After when the throttling outlasts maxRetries', async () => {
    const id = await uploadViaGateway('throttled-long.bin', Buffer.from('x'));
    await control.setFaults({ throttle: { count: 5, status: 503, retryAfterSeconds: 1 } });
    const res = await repo('get', 'graph-once', 'properties', { id });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    await control.clearFaults();
    await repo('get', 'graph-once', 'properties', { id }).expect(200);
  });

  it('gets a new token once after the identity provider expired them early', async () => {
    const id = await uploadViaGateway('token.txt', Buffer.from('token'));
    await control.setFaults({ expireTokens: true });
    const mark = await control.mark();
    await repo('get', 'graph', 'properties', { id }).expect(200);
    const log = (await control.requests(mark)).requests.map((r) => `${r.method} ${r.path.startsWith('/v1.0/') ? 'api' : r.path.includes('/token') ? 'token' : r.path} ${r.status}`);
    expect(log.slice(0, 3)).toEqual(['GET api 401', 'POST token 200', 'GET api 200']);
  });

  it('does not pass a download cut mid-way off as complete', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    const id = await uploadViaGateway('cut.bin', bytes);
    await control.setFaults({ dropDownload: { afterBytes: 100_000 } });
    const outcome = await repo('get', 'graph', 'file', { id })
      .buffer(true)
      .parse(rawBody)
      .then(
        (res) => ({ status: res.status, length: (res.body as Buffer).length }),
        (error: Error) => ({ error: error.message }),
      );
    // Either the transfer fails or fewer bytes than announced arrive: never a 200 with the whole length.
    expect(outcome).not.toEqual({ status: 200, length: bytes.length });
    const again = await repo('get', 'graph', 'file', { id }).buffer(true).parse(rawBody).expect(200);
    expect(sha256(again.body)).toBe(sha256(bytes));
  });

  it('job Graph → filesystem: 100 documents arrive whole through a throttled window', async () => {
    const source = `${folder}/job-source`;
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 100; i++) files[`doc-${String(i).padStart(3, '0')}.bin`] = randomBytes(1000 + i * 37);
    // The folder, then the documents, set up directly on the simulator (not through the connector under test).
    const created = await setup.call('POST', `/items/${folderId}/children`, { name: 'job-source', folder: {}, '@microsoft.graph.conflictBehavior': 'replace' });
    expect(created.status).toBe(201);
    for (const [name, bytes] of Object.entries(files)) await setup.put(`${source}/${name}`, bytes);

    const jobId = await defineJob(gw, jobBody('graph-to-fs', { source: { connectorId: 'graph', folderPath: `/${source}` }, target: { connectorId: 'dst', folderPath: '/from-graph' } }));
    const mark = await control.mark();
    await control.setFaults({ delay: { ms: 20, count: 40 } });
    await call(gw, jobId, 'start');
    // The throttled window: some calls in, the next eight answers are 429.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const seen = (await control.requests(mark)).requests.length;
      if (seen >= 30) break;
      if (Date.now() > deadline) throw new Error(`the job made ${seen} calls to the simulator within 60 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await control.setFaults({ throttle: { count: 8, status: 429, retryAfterSeconds: 1 } });
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ status: 'COMPLETED', read: 100, written: 100, failed: 0 });
    const landed = treeBytes(path.join(gw.dstRoot, 'from-graph'));
    expect(Object.keys(landed).sort()).toEqual(Object.keys(files).sort());
    for (const [name, bytes] of Object.entries(files)) expect(sha256(landed[name])).toBe(sha256(bytes));
    const throttled = (await control.requests(mark)).requests.filter((r) => r.status === 429);
    expect(throttled).toHaveLength(8);
  });

  it('had the simulator send only bodies that validate against the published Graph schemas', async () => {
    const report = await control.violations();
    expect(report.checked).toBeGreaterThan(100);
    expect(report.violations).toEqual([]);
  });
});
