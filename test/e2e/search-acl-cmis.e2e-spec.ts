import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { useSearchEngines } from '../contract/search-fixtures/search-engines';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { ADMIN, adminAuth, basic } from '../support/gateway';
import { MODE, call, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * Issue 14's scenario end to end: a CMIS folder where bob may read one document and not another
 * (ACLs on the real CMIS server), indexed by an indexing job into Solr, Elasticsearch, OpenSearch and MongoDB
 * (FerretDB) behind connections with `aclTrimming: true`; bob's select and raw query find exactly
 * his, alice's hers (one through her group), and only an admin's acl=false finds all.
 */
const ENGINES = ['solr', 'elasticsearch', 'opensearch', 'mongodb'] as const;
type Engine = (typeof ENGINES)[number];
const suffix = randomBytes(4).toString('hex');
const ALICE = { username: 'alice', password: 'alice-password-1', groups: ['finance'] };
const BOB = { username: 'bob', password: 'bob-password-1', groups: [] as string[] };

describe(`Permission-trimmed search over CMIS documents indexed by a job, ${MODE} mode`, () => {
  let gw: JobsGateway;
  let cmisEngine: CmisEngine;
  let cmisBase: string;
  let release: () => Promise<void>;
  const docs: Record<string, string> = {};
  const collections: Partial<Record<Engine, string>> = {};

  beforeAll(async () => {
    const used = await useSearchEngines();
    release = used.release;
    cmisEngine = await useCmisEngine();
    cmisBase = (await new CmisSetup(cmisEngine.info).createTestFolder('search-acl')).path;
    const { solr, elasticsearch, opensearch, ferretdb } = used.engines;
    const configSet = `gateway-search-acl-${suffix}`;
    fs.cpSync(path.join(solr.dir, 'home', 'gateway', 'conf'), path.join(solr.dir, 'home', 'configsets', configSet, 'conf'), { recursive: true });
    const connectors = [
      { id: 'acl-solr', typeId: 'solr', params: { url: solr.url, user: solr.user, password: solr.password, configSet, aclTrimming: true } },
      { id: 'acl-elasticsearch', typeId: 'elasticsearch', params: { url: elasticsearch.url, apiKey: elasticsearch.apiKey, aclTrimming: true } },
      { id: 'acl-opensearch', typeId: 'opensearch', params: { url: opensearch.url, aclTrimming: true } },
      { id: 'acl-mongodb', typeId: 'mongodb', params: { uri: `${ferretdb.uri}?directConnection=true`, database: 'search_acl_cmis', timeoutMs: 60_000, aclTrimming: true } },
      {
        id: 'cmis',
        typeId: 'cmis',
        params: { url: cmisEngine.info.browserUrl, repositoryId: cmisEngine.info.repositoryId, user: cmisEngine.info.username, password: '${SEARCH_ACL_CMIS_PASSWORD}' },
      },
    ];
    gw = await startJobsGateway({
      extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join(''),
      env: { SEARCH_ACL_CMIS_PASSWORD: cmisEngine.info.password },
    });
    for (const user of [ALICE, BOB]) {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...user, roles: ['user'] }).expect(201);
    }

    // The folder: one document for everyone, one bob may read (not alice), one alice may read (not bob),
    // one for alice's group. Set on the CMIS server through the driver; the job reads as usual.
    const driver = gw.app.get(ConnectorRegistry).get('cmis');
    const actor = { username: 'admin' };
    const folderId = await driver.folders!.createFolder(`${cmisBase}/docs`, actor);
    const upload = (name: string) =>
      driver.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(`a memo about kumquats: ${name}`)]) }, actor);
    const acls = driver.acls!;
    docs.open = await upload('open.txt');
    for (const [key, principal] of [['bob', 'bob'], ['alice', 'alice'], ['finance', 'finance']] as const) {
      docs[key] = await upload(`${key}.txt`);
      // OpenCMIS InMemory takes new principals when "anyone" is rewritten with them; "anyone" is removed after.
      await acls.applyAcl(docs[key], { anyone: ['cmis:read'], [principal]: ['cmis:read'], admin: ['cmis:all'] }, actor);
      await acls.removeAcl(docs[key], ['anyone'], actor);
    }
    expect((await acls.getAcl(docs.bob)).sort()).toEqual(['admin:cmis:all', 'bob:cmis:read']);

    for (const engine of ENGINES) {
      const collection = `acl_cmis_${engine}_${suffix}`;
      const res = await gw
        .http()
        .post(`${gw.api}/admin/jobs`)
        .set('Authorization', adminAuth())
        .send({ jobName: `acl-${engine}`, source: { connectorId: 'cmis', folderPath: `${cmisBase}/docs` }, target: { connectorId: `acl-${engine}`, collection } });
      if (res.status !== 201) throw new Error(`define: ${res.status} ${JSON.stringify(res.body)}`);
      const jobId = res.body.results.jobId as number;
      await call(gw, jobId, 'start');
      expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 4, failed: 0 });
      collections[engine] = collection;
    }
  }, 600_000);

  afterAll(async () => {
    await gw?.close();
    await cmisEngine?.release();
    await release?.();
  });

  const cmisIds = (...keys: string[]) => keys.map((key) => `cmis:${docs[key]}`).sort();

  async function selectIds(engine: Engine, who: { username: string; password: string }, extra = ''): Promise<string[]> {
    const res = await gw
      .http()
      .get(`${gw.api}/search/acl-${engine}/${collections[engine]}/select?q=content:kumquats&fl=id&rows=100${extra}`)
      .set('Authorization', basic(who.username, who.password));
    if (res.status !== 200) throw new Error(`select: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results.docs.map((d: { id: string }) => d.id).sort();
  }

  const RAW: Record<Engine, unknown> = {
    solr: { query: '*:*', limit: 100, fields: ['id'] },
    elasticsearch: { query: { match_all: {} }, size: 100 },
    opensearch: { query: { match_all: {} }, size: 100 },
    mongodb: { filter: { $or: [{ acl_read: { $exists: true } }, { acl_read: { $exists: false } }] }, limit: 100 },
  };
  function rawIds(engine: Engine, results: unknown): string[] {
    if (engine === 'solr') return (results as { response: { docs: { id: string }[] } }).response.docs.map((d) => d.id).sort();
    if (engine === 'elasticsearch' || engine === 'opensearch') return (results as { hits: { hits: { _id: string }[] } }).hits.hits.map((h) => h._id).sort();
    return (results as { _id: string }[]).map((d) => String(d._id)).sort();
  }

  it.each(ENGINES)('on %s, bob finds exactly his document and the open one; alice hers, her group\'s and the open one', async (engine) => {
    expect(await selectIds(engine, BOB)).toEqual(cmisIds('open', 'bob'));
    expect(await selectIds(engine, ALICE)).toEqual(cmisIds('open', 'alice', 'finance'));
    // What bob may not read stays out even when he asks for it by acl_read.
    expect(await selectIds(engine, BOB, '&facet.field=acl_read&fq=acl_read:alice')).toEqual([]);
    for (const [who, expected] of [[BOB, cmisIds('open', 'bob')], [ALICE, cmisIds('open', 'alice', 'finance')]] as const) {
      const res = await gw
        .http()
        .post(`${gw.api}/search/acl-${engine}/${collections[engine]}/query`)
        .set('Authorization', basic(who.username, who.password))
        .send(RAW[engine] as object)
        .expect(200);
      expect(rawIds(engine, res.body.results)).toEqual(expected);
    }
    // The admin sees all four only by saying acl=false; bob may not.
    expect(await selectIds(engine, ADMIN, '&acl=false')).toEqual(cmisIds('open', 'bob', 'alice', 'finance'));
    const refused = await gw.http().get(`${gw.api}/search/acl-${engine}/${collections[engine]}/select?q=*:*&acl=false`).set('Authorization', basic(BOB.username, BOB.password));
    expect(refused.status).toBe(403);
  });
});
