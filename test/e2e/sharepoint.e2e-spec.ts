import { createHash, randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { SimulatorControl } from '../engines/simulators/common/control';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';
import { rawBody } from '../contract/support';
import { adminAuth, basic } from '../support/gateway';
import { call, defineJob, jobBody, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * The SharePoint REST connector through the gateway against the SharePoint simulator: ACLs (role
 * assignments), check-out between gateway users, throttling (retried, then 503 + Retry-After),
 * token expiry, app-only secrets refused, chunked uploads, a download cut mid-way, and a job of
 * 100 documents filesystem → SharePoint with a throttled window in the middle.
 */
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const ALICE = { username: 'sp-alice', password: 'alice-password-1' };
const BOB = { username: 'sp-bob', password: 'bob-password-12' };

describe('SharePoint connector end to end (SharePoint simulator)', () => {
  let engine: SharePointEngine;
  let setup: SharePointSetup;
  let control: SimulatorControl;
  let gw: JobsGateway;
  let base: string;
  let folderId: string;
  let folderPath: string;

  beforeAll(async () => {
    engine = await useSharePointEngine();
    setup = new SharePointSetup(engine.info);
    control = new SimulatorControl(engine.info.url, engine.info.caFile);
    folderPath = (await setup.createTestFolder('e2e')).path;
    const p = engine.info.connectorParams;
    const connectors = [
      { id: 'sp', typeId: 'sharepoint', description: 'SharePoint', params: p },
      // Small chunks, so a few MiB exercise StartUpload/ContinueUpload/FinishUpload.
      { id: 'spchunks', typeId: 'sharepoint', description: 'SharePoint, 1 MiB chunks', params: { ...p, chunkThresholdBytes: 1024 * 1024, chunkSizeBytes: 1024 * 1024 } },
      // What SharePoint Online refuses: app-only with a client secret.
      {
        id: 'spsecret',
        typeId: 'sharepoint',
        description: 'SharePoint with a secret',
        params: { tenantId: p.tenantId, clientId: p.clientId, clientSecret: engine.info.clientSecret, authorityHost: p.authorityHost, siteUrl: p.siteUrl, library: p.library, caFile: p.caFile },
      },
    ];
    gw = await startJobsGateway({ extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join('') });
    base = `${gw.api}/repo/sp`;
    for (const u of [ALICE, BOB]) await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...u, roles: ['user'] }).expect(201);
    folderId = (await gw.http().get(`${base}/idbypath`).query({ folderPath: '/', fileName: folderPath.slice(1) }).set('Authorization', adminAuth()).expect(200)).body.results.id;
  });
  afterAll(async () => {
    await control?.clearFaults().catch(() => undefined);
    await gw?.close();
    setup?.close();
    await engine?.release();
  });
  afterEach(() => control.clearFaults());

  const api = (method: 'get' | 'post' | 'put' | 'delete', route: string, query: Record<string, string> = {}, auth = adminAuth(), connector = 'sp') =>
    gw.http()[method](`${gw.api}/repo/${connector}/${route}`).query(query).set('Authorization', auth);

  async function upload(bytes: Buffer, name: string, connector = 'sp', auth = adminAuth()): Promise<string> {
    const res = await api('post', 'file', { folderId, fileName: name }, auth, connector).attach('file', bytes, { filename: name, contentType: 'application/octet-stream' });
    expect(res.status).toBe(201);
    return res.body.results.id;
  }

  const download = (id: string, connector = 'sp') => api('get', 'file', { id }, adminAuth(), connector).buffer(true).parse(rawBody);

  it('sets, lists and removes permissions as role assignments, breaking inheritance on the first change', async () => {
    const id = await upload(Buffer.from('acl'), `acl-${randomBytes(3).toString('hex')}.txt`);
    const inherited = (await api('get', 'acls', { id }).expect(200)).body.results as string[];
    // Inherited from the site: its three groups.
    expect(inherited).toEqual(expect.arrayContaining(['Gateway Owners:all', 'Gateway Members:write', 'Gateway Visitors:read']));

    const set = await api('post', 'acls', { id }).send({ 'alice@contoso.com': 'read', 'Gateway Members': 'read,write' }).expect(200);
    expect(set.body.results).toEqual(expect.arrayContaining(['alice@contoso.com:read', 'Gateway Owners:all', 'Gateway Visitors:read']));
    expect((set.body.results as string[]).find((e) => e.startsWith('Gateway Members:'))?.split(':')[1].split(',').sort()).toEqual(['read', 'write']);

    // SharePoint itself now holds unique role assignments with the role definitions asked for.
    const serverSide = await setup.call('GET', `web/GetFileByServerRelativePath(decodedurl=@p)/ListItemAllFields/RoleAssignments?$expand=Member,RoleDefinitionBindings&@p=${encodeURIComponent(`'${new URL(engine.info.siteUrl).pathname}/Shared Documents${folderPath}/${(await api('get', 'properties', { id }).expect(200)).body.results.svc_filename.DisplayName.slice(1, -1)}'`)}`);
    const alice = serverSide.value.find((r: any) => r.Member.LoginName === 'i:0#.f|membership|alice@contoso.com');
    expect(alice.RoleDefinitionBindings.map((d: any) => d.Name)).toEqual(['Read']);

    const removed = await api('delete', 'acls', { id, aclId: 'alice@contoso.com,nobody@contoso.com' }).expect(200);
    expect(String(removed.body.results)).toBe('alice@contoso.com');
    const after = (await api('get', 'acls', { id }).expect(200)).body.results as string[];
    expect(after.some((e) => e.startsWith('alice@contoso.com:'))).toBe(false);

    const bad = await api('post', 'acls', { id }).send({ 'bob@contoso.com': 'superpower' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.parameter).toBe('bob@contoso.com');
  });

  it('refuses to remove an inherited permission (409 naming where it comes from) unless breakInheritance=true', async () => {
    // A folder with its own assignments, and a document in it that inherits them.
    const sub = `${folderPath}/own-${randomBytes(3).toString('hex')}`;
    const subId = (await api('post', 'folder', { path: sub }).expect(201)).body.results.id as string;
    await api('post', 'acls', { id: subId }).send({ 'carol@contoso.com': 'read' }).expect(200);
    const name = `inh-${randomBytes(3).toString('hex')}.txt`;
    const res = await api('post', 'file', { folderId: subId, fileName: name }).attach('file', Buffer.from('inherits'), { filename: name, contentType: 'text/plain' }).expect(201);
    const id = res.body.results.id as string;

    const refused = await api('delete', 'acls', { id, aclId: 'carol@contoso.com' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('ACL_INHERITED');
    expect(refused.body.message).toContain(`inherited from the folder '${sub}'`);
    expect((await api('get', 'acls', { id }).expect(200)).body.results).toContain('carol@contoso.com:read');
    // Inherited from higher up: the library (or the site), named as such.
    const top = await api('delete', 'acls', { id: subId, aclId: 'nobody@contoso.com' }).expect(200);
    expect(String(top.body.results)).toBe('');
    const fromTop = await api('delete', 'acls', { id: folderId, aclId: 'Gateway Visitors' });
    expect(fromTop.status).toBe(409);
    expect(fromTop.body.message).toMatch(/inherited from the (library|site) '/);

    expect((await api('delete', 'acls', { id, aclId: 'carol@contoso.com', breakInheritance: 'maybe' })).body.error.parameter).toBe('breakInheritance');
    const removed = await api('delete', 'acls', { id, aclId: 'carol@contoso.com', breakInheritance: 'true' }).expect(200);
    expect(String(removed.body.results)).toBe('carol@contoso.com');
    const after = (await api('get', 'acls', { id }).expect(200)).body.results as string[];
    expect(after.some((e) => e.startsWith('carol@contoso.com:'))).toBe(false);
    // The rest of the inherited entries were copied onto the document, and the folder keeps carol.
    expect(after).toEqual(expect.arrayContaining(['Gateway Owners:all']));
    expect((await api('get', 'acls', { id: subId }).expect(200)).body.results).toContain('carol@contoso.com:read');
  });

  it("blocks another gateway user's update of a checked-out document with 409 naming the holder", async () => {
    const id = await upload(Buffer.from('v1'), `co-${randomBytes(3).toString('hex')}.txt`, 'sp', basic(ALICE.username, ALICE.password));
    await api('post', 'checkout', { id }, basic(ALICE.username, ALICE.password)).expect(200);
    const res = await api('put', 'updateContent', { fileId: id }, basic(BOB.username, BOB.password)).set('Content-Type', 'text/plain').send('bob');
    expect(res.status).toBe(409);
    expect(res.body.message).toContain(ALICE.username);
    await api('post', 'checkin', { id, comment: 'done' }, basic(ALICE.username, ALICE.password)).expect(200);
    await api('put', 'updateContent', { fileId: id }, basic(BOB.username, BOB.password)).set('Content-Type', 'text/plain').send('bob').expect(200);
  });

  it('retries throttled calls after Retry-After and succeeds', async () => {
    const mark = await control.mark();
    await control.setFaults({ throttle: { count: 2, status: 429, retryAfterSeconds: 1 } });
    const bytes = randomBytes(5000);
    const id = await upload(bytes, `throttled-${randomBytes(3).toString('hex')}.bin`);
    expect(sha((await download(id).expect(200)).body)).toBe(sha(bytes));
    const { requests } = await control.requests(mark);
    expect(requests.filter((r) => r.status === 429)).toHaveLength(2);
  });

  it('answers 503 with Retry-After once the retries are spent', async () => {
    await control.setFaults({ throttle: { count: 50, status: 503, retryAfterSeconds: 1, pathContains: '/_api/' } });
    const res = await api('get', 'folderitems', { id: folderId });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.error.code).toBe('UPSTREAM_THROTTLED');
  });

  it('gets a new token once when SharePoint refuses an expired one', async () => {
    await api('get', 'folderitems', { id: folderId }).expect(200);
    const mark = await control.mark();
    await control.setFaults({ expireTokens: true });
    await api('get', 'folderitems', { id: folderId }).expect(200);
    const { requests } = await control.requests(mark);
    expect(requests.some((r) => r.status === 401)).toBe(true);
    expect(requests.some((r) => r.path.includes('/oauth2/v2.0/token') && r.status === 200)).toBe(true);
  });

  it('is refused by SharePoint app-only with a client secret (a certificate is required), reported as 502', async () => {
    const res = await api('get', 'folderitems', { id: folderId }, adminAuth(), 'spsecret');
    expect(res.status).toBe(502);
    expect(res.body.message).toMatch(/credentials/);
  });

  it('uploads and updates above the chunk threshold with StartUpload/ContinueUpload/FinishUpload', async () => {
    const mark = await control.mark();
    const bytes = randomBytes(3 * 1024 * 1024 + 12345);
    const id = await upload(bytes, `chunked-${randomBytes(3).toString('hex')}.bin`, 'spchunks');
    expect(sha((await download(id, 'spchunks').expect(200)).body)).toBe(sha(bytes));
    const paths = (await control.requests(mark)).requests.map((r) => r.path);
    expect(paths.filter((p) => /StartUpload/i.test(p))).toHaveLength(1);
    expect(paths.filter((p) => /ContinueUpload/i.test(p))).toHaveLength(2);
    expect(paths.filter((p) => /FinishUpload/i.test(p))).toHaveLength(1);

    const v2 = randomBytes(2 * 1024 * 1024 + 7);
    await api('put', 'updateContent', { fileId: id }, adminAuth(), 'spchunks').set('Content-Type', 'application/octet-stream').send(v2).expect(200);
    expect(sha((await download(id, 'spchunks').expect(200)).body)).toBe(sha(v2));
    const versions = (await api('get', 'listversions', { id }, adminAuth(), 'spchunks').expect(200)).body.results as Array<{ versionLength: number }>;
    expect(versions.map((v) => v.versionLength)).toContain(bytes.length);
  });

  it('cuts the gateway download when SharePoint drops the connection mid-body', async () => {
    const bytes = randomBytes(400_000);
    const id = await upload(bytes, `dropped-${randomBytes(3).toString('hex')}.bin`);
    await control.setFaults({ dropDownload: { afterBytes: 50_000, count: 1 } });
    const outcome = await download(id).then(
      (res) => ({ status: res.status, length: (res.body as Buffer).length }),
      (e: Error) => ({ error: e.message }),
    );
    // Either the transfer errors, or it is short of Content-Length: never a "complete" wrong body.
    if ('length' in outcome) expect(outcome.length).toBeLessThan(bytes.length);
    else expect(outcome.error).toBeTruthy();
    expect(sha((await download(id).expect(200)).body)).toBe(sha(bytes));
  });

  it('lists the site, its sub-sites and their document libraries (the sites group)', async () => {
    const sites = gw.app.get(ConnectorRegistry).get('sp').sites!;
    expect(sites).toBeDefined();
    const site = new URL(engine.info.siteUrl).pathname;
    expect(await sites.getAllSites()).toEqual([expect.objectContaining({ id: site, name: 'Gateway', url: engine.info.siteUrl })]);
    expect(await sites.getSubSites(site)).toEqual([expect.objectContaining({ id: `${site}/team`, name: 'Team' })]);
    expect(await sites.getLibrariesForSite(`${site}/team`)).toEqual([expect.objectContaining({ name: 'Documents', path: `${site}/team/Shared Documents` })]);
    await expect(sites.getSubSites('/sites/../x')).rejects.toMatchObject({ kind: 'invalid_argument', details: { parameter: 'siteId' } });
    await expect(sites.getSubSites('/sites/nope')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('copies 100 documents filesystem → SharePoint in a job with a throttled window in the middle, nothing lost', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 100; i++) files[`doc-${String(i).padStart(3, '0')}.bin`] = randomBytes(1000 + i);
    writeTree(path.join(gw.srcRoot, 'to-sp'), files);
    const target = `${folderPath}/from-fs`;
    const jobId = await defineJob(gw, jobBody('fs-to-sp', { source: { connectorId: 'src', folderPath: '/to-sp' }, target: { connectorId: 'sp', folderPath: target } }));
    const mark = await control.mark();
    await call(gw, jobId, 'start');
    // The window opens once the job is under way (a job that stalls or fails first fails the test here, not at jest's time-out).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { requests } = await control.requests(mark);
      if (requests.filter((r) => /AddUsingPath/i.test(r.path)).length >= 20) break;
      if (Date.now() > deadline) throw new Error(`the job uploaded ${requests.filter((r) => /AddUsingPath/i.test(r.path)).length} of 100 documents within 60 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await control.setFaults({ throttle: { count: 6, status: 429, retryAfterSeconds: 1, pathContains: '/_api/' } });
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ status: 'COMPLETED', read: 100, written: 100, failed: 0 });
    expect((await control.requests(mark)).requests.filter((r) => r.status === 429).length).toBe(6);

    const targetId = (await api('get', 'idbypath', { folderPath, fileName: 'from-fs' }).expect(200)).body.results.id;
    const listed = (await api('get', 'folderitems', { id: targetId }).expect(200)).body.results as Record<string, { Id: string; Name: string }>;
    expect(Object.values(listed).map((e) => e.Name).sort()).toEqual(Object.keys(files).sort());
    for (const entry of Object.values(listed)) expect(sha((await download(entry.Id).expect(200)).body)).toBe(sha(files[entry.Name]));
  });
});
