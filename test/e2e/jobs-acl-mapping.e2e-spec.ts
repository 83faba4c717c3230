import * as fs from 'node:fs';
import * as path from 'node:path';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { GraphSetup, useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * Permission mapping (issue 34 §2): a copy job CMIS (OpenCMIS InMemory) → SharePoint REST (simulator) with
 * copyAcls carries each document's entries through aclMapping: a mapped principal gets the mapped permission
 * on the target, one outside the map is dropped with a warning in the outcome (or fails the document under
 * `unmapped: fail`); maps from CSV files under <dataDir>/mappings; Graph roles CMIS → Graph (simulator);
 * bad definitions are 400s naming the option.
 */
describe(`Jobs carrying permissions CMIS → SharePoint REST (${MODE} mode)`, () => {
  let cmis: CmisEngine;
  let sp: SharePointEngine;
  let graph: GraphEngine;
  let graphFolder: string;
  let gw: JobsGateway;
  let cmisFolder: string;
  let spFolder: string;

  beforeAll(async () => {
    [cmis, sp, graph] = await Promise.all([useCmisEngine(), useSharePointEngine(), useGraphEngine()]);
    graphFolder = `acl-jobs-${Date.now().toString(36)}`;
    await new GraphSetup(graph.info).createFolder(graphFolder);
    const made = await new CmisSetup(cmis.info).createTestFolder('acl-jobs');
    cmisFolder = made.path;
    spFolder = (await new SharePointSetup(sp.info).createTestFolder('acl-jobs')).path;
    const connectors = [
      { id: 'cmis', typeId: 'cmis', description: 'OpenCMIS InMemory', params: { url: cmis.info.browserUrl, repositoryId: cmis.info.repositoryId, user: cmis.info.username, password: '${ACL_CMIS_PASSWORD}' } },
      { id: 'sp', typeId: 'sharepoint', description: 'SharePoint simulator', params: sp.info.connectorParams },
      { id: 'graph', typeId: 'graph', description: 'Graph simulator', params: graph.info.connectorParams },
    ];
    gw = await startJobsGateway({ extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join(''), env: { ACL_CMIS_PASSWORD: cmis.info.password } });
  });
  afterAll(async () => {
    await gw?.close();
    await cmis?.release();
    await sp?.release();
    await graph?.release();
  });

  const repo = (method: 'get' | 'post', connector: string, route: string, query: Record<string, string>) =>
    gw.http()[method](`${gw.api}/repo/${connector}/${route}`).query(query).set('Authorization', adminAuth());

  /** A CMIS folder under the test folder with one document whose ACL is `entries` and admin:cmis:all. */
  async function sourceDocument(folder: string, name: string, entries: Record<string, string>): Promise<string> {
    const folderId = (await repo('post', 'cmis', 'folder', { path: `${cmisFolder}/${folder}` }).expect(201)).body.results.id as string;
    const id = (await repo('post', 'cmis', 'file', { folderId, fileName: name }).attach('file', Buffer.from(`content of ${name}`), { filename: name, contentType: 'text/plain' }).expect(201)).body
      .results.id as string;
    // OpenCMIS InMemory takes new principals when "anyone" is rewritten with them; "anyone" is removed after.
    await repo('post', 'cmis', 'acls', { id }).send({ anyone: 'cmis:read', ...entries, admin: 'cmis:all' }).expect(200);
    await gw.http().delete(`${gw.api}/repo/cmis/acls`).query({ id, aclId: 'anyone' }).set('Authorization', adminAuth()).expect(200);
    return id;
  }

  async function runJob(name: string, folder: string, options: Record<string, unknown>) {
    const jobId = await defineJob(gw, { jobName: name, source: { connectorId: 'cmis', folderPath: `${cmisFolder}/${folder}` }, target: { connectorId: 'sp', folderPath: `${spFolder}/${folder}` }, options });
    await call(gw, jobId, 'start');
    const status = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const rows = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as Array<Record<string, any>>;
    // The run's message (why it failed) is the status envelope's.
    const message = (await call(gw, jobId, 'status')).message as string | null;
    return { status, rows, message };
  }

  const targetAcl = async (targetId: string) => (await repo('get', 'sp', 'acls', { id: targetId }).expect(200)).body.results as string[];
  const permissionsOf = (acl: string[], principal: string) => acl.find((e) => e.startsWith(`${principal}:`))?.slice(principal.length + 1).split(',').sort();

  it('gives a mapped principal the mapped permission and drops one outside the map with a warning', async () => {
    await sourceDocument('drop', 'memo.txt', { alice: 'cmis:read', 'finance-team': 'cmis:write', stranger: 'cmis:all' });
    const { status, rows } = await runJob('acl-drop', 'drop', {
      copyAcls: true,
      aclMapping: { principals: { alice: 'alice@contoso.com' }, groups: { 'finance-team': 'Gateway Members' }, permissions: { 'cmis:write': 'Edit' } },
    });
    expect(status).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'p', message: expect.stringContaining("permissions: dropped unmapped principal") });
    expect(rows[0].message).toContain("'stranger'");
    const acl = await targetAcl(rows[0].targetId);
    expect(permissionsOf(acl, 'alice@contoso.com')).toEqual(['read']); // cmis:read → Read (the default table), read back as `read`
    expect(permissionsOf(acl, 'Gateway Members')).toEqual(['Edit']); // the job's own cmis:write → Edit
    expect(acl.some((e) => e.toLowerCase().startsWith('stranger'))).toBe(false);
  });

  it('fails the document naming the principal under unmapped: fail, writing nothing of it to the target', async () => {
    await sourceDocument('fail', 'secret.txt', { alice: 'cmis:read', stranger: 'cmis:read' });
    const { status, rows } = await runJob('acl-fail', 'fail', { copyAcls: true, aclMapping: { principals: { alice: 'alice@contoso.com' }, unmapped: 'fail' } });
    expect(status).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', failed: 1 });
    expect(rows[0]).toMatchObject({ outcome: 'e', message: expect.stringMatching(/^ACL_UNMAPPED: the source ACL has principals? .*'stranger'/) });
    // Checked before the write: no copy without its permissions (a later run with the map fixed writes it whole).
    await repo('get', 'sp', 'idbypath', { folderPath: `${spFolder}/fail`, fileName: 'secret.txt' }).expect(404);
  });

  it('plans first: a dry run names every unmapped principal, lists the outcomes the real run then records, and leaves the target untouched', async () => {
    await sourceDocument('plan/a', 'kept.txt', { alice: 'cmis:read' });
    await sourceDocument('plan/b', 'refused.txt', { alice: 'cmis:read', stranger: 'cmis:write' });
    const jobId = await defineJob(gw, {
      jobName: 'acl-plan',
      source: { connectorId: 'cmis', folderPath: `${cmisFolder}/plan` },
      target: { connectorId: 'sp', folderPath: `${spFolder}/plan` },
      options: { copyAcls: true, aclMapping: { principals: { alice: 'alice@contoso.com' }, groups: { admin: 'Gateway Owners' }, unmapped: 'fail' } },
    });
    const outcomes = (rows: Array<Record<string, any>>) => Object.fromEntries(rows.map((r) => [r.sourcePath as string, r.outcome as string]));
    const report = async () => (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results as Record<string, any>;

    await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query({ dryRun: 'true' }).set('Authorization', adminAuth()).expect(200);
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ dryRun: true, written: 1, failed: 1 });
    const plan = await report();
    expect(plan.unmapped).toMatchObject({ principal: { stranger: 1 } });
    expect(plan.rows.find((r: Record<string, any>) => String(r.sourcePath).endsWith('refused.txt'))).toMatchObject({ outcome: 'e', plan: 'fail', message: expect.stringContaining("ACL_UNMAPPED: the source ACL has principal 'stranger'") });
    expect(plan.rows.find((r: Record<string, any>) => String(r.sourcePath).endsWith('kept.txt'))).toMatchObject({ outcome: 'p', plan: 'create' });
    // Untouched: not even the target folder is made.
    await repo('get', 'sp', 'idbypath', { folderPath: spFolder, fileName: 'plan' }).expect(404);

    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ dryRun: false, written: 1, failed: 1 });
    const real = await report();
    expect(outcomes(real.rows)).toEqual(outcomes(plan.rows));
    const kept = (await repo('get', 'sp', 'idbypath', { folderPath: `${spFolder}/plan/a`, fileName: 'kept.txt' }).expect(200)).body.results.id as string;
    expect(permissionsOf(await targetAcl(kept), 'alice@contoso.com')).toEqual(['read']);
    await repo('get', 'sp', 'idbypath', { folderPath: `${spFolder}/plan/b`, fileName: 'refused.txt' }).expect(404);
  });

  it('reads principals from a CSV file under <dataDir>/mappings; a bad line fails the run naming it', async () => {
    fs.mkdirSync(path.join(gw.dataDir, 'mappings'), { recursive: true });
    fs.writeFileSync(path.join(gw.dataDir, 'mappings', 'users.csv'), 'source,target\nalice,alice@contoso.com\nbob,bob@contoso.com\nadmin,Gateway Owners\n');
    await sourceDocument('csv', 'shared.txt', { alice: 'cmis:write', bob: 'cmis:read' });
    const { status, rows } = await runJob('acl-csv', 'csv', { copyAcls: true, aclMapping: { principalsFile: 'users.csv', unmapped: 'fail' } });
    expect(status).toMatchObject({ status: 'COMPLETED', written: 1 });
    const acl = await targetAcl(rows[0].targetId);
    expect(permissionsOf(acl, 'alice@contoso.com')).toEqual(['write']);
    expect(permissionsOf(acl, 'bob@contoso.com')).toEqual(['read']);

    fs.writeFileSync(path.join(gw.dataDir, 'mappings', 'broken.csv'), 'alice,alice@contoso.com\nbob;bob@contoso.com\n');
    const broken = await runJob('acl-csv-broken', 'csv', { copyAcls: true, aclMapping: { principalsFile: 'broken.csv' } });
    expect(broken.status.status).toBe('FAILED');
    expect(broken.message).toBe("Invalid parameter 'options.aclMapping.principalsFile': broken.csv line 2: expected 'source,target', found 0 commas");
  });

  it('maps CMIS permissions to Graph roles by the default table (CMIS → Graph)', async () => {
    await sourceDocument('graph', 'roles.txt', { alice: 'cmis:write', bob: 'cmis:all' });
    const jobId = await defineJob(gw, {
      jobName: 'acl-graph',
      source: { connectorId: 'cmis', folderPath: `${cmisFolder}/graph` },
      target: { connectorId: 'graph', folderPath: `/${graphFolder}` },
      options: { copyAcls: true, aclMapping: { principals: { alice: 'alice@contoso.com', bob: 'bob@contoso.com' } } },
    });
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1 });
    const row = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows[0];
    expect(row.message).toBe("permissions: dropped unmapped principal 'admin'");
    const acl = (await repo('get', 'graph', 'acls', { id: row.targetId }).expect(200)).body.results as string[];
    expect(acl).toEqual(expect.arrayContaining(['alice@contoso.com:write', 'bob@contoso.com:owner']));
  });

  it.each([
    ['a target without acls', { target: { connectorId: 'dst', folderPath: '/out' }, options: { copyAcls: true } }, 'options.copyAcls', "'dst'"],
    ['aclMapping without copyAcls', { options: { aclMapping: { principals: { a: 'b' } } } }, 'options.aclMapping', 'copyAcls'],
    ['a principal mapped twice', { options: { copyAcls: true, aclMapping: { principals: { Alice: 'a', alice: 'b' } } } }, 'options.aclMapping.principals', 'mapped twice'],
    ['an empty source name', { options: { copyAcls: true, aclMapping: { groups: { '': 'x' } } } }, 'options.aclMapping.groups', 'empty'],
    ['a file outside the mappings folder', { options: { copyAcls: true, aclMapping: { principalsFile: '../gateway.db' } } }, 'options.aclMapping.principalsFile', 'principalsFile'],
    ['an unknown key', { options: { copyAcls: true, aclMapping: { users: { a: 'b' } } } }, 'options.aclMapping.users', 'users'],
    ['an unknown unmapped', { options: { copyAcls: true, aclMapping: { unmapped: 'keep' } } }, 'options.aclMapping.unmapped', 'unmapped'],
  ])('refuses %s at definition time (400 naming it)', async (_what, extra, parameter, mention) => {
    const body = { jobName: `acl-bad-${Math.random().toString(36).slice(2)}`, source: { connectorId: 'cmis', folderPath: cmisFolder }, target: { connectorId: 'sp', folderPath: spFolder }, ...extra };
    const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(parameter);
    expect(JSON.stringify(res.body)).toContain(mention);
  });

  it('describes copyAcls and aclMapping in the OpenAPI document', async () => {
    const doc = (await gw.http().get('/api/docs-json').expect(200)).body;
    const schemas = doc.components.schemas as Record<string, { properties?: Record<string, unknown> }>;
    expect(schemas.JobOptionsDto.properties).toHaveProperty('copyAcls');
    expect(schemas.JobOptionsDto.properties).toHaveProperty('aclMapping');
    expect(Object.keys(schemas.AclMappingDto.properties ?? {}).sort()).toEqual(['groups', 'groupsFile', 'permissions', 'principals', 'principalsFile', 'unmapped']);
  });
});
