import { Readable } from 'node:stream';
import type { ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * A copy job's property and type mapping (options.mapping), CMIS (OpenCMIS InMemory) → SharePoint
 * REST (the simulator): mapped and transformed values and constants arrive in typed columns,
 * unmapped properties follow keep / drop / fail, and a value a column refuses (not a number,
 * longer than a single line of text takes) is an `e` record naming the property, with nothing
 * written for it. Filesystem → CMIS: the type mapped to a CMIS document type, a read-only CMIS property
 * refused by its type definition. Invalid mappings are a 400 naming the key.
 */
const DOC_TYPE = 'gw:mappingDocument';
const SOURCE_PROPERTIES = ['mpTitle', 'mpCount', 'mpKeywords', 'Extra', 'mpOther'];
const actor = { username: 'admin' };

describe(`Jobs with a property mapping, CMIS → SharePoint REST and filesystem → CMIS, ${MODE} mode`, () => {
  let cmisEngine: CmisEngine;
  let spEngine: SharePointEngine;
  let sp: SharePointSetup;
  let gw: JobsGateway;
  let cmis: ContentConnector;
  let target: ContentConnector;
  let sourceFolder: string;
  const targetFolders: string[] = [];

  beforeAll(async () => {
    cmisEngine = await useCmisEngine();
    const cmisSetup = new CmisSetup(cmisEngine.info);
    await cmisSetup.ensureDocumentType(DOC_TYPE, 'VersionableType', SOURCE_PROPERTIES);
    sourceFolder = (await cmisSetup.createTestFolder('mapping')).path;
    spEngine = await useSharePointEngine();
    sp = new SharePointSetup(spEngine.info);
    await ensureColumns(sp, { MapTitle: 2, MapCount: 9, MapTags: 3, MapWave: 2, Extra: 2 });
    for (const stem of ['keep', 'drop', 'fail']) targetFolders.push((await sp.createTestFolder(`mapping-${stem}`)).path);
    const connectors = [
      {
        id: 'cmis',
        typeId: 'cmis',
        description: 'OpenCMIS InMemory',
        params: { url: cmisEngine.info.browserUrl, repositoryId: cmisEngine.info.repositoryId, user: cmisEngine.info.username, password: '${MAPPING_CMIS_PASSWORD}', documentType: DOC_TYPE },
      },
      { id: 'sp', typeId: 'sharepoint', description: 'SharePoint', params: spEngine.info.connectorParams },
    ];
    gw = await startJobsGateway({ extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join(''), env: { MAPPING_CMIS_PASSWORD: cmisEngine.info.password } });
    cmis = gw.app.get(ConnectorRegistry).get('cmis');
    target = gw.app.get(ConnectorRegistry).get('sp');

    const folderId = await cmis.idByPath('/', sourceFolder.slice(1));
    const put = async (name: string, properties: Record<string, string>) => {
      const id = await cmis.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(`${name}\n`)]) }, actor);
      await cmis.propertyUpdate!.updateProperties(id, properties, actor);
    };
    await put('good.txt', { mpTitle: '  Quarterly report ', mpCount: '12', mpKeywords: 'x;  y ;z', Extra: 'kept', mpOther: 'no column for it' });
    await put('not-a-number.txt', { mpTitle: 'ok', mpCount: 'twelve' });
    await put('too-long.txt', { mpTitle: 'T'.repeat(300), mpCount: '1' });
  }, 300_000);
  afterAll(async () => {
    await gw?.close();
    sp?.close();
    await spEngine?.release();
    await cmisEngine?.release();
  });

  /** Typed columns on the library (FieldTypeKind: 2 Text, 3 Note, 9 Number); existing ones are kept. */
  async function ensureColumns(setup: SharePointSetup, columns: Record<string, number>): Promise<void> {
    const list = `web/lists/getbytitle('Documents')/fields`;
    const existing = ((await setup.call('GET', `${list}?$select=Title`)).value as Array<{ Title: string }>).map((f) => f.Title.toLowerCase());
    for (const [title, kind] of Object.entries(columns)) if (!existing.includes(title.toLowerCase())) await setup.call('POST', list, { Title: title, FieldTypeKind: kind });
  }

  const mapping = (unmapped: string) => ({
    properties: {
      mpTitle: { to: 'MapTitle', transform: 'trim' },
      mpCount: 'MapCount',
      mpKeywords: { to: 'MapTags', transform: [{ split: ';' }, 'trim', { join: ', ' }] },
    },
    constants: { MapWave: 'wave-1' },
    types: { [DOC_TYPE]: 'SP.File' },
    unmapped,
  });

  async function runJob(name: string, targetFolder: string, unmapped: string) {
    const jobId = await defineJob(gw, {
      jobName: name,
      source: { connectorId: 'cmis', folderPath: sourceFolder },
      target: { connectorId: 'sp', folderPath: targetFolder },
      options: { mapping: mapping(unmapped), verify: 'size' },
    });
    await call(gw, jobId, 'start');
    const status = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const rows = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as Array<Record<string, string>>;
    return { status, byName: Object.fromEntries(rows.map((r) => [r.relPath, r])) };
  }

  async function targetProperties(folder: string, name: string): Promise<Record<string, string | null> | undefined> {
    return (await target.getItem(await target.idByPath(folder, name))).properties;
  }

  async function targetNames(folder: string): Promise<string[]> {
    const page = await target.listFolder(await target.idByPath('/', folder.slice(1)));
    return page.items.map((i) => i.name).sort();
  }

  it('keep: mapped, transformed and constant values in the typed columns, same-name properties kept where a column exists, refused values an e naming the property', async () => {
    const { status, byName } = await runJob('mapping-keep', targetFolders[0], 'keep');
    expect(status).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', written: 1, failed: 2 });
    expect(byName['good.txt']).toMatchObject({ outcome: 'p' });
    expect(byName['not-a-number.txt']).toMatchObject({ outcome: 'e', message: "PROPERTY_REFUSED: property 'MapCount': 'twelve' is not a number" });
    expect(byName['too-long.txt']).toMatchObject({ outcome: 'e', message: "PROPERTY_REFUSED: property 'MapTitle': 300 characters, the target takes at most 255" });
    const props = await targetProperties(targetFolders[0], 'good.txt');
    expect(props).toMatchObject({ MapTitle: 'Quarterly report', MapCount: '12', MapTags: 'x, y, z', MapWave: 'wave-1', Extra: 'kept' });
    expect(Object.values(props ?? {})).not.toContain('no column for it');
    // A refused document is not written at all.
    expect(await targetNames(targetFolders[0])).toEqual(['good.txt']);
  });

  it('drop: only mapped properties and constants', async () => {
    const { byName } = await runJob('mapping-drop', targetFolders[1], 'drop');
    expect(byName['good.txt']).toMatchObject({ outcome: 'p' });
    const props = await targetProperties(targetFolders[1], 'good.txt');
    expect(props).toMatchObject({ MapTitle: 'Quarterly report', MapCount: '12', MapWave: 'wave-1' });
    expect(props?.Extra ?? null).toBeNull();
  });

  it('fail: a document with an unmapped property fails naming it, and is not written', async () => {
    const { status, byName } = await runJob('mapping-fail', targetFolders[2], 'fail');
    expect(status).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', written: 0, failed: 3 });
    expect(byName['good.txt']).toMatchObject({ outcome: 'e', message: expect.stringMatching(/^UNMAPPED_PROPERTY: property '(Extra|mpOther)' is not mapped \(mapping\.unmapped is fail\)$/) });
    expect(await targetNames(targetFolders[2])).toEqual([]);
  });

  it('filesystem → CMIS: the type mapped to a CMIS document type with its properties; a read-only CMIS property refused naming it', async () => {
    const src = gw.app.get(ConnectorRegistry).get('src');
    const folderId = await src.folders!.createFolder('/to-cmis', actor);
    const id = await src.createFile({ folderId, fileName: 'x.txt', mimeType: 'text/plain', content: Readable.from([Buffer.from('x')]) }, actor);
    await src.propertyUpdate!.updateProperties(id, { title: '  Hello ', other: 'dropped' }, actor);
    const targetFolder = `${sourceFolder}-from-fs`;
    const run = async (name: string, properties: Record<string, unknown>) => {
      const jobId = await defineJob(gw, {
        jobName: name,
        source: { connectorId: 'src', folderPath: '/to-cmis' },
        target: { connectorId: 'cmis', folderPath: `${targetFolder}/${name}` },
        options: { mapping: { properties, types: { file: DOC_TYPE }, unmapped: 'drop' }, verify: 'size' },
      });
      await call(gw, jobId, 'start');
      const status = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      const rows = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as Array<Record<string, string>>;
      return { status, row: rows[0] };
    };
    // CMIS declares propertiesOnCreate: the properties go in createDocument itself, no updateProperties after.
    const updates = jest.spyOn(cmis.propertyUpdate!, 'updateProperties');
    const mapped = await run('fs-typed', { title: { to: 'mpTitle', transform: 'trim' } });
    expect(mapped.row).toMatchObject({ outcome: 'p' });
    expect(updates).not.toHaveBeenCalled();
    updates.mockRestore();
    const written = await cmis.getItem(mapped.row.targetId);
    expect(written.typeId).toBe(DOC_TYPE);
    expect(written.properties).toMatchObject({ mpTitle: 'Hello' });
    expect(Object.values(written.properties ?? {})).not.toContain('dropped');
    const refused = await run('fs-readonly', { title: 'cmis:createdBy' });
    expect(refused.status).toMatchObject({ written: 0, failed: 1 });
    expect(refused.row).toMatchObject({ outcome: 'e', message: "PROPERTY_REFUSED: property 'cmis:createdBy': read-only at the target" });
  });

  it('acceptance (issue 34): property, type and principal maps together, planned by a dry run first, which the real run then follows document for document', async () => {
    const folderId = (await cmis.folders!.createFolder(`${sourceFolder}-acceptance`, actor));
    const put = async (name: string, properties: Record<string, string>, acl: Record<string, string[]>) => {
      const id = await cmis.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(`${name}\n`)]) }, actor);
      await cmis.propertyUpdate!.updateProperties(id, properties, actor);
      // OpenCMIS InMemory takes new principals when "anyone" is rewritten with them; "anyone" is removed after.
      await cmis.acls!.applyAcl(id, { anyone: ['cmis:read'], ...acl, admin: ['cmis:all'] }, actor);
      await cmis.acls!.removeAcl(id, ['anyone'], actor);
    };
    await put('memo.txt', { mpTitle: ' Memo ', mpCount: '3', mpKeywords: 'a;b', Extra: 'unmapped' }, { alice: ['cmis:read'], stranger: ['cmis:write'] });
    await put('plain.txt', { mpTitle: 'Plain', mpCount: '1' }, { alice: ['cmis:write'] });
    const targetFolder = (await sp.createTestFolder('mapping-acceptance')).path;
    const jobId = await defineJob(gw, {
      jobName: 'mapping-acceptance',
      source: { connectorId: 'cmis', folderPath: `${sourceFolder}-acceptance` },
      target: { connectorId: 'sp', folderPath: `${targetFolder}/out` },
      options: {
        mapping: mapping('drop'),
        copyAcls: true,
        aclMapping: { principals: { alice: 'alice@contoso.com' }, groups: { admin: 'Gateway Owners' }, unmapped: 'drop' },
      },
    });
    const report = async () => (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results as Record<string, any>;
    const outcomes = (rows: Array<Record<string, string>>) => Object.fromEntries(rows.map((r) => [r.relPath, r.outcome]));

    await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query({ dryRun: 'true' }).set('Authorization', adminAuth()).expect(200);
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ dryRun: true, written: 2, failed: 0, bytesRead: 0 });
    const plan = await report();
    expect(plan.unmapped).toMatchObject({ property: { Extra: 1 }, principal: { stranger: 1 } });
    expect(plan.rows.map((r: Record<string, string>) => [r.relPath, r.plan]).sort()).toEqual([['memo.txt', 'create'], ['plain.txt', 'create']]);
    // The target untouched until the real run: not even its folder.
    expect(await targetNames(targetFolder)).toEqual([]);

    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ dryRun: false, written: 2, failed: 0 });
    const real = await report();
    expect(outcomes(real.rows)).toEqual(outcomes(plan.rows));
    expect(real.rows.find((r: Record<string, string>) => r.relPath === 'memo.txt')).toMatchObject({ message: expect.stringContaining("permissions: dropped unmapped principal 'stranger'") });
    const out = `${targetFolder}/out`;
    expect(await targetProperties(out, 'memo.txt')).toMatchObject({ MapTitle: 'Memo', MapCount: '3', MapTags: 'a, b', MapWave: 'wave-1' });
    expect(await targetProperties(out, 'plain.txt')).toMatchObject({ MapTitle: 'Plain', MapCount: '1', MapWave: 'wave-1' });
    const aclOf = async (name: string) => target.acls!.getAcl(await target.idByPath(out, name));
    expect(await aclOf('memo.txt')).toEqual(expect.arrayContaining(['alice@contoso.com:read']));
    expect((await aclOf('memo.txt')).some((e) => e.toLowerCase().startsWith('stranger'))).toBe(false);
    expect(await aclOf('plain.txt')).toEqual(expect.arrayContaining(['alice@contoso.com:write']));
  });

  it('refuses an invalid mapping at definition time naming the key', async () => {
    const bad = async (m: unknown) =>
      (
        await gw
          .http()
          .post(`${gw.api}/admin/jobs`)
          .set('Authorization', adminAuth())
          .send({ jobName: 'bad-mapping', source: { connectorId: 'cmis', folderPath: sourceFolder }, target: { connectorId: 'sp', folderPath: targetFolders[0] }, options: { mapping: m } })
          .expect(400)
      ).body;
    expect(JSON.stringify(await bad({ properties: { mpTitle: { to: 'MapTitle', tranform: 'trim' } } }))).toContain("unknown key 'properties.mpTitle.tranform'");
    expect(JSON.stringify(await bad({ properties: { mpTitle: { transform: { regex: 'x' } } } }))).toContain("unknown transform 'regex'");
    expect(JSON.stringify(await bad({ unmaped: 'drop' }))).toContain('options.mapping.unmaped');
  });
});
