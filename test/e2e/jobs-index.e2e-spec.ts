import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { useSearchEngines } from '../contract/search-fixtures/search-engines';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { adminAuth } from '../support/gateway';
import { MODE, call, sleep, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Indexing jobs (issue 14): a job whose target is a search connector fills that connector's
 * collection from the source, on Solr, Elasticsearch, OpenSearch and MongoDB (FerretDB) of the engine
 * harness, and what it wrote is found through the gateway's select route. Incremental second
 * runs, kill and resume, ACLs from the real CMIS server, and the definition's validation.
 */
const ENGINES = ['solr', 'elasticsearch', 'opensearch', 'mongodb'] as const;
type Engine = (typeof ENGINES)[number];
const suffix = randomBytes(4).toString('hex');
const READER_PASSWORD = 'reader-password-1';

describe(`Indexing jobs into Solr, Elasticsearch, OpenSearch and MongoDB (FerretDB), ${MODE} mode`, () => {
  let gw: JobsGateway;
  let cmisEngine: CmisEngine;
  let cmisBase: string;
  let release: () => Promise<void>;
  let jobCount = 0;

  beforeAll(async () => {
    const used = await useSearchEngines();
    release = used.release;
    cmisEngine = await useCmisEngine();
    cmisBase = (await new CmisSetup(cmisEngine.info).createTestFolder('jobs-index')).path;
    const { solr, elasticsearch, opensearch, ferretdb } = used.engines;
    // The harness's Solr home has no _default configset: ours is its `gateway` core's managed-schema conf.
    const configSet = `gateway-jobs-index-${suffix}`;
    fs.cpSync(path.join(solr.dir, 'home', 'gateway', 'conf'), path.join(solr.dir, 'home', 'configsets', configSet, 'conf'), { recursive: true });
    const connectors = [
      { id: 'index-solr', typeId: 'solr', params: { url: solr.url, user: solr.user, password: solr.password, configSet, collection: `jobs_${suffix}` } },
      { id: 'index-elasticsearch', typeId: 'elasticsearch', params: { url: elasticsearch.url, apiKey: elasticsearch.apiKey, collection: `jobs_${suffix}` } },
      { id: 'index-opensearch', typeId: 'opensearch', params: { url: opensearch.url, collection: `jobs_${suffix}` } },
      { id: 'index-mongodb', typeId: 'mongodb', params: { uri: `${ferretdb.uri}?directConnection=true`, database: 'jobs_index', collection: `jobs_${suffix}`, timeoutMs: 60_000 } },
      // The same engines as searched by everyone but admins: every select and raw query trimmed to the caller's acl_read.
      { id: 'trim-solr', typeId: 'solr', params: { url: solr.url, user: solr.user, password: solr.password, configSet, collection: `jobs_${suffix}`, aclTrimming: true } },
      { id: 'trim-elasticsearch', typeId: 'elasticsearch', params: { url: elasticsearch.url, apiKey: elasticsearch.apiKey, collection: `jobs_${suffix}`, aclTrimming: true } },
      { id: 'trim-opensearch', typeId: 'opensearch', params: { url: opensearch.url, collection: `jobs_${suffix}`, aclTrimming: true } },
      { id: 'trim-mongodb', typeId: 'mongodb', params: { uri: `${ferretdb.uri}?directConnection=true`, database: 'jobs_index', collection: `jobs_${suffix}`, timeoutMs: 60_000, aclTrimming: true } },
      {
        id: 'cmis',
        typeId: 'cmis',
        params: { url: cmisEngine.info.browserUrl, repositoryId: cmisEngine.info.repositoryId, user: cmisEngine.info.username, password: '${JOBS_INDEX_CMIS_PASSWORD}' },
      },
    ];
    gw = await startJobsGateway({
      extraYaml: connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join(''),
      env: { JOBS_INDEX_CMIS_PASSWORD: cmisEngine.info.password },
    });
    for (const username of ['bob', 'carol']) {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username, password: READER_PASSWORD, roles: ['user'] }).expect(201);
    }
  }, 600_000);

  afterAll(async () => {
    await gw?.close();
    await cmisEngine?.release();
    await release?.();
  });

  afterEach(() => gw.src.open());

  const admin = () => adminAuth();

  /** A fresh collection per job, so each test sees only its own documents. */
  function indexJob(engine: Engine, folderPath: string, extra: { options?: Record<string, unknown>; source?: string; collection?: string } = {}) {
    const name = `index-${engine}-${++jobCount}`;
    return {
      jobName: name,
      source: { connectorId: extra.source ?? 'src', folderPath },
      target: { connectorId: `index-${engine}`, collection: extra.collection ?? `c${jobCount}_${suffix}` },
      ...(extra.options ? { options: extra.options } : {}),
    };
  }

  async function define(body: object): Promise<number> {
    const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(body);
    if (res.status !== 201) throw new Error(`define: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results.jobId as number;
  }

  async function select(engine: Engine, collection: string, query: Record<string, string>) {
    const res = await gw.http().get(`${gw.api}/search/index-${engine}/${collection}/select`).query(query).set('Authorization', admin());
    if (res.status !== 200) throw new Error(`select: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results as { numFound: number; docs: Array<Record<string, unknown>> };
  }

  /** Ids found by a query, sorted (the index is committed when the run settles). */
  async function ids(engine: Engine, collection: string, q: string): Promise<string[]> {
    const found = await select(engine, collection, { q, fl: 'id', rows: '1000' });
    return found.docs.map((d) => String(d.id)).sort();
  }

  async function recordstatus(jobId: number, docId: string, recordType: string) {
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId, recordType }).set('Authorization', admin());
    return res;
  }

  const srcId = async (rel: string) => {
    const connector = gw.app.get(ConnectorRegistry).get('src');
    return connector.idByPath(path.posix.dirname(`/${rel}`), path.posix.basename(rel));
  };

  it.each(ENGINES)('indexes text and HTML from the filesystem with their metadata into %s, found through the gateway', async (engine) => {
    const folder = `/text-${engine}`;
    writeTree(path.join(gw.srcRoot, folder), {
      'memo.txt': 'The quarterly zebrafinch report is due.\n',
      'sub/page.html': '<html><head><title>Page</title><style>.x{color:red}</style></head><body><p>Caf&eacute; &amp; <b>heliotrope</b> garden</p></body></html>',
      'notes.md': '# Notes\nnothing to see',
    });
    const body = indexJob(engine, folder);
    const jobId = await define(body);
    await call(gw, jobId, 'start');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ status: 'COMPLETED', read: 3, written: 3, skipped: 0, failed: 0, removed: 0 });

    const collection = body.target.collection;
    const memoId = await srcId(`${folder.slice(1)}/memo.txt`);
    const found = await select(engine, collection, { q: 'content:zebrafinch', fl: 'id,title,name,path,mime_type,size,source_connector,source_id,acl_read' });
    expect(found.numFound).toBe(1);
    expect(found.docs[0]).toMatchObject({
      id: `src:${memoId}`,
      name: 'memo.txt',
      title: 'memo.txt',
      path: `${folder}/memo.txt`,
      mime_type: 'text/plain',
      size: 40,
      source_connector: 'src',
      source_id: memoId,
      acl_read: ['__everyone__'],
    });
    // HTML: tags and style dropped, entities decoded.
    const pageId = await srcId(`${folder.slice(1)}/sub/page.html`);
    expect(await ids(engine, collection, 'content:heliotrope')).toEqual([`src:${pageId}`]);
    expect(await ids(engine, collection, 'content:color')).toEqual([]);
    expect(await ids(engine, collection, '*:*')).toHaveLength(3);
  });

  it.each(ENGINES)('a second run into %s re-indexes only what changed, adds the new and removes the deleted', async (engine) => {
    const folder = `/incr-${engine}`;
    const root = path.join(gw.srcRoot, folder);
    writeTree(root, { 'a.txt': 'alpha original', 'b.txt': 'bravo original', 'c.txt': 'charlie original', 'd.txt': 'delta original' });
    const body = indexJob(engine, folder);
    const jobId = await define(body);
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 4 });
    const ids1 = Object.fromEntries(await Promise.all(['a', 'b', 'c', 'd'].map(async (n) => [n, await srcId(`${folder.slice(1)}/${n}.txt`)])));

    // Change one (content and time), delete one, add one.
    await sleep(20);
    fs.writeFileSync(path.join(root, 'b.txt'), 'bravo rewritten');
    fs.utimesSync(path.join(root, 'b.txt'), new Date(), new Date(Date.now() + 5000));
    fs.rmSync(path.join(root, 'c.txt'));
    fs.writeFileSync(path.join(root, 'e.txt'), 'echo fresh');

    await call(gw, jobId, 'start');
    const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(second).toMatchObject({ status: 'COMPLETED', read: 4, written: 2, skipped: 2, failed: 0, removed: 1 });

    const collection = body.target.collection;
    expect(await ids(engine, collection, 'content:rewritten')).toEqual([`src:${ids1.b}`]);
    expect(await ids(engine, collection, 'content:original')).toEqual([`src:${ids1.a}`, `src:${ids1.d}`].sort());
    expect(await ids(engine, collection, 'content:charlie')).toEqual([]);
    expect(await ids(engine, collection, 'content:echo')).toHaveLength(1);
    expect(await ids(engine, collection, '*:*')).toHaveLength(4);
    // The audit says what happened to each.
    expect((await recordstatus(jobId, ids1.c, 'p')).body.results).toContain('removed from the index: gone from the source');
    expect((await recordstatus(jobId, ids1.a, 's')).body.results).toContain('Unchanged since it was indexed');

    // A third run with nothing changed writes nothing and removes nothing.
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', read: 4, written: 0, skipped: 4, removed: 0 });
  });

  it.each(ENGINES)('kill mid-run into %s leaves the index as the audit says; resume finishes it', async (engine) => {
    const folder = `/kill-${engine}`;
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, '0')}.txt`] = `document number${i} with the word killjoy`;
    writeTree(path.join(gw.srcRoot, folder), files);
    const body = indexJob(engine, folder);
    const jobId = await define(body);
    gw.src.close();
    const opened = gw.src.opened;
    await call(gw, jobId, 'start');
    await gw.src.waitOpened(opened + 2); // GATEWAY_JOB_CONCURRENCY=2: two documents held in flight
    await call(gw, jobId, 'kill');
    const killed = await waitStatus(gw, jobId, 'ABORTED');
    gw.src.open();
    const collection = body.target.collection;
    // What the audit says was written is exactly what the index holds (committed as the run settled).
    expect(await ids(engine, collection, 'content:killjoy')).toHaveLength(killed.written);
    expect(killed.written).toBeLessThan(30);

    await call(gw, jobId, 'resume');
    const resumed = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(resumed).toMatchObject({ status: 'COMPLETED', read: 30, written: 30, failed: 0 });
    expect(await ids(engine, collection, 'content:killjoy')).toHaveLength(30);
  });

  it.each(ENGINES)('indexes CMIS documents into %s with acl_read from their ACLs; bob and carol each find only what they may read', async (engine) => {
    const folderPath = `${cmisBase}/acl-${engine}`;
    // Set up through the driver (the job under test reads through the gateway as usual).
    const driver = gw.app.get(ConnectorRegistry).get('cmis');
    const actor = { username: 'admin' };
    const folderId = await driver.folders!.createFolder(folderPath, actor);
    const upload = (name: string, text: string) => driver.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, actor);
    const open = await upload('open.txt', 'an open memo about marmalade');
    const forBob = await upload('bob.txt', 'a private memo about marmalade');
    const secret = await upload('secret.txt', 'a secret memo about marmalade');
    const acls = driver.acls!;
    // bob may read one document (and admin everything), carol may write (so read) the other; "anyone" is taken off both.
    // (OpenCMIS InMemory takes new principals when "anyone" is rewritten with them; it is removed after.)
    await acls.applyAcl(forBob, { anyone: ['cmis:read'], bob: ['cmis:read'], admin: ['cmis:all'] }, actor);
    await acls.removeAcl(forBob, ['anyone'], actor);
    await acls.applyAcl(secret, { anyone: ['cmis:read'], carol: ['cmis:write'], admin: ['cmis:all'] }, actor);
    await acls.removeAcl(secret, ['anyone'], actor);
    expect((await acls.getAcl(forBob)).sort()).toEqual(['admin:cmis:all', 'bob:cmis:read']);

    const body = indexJob(engine, folderPath, { source: 'cmis' });
    const jobId = await define(body);
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 3, failed: 0 });
    const found = await select(engine, body.target.collection, { q: 'content:marmalade', fl: 'id,acl_read,source_connector', sort: 'id asc' });
    const acl = Object.fromEntries(found.docs.map((d) => [d.id, [...(d.acl_read as string[])].sort()]));
    expect(acl).toEqual({
      [`cmis:${open}`]: ['__everyone__'],
      [`cmis:${forBob}`]: ['admin', 'bob'],
      [`cmis:${secret}`]: ['admin', 'carol'],
    });
    expect(await ids(engine, body.target.collection, 'acl_read:bob')).toEqual([`cmis:${forBob}`]);

    // Searched as bob and as carol through the trimming connection: each finds the open memo and their own, nothing else.
    const as = (username: string) => `Basic ${Buffer.from(`${username}:${READER_PASSWORD}`).toString('base64')}`;
    const trimmedSelect = async (username: string) => {
      const res = await gw.http().get(`${gw.api}/search/trim-${engine}/${body.target.collection}/select`).query({ q: 'content:marmalade', fl: 'id', rows: '100' }).set('Authorization', as(username));
      expect(res.status).toBe(200);
      return (res.body.results.docs as Array<{ id: string }>).map((d) => d.id).sort();
    };
    expect(await trimmedSelect('bob')).toEqual([`cmis:${open}`, `cmis:${forBob}`].sort());
    expect(await trimmedSelect('carol')).toEqual([`cmis:${open}`, `cmis:${secret}`].sort());
    // A raw query asking for everything, in the engine's own form, is trimmed the same way.
    const everything = { solr: { query: '*:*', limit: 100 }, elasticsearch: { query: { match_all: {} }, size: 100 }, opensearch: { query: { match_all: {} }, size: 100 }, mongodb: { filter: {}, limit: 100 } }[engine];
    const rawAnswer = await gw.http().post(`${gw.api}/search/trim-${engine}/${body.target.collection}/query`).set('Authorization', as('bob')).send(everything);
    expect(rawAnswer.status).toBe(200);
    const results = rawAnswer.body.results;
    const rawHits: Array<{ id?: string; _id?: string }> = engine === 'solr' ? results.response.docs : engine === 'mongodb' ? results : results.hits.hits;
    expect(rawHits.map((d) => String(d.id ?? d._id)).sort()).toEqual([`cmis:${open}`, `cmis:${forBob}`].sort());
  });

  it('refuses indexing definitions that make no sense, naming the field', async () => {
    const cases: Array<[object, string]> = [
      [{ ...indexJob('solr', '/x'), options: { onExisting: 'overwrite' } }, 'options.onExisting'],
      [{ ...indexJob('solr', '/x'), options: { copyVersions: true } }, 'options.copyVersions'],
      [{ ...indexJob('solr', '/x'), options: { removeSource: true } }, 'options.removeSource'],
      [{ ...indexJob('solr', '/x'), target: { connectorId: 'index-solr', folderPath: '/out' } }, 'target.folderPath'],
      [{ ...indexJob('solr', '/x'), target: { connectorId: 'index-solr', collection: '_bad/name' } }, 'target.collection'],
      [{ ...indexJob('solr', '/x'), options: { maxContentChars: 0 } }, 'options.maxContentChars'],
      [{ ...indexJob('solr', '/x'), options: { extract: 'yes' } }, 'options.extract'],
      [{ jobName: 'copy-with-extract', source: { connectorId: 'src', folderPath: '/x' }, target: { connectorId: 'dst', folderPath: '/y' }, options: { extract: false } }, 'options.extract'],
      [{ jobName: 'copy-without-folder', source: { connectorId: 'src', folderPath: '/x' }, target: { connectorId: 'dst' } }, 'target.folderPath'],
    ];
    for (const [body, parameter] of cases) {
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', admin()).send(body);
      expect({ parameter, status: res.status }).toEqual({ parameter, status: 400 });
      expect(res.body.error.parameter ?? res.body.error.message).toContain(parameter);
    }
    // The collection defaults to the connector's, and the index options to theirs.
    const res = await gw
      .http()
      .post(`${gw.api}/admin/jobs`)
      .set('Authorization', admin())
      .send({ jobName: `defaults-${suffix}`, source: { connectorId: 'src', folderPath: '/x' }, target: { connectorId: 'index-elasticsearch' } })
      .expect(201);
    expect(res.body.results).toMatchObject({
      target: { connectorId: 'index-elasticsearch', collection: `jobs_${suffix}` },
      options: { extract: true, maxContentChars: 1_000_000, defaultAcl: '__everyone__' },
    });
  });
});

