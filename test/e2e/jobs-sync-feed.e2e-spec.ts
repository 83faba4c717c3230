import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { FEED_FALLBACK_DOC } from '../../apps/api/src/jobs/sync/change-feed-enumeration';
import { SimulatorControl } from '../engines/simulators/common/control';
import { GraphSetup, useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, jobBody, listTree, sleep, startJobsGateway, status, waitStatus, type JobsGateway } from './jobs-helpers';

const actor = { username: 'admin' };

/**
 * Sync runs that follow Graph's delta feed (issue 36 §3): the Graph simulator as the source, the
 * filesystem as the target. The first run lists every folder; after changes at the source the second
 * reads `root/delta` and lists no folder (no GET of any `…/children` reaches the simulator), and the
 * target equals the source; a token the simulator refuses (410 Gone) lists again, recorded.
 */
describe(`Sync job from Graph through its delta feed (simulator), ${MODE} mode`, () => {
  let engine: GraphEngine;
  let control: SimulatorControl;
  let setup: GraphSetup;
  let gw: JobsGateway;
  let graph: ContentConnector;
  let base: string;

  beforeAll(async () => {
    engine = await useGraphEngine();
    control = new SimulatorControl(engine.info.url, engine.info.caFile);
    setup = new GraphSetup(engine.info);
    base = `feed-${randomBytes(4).toString('hex')}`;
    await setup.createFolder(base);
    const params = { ...engine.info.connectorParams, clientSecret: '${GRAPH_SECRET}' };
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify({ id: 'graph', typeId: 'graph', description: 'Graph simulator', params })}\n`, env: { GRAPH_SECRET: engine.info.clientSecret } });
    graph = gw.app.get(ConnectorRegistry).get('graph');
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  const put = async (folder: string, name: string, text: string) =>
    graph.createFile({ folderId: await graph.folders!.createFolder(`/${base}${folder}`, actor), fileName: name, content: Readable.from([Buffer.from(text)]) }, actor);
  /** The simulator's requests since `mark`: the folder listings (GET …/children) and the delta reads. */
  const requestsSince = async (mark: number) => {
    const { requests } = await control.requests(mark);
    const gets = requests.filter((r) => r.method === 'GET').map((r) => r.path);
    return { listings: gets.filter((p) => p.split('?')[0].endsWith('/children')), deltas: gets.filter((p) => p.split('?')[0].endsWith('/root/delta')) };
  };
  const report = async (jobId: number) => (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as Array<Record<string, unknown>>;

  it('the second run reads the delta feed, lists no folder, and leaves the target equal to the source; a refused token lists again', async () => {
    const expected: Record<string, string> = {};
    const ids: Record<string, string> = {};
    const seed: Array<[string, string, string]> = [
      ['', 'a.txt', 'alpha'],
      ['', 'b.txt', 'bravo'],
      ['', 'c.txt', 'charlie'],
      ['/sub', 'd.txt', 'delta'],
      ['/sub', 'e.txt', 'echo'],
      ['/docs', 'f.txt', 'foxtrot'],
      ['/docs/deep', 'g.txt', 'golf'],
      ['', 'h.txt', 'hotel'],
    ];
    for (const [folder, name, text] of seed) {
      const rel = `${folder.slice(1)}${folder ? '/' : ''}${name}`;
      ids[rel] = await put(folder, name, text);
      expected[rel] = text;
    }
    // Outside the job's folder: its changes are in the feed too, and left alone.
    const outsider = await graph.createFile({ folderId: await graph.folders!.createFolder(`/${base}-outside`, actor), fileName: 'o.txt', content: Readable.from([Buffer.from('o')]) }, actor);
    const out = path.join(gw.dstRoot, 'feed-out');
    const jobId = await defineJob(gw, jobBody('sync-feed', { source: { connectorId: 'graph', folderPath: `/${base}`, recursive: true }, target: { connectorId: 'dst', folderPath: '/feed-out' }, options: { mode: 'sync', deletions: 'delete' } }));

    let mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 8, failed: 0 });
    const first = await requestsSince(mark);
    expect(first.listings.length).toBeGreaterThanOrEqual(4);
    // The token is taken before the listing (token=latest), and no pass is read.
    expect(first.deltas).toEqual([expect.stringContaining('token=latest')]);
    expect(listTree(out)).toEqual(expected);

    // At the source: a change, a deletion, a rename, a move to another folder, two additions, a folder renamed.
    await graph.contentUpdate!.updateContent(ids['a.txt'], { content: Readable.from([Buffer.from('alpha, changed')]) }, actor);
    expected['a.txt'] = 'alpha, changed';
    await graph.deleteItem(ids['b.txt'], true, actor);
    delete expected['b.txt'];
    const root = await graph.idByPath('/', base);
    await graph.move!.moveItem(ids['c.txt'], { folderId: root, fileName: 'c2.txt' }, actor);
    expected['c2.txt'] = expected['c.txt'];
    delete expected['c.txt'];
    await graph.move!.moveItem(ids['sub/d.txt'], { folderId: await graph.idByPath(`/${base}`, 'docs'), fileName: 'd.txt' }, actor);
    expected['docs/d.txt'] = expected['sub/d.txt'];
    delete expected['sub/d.txt'];
    await put('', 'new.txt', 'november');
    await put('/sub', 'new2.txt', 'oscar');
    expected['new.txt'] = 'november';
    expected['sub/new2.txt'] = 'oscar';
    const renamed = await setup.call('PATCH', `/items/${await graph.idByPath(`/${base}`, 'docs')}`, { name: 'papers' });
    expect(renamed.status).toBe(200);
    for (const rel of ['docs/d.txt', 'docs/f.txt', 'docs/deep/g.txt']) {
      expected[rel.replace('docs/', 'papers/')] = expected[rel];
      delete expected[rel];
    }
    await graph.contentUpdate!.updateContent(outsider, { content: Readable.from([Buffer.from('o2')]) }, actor);

    mark = await control.mark();
    await call(gw, jobId, 'start');
    const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const requests = await requestsSince(mark);
    expect(requests.listings).toEqual([]);
    expect(requests.deltas.length).toBeGreaterThanOrEqual(2);
    // Written: a (changed), c2 (renamed), d (moved), new, sub/new2, and f, g (their folder renamed); b removed.
    // Content read: only the changed and added documents.
    expect(second).toMatchObject({ status: 'COMPLETED', written: 7, removed: 1, failed: 0, bytesRead: 'alpha, changed'.length + 'november'.length + 'oscar'.length });
    expect(listTree(out)).toEqual(expected);
    const rows = await report(jobId);
    expect(rows.filter((r) => r.outcome === 's')).toEqual([]);
    expect(rows.map((r) => r.docId).sort()).toEqual([...new Set(rows.map((r) => r.docId))].sort());

    // A change, then the simulator drops its delta history: the next run's token is refused (410 Gone), and it lists everything.
    await put('/sub', 'late.txt', 'papa');
    await control.expireDeltaTokens();
    expected['sub/late.txt'] = 'papa';
    mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', failed: 0 });
    const fallback = await requestsSince(mark);
    expect(fallback.listings.length).toBeGreaterThanOrEqual(4);
    expect(listTree(out)).toEqual(expected);
    const fallbackRow = (await report(jobId)).find((r) => r.docId === FEED_FALLBACK_DOC);
    expect(fallbackRow).toMatchObject({ outcome: 'p' });
    expect(JSON.stringify(fallbackRow)).toContain('no longer accepts this change token');

    // And the run after it reads the feed again, from the token the fallback run took before it listed.
    await graph.contentUpdate!.updateContent(ids['h.txt'], { content: Readable.from([Buffer.from('hotel, changed')]) }, actor);
    expected['h.txt'] = 'hotel, changed';
    mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    expect((await requestsSince(mark)).listings).toEqual([]);
    expect(listTree(out)).toEqual(expected);

    // A folder moved in from outside the job's folder is reported alone, without its documents: that folder is listed, once.
    const outside = await graph.idByPath('/', `${base}-outside`);
    expect((await setup.call('PATCH', `/items/${outside}`, { name: 'inbound', parentReference: { id: root } })).status).toBe(200);
    expected['inbound/o.txt'] = 'o2';
    mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    expect((await requestsSince(mark)).listings).toEqual([expect.stringContaining(`/items/${outside}/children`)]);
    expect(listTree(out)).toEqual(expected);
  });

  it('a feed run killed in the middle and resumed applies every change once, deleting each gone document once; the next run starts from its token', async () => {
    const folder = `${base}-kill`;
    const expected: Record<string, string> = {};
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const name = `k${String(i).padStart(2, '0')}.txt`;
      ids.push(await graph.createFile({ folderId: await graph.folders!.createFolder(`/${folder}`, actor), fileName: name, content: Readable.from([Buffer.from(`kilo ${i}`)]) }, actor));
      expected[name] = `kilo ${i}`;
    }
    const out = path.join(gw.dstRoot, 'kill-out');
    const jobId = await defineJob(gw, jobBody('sync-feed-kill', { source: { connectorId: 'graph', folderPath: `/${folder}`, recursive: true }, target: { connectorId: 'dst', folderPath: '/kill-out' }, options: { mode: 'sync', deletions: 'delete' } }));
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 40 });

    for (let i = 0; i < 30; i++) {
      await graph.contentUpdate!.updateContent(ids[i], { content: Readable.from([Buffer.from(`kilo ${i}, changed`)]) }, actor);
      expected[`k${String(i).padStart(2, '0')}.txt`] = `kilo ${i}, changed`;
    }
    for (let i = 30; i < 35; i++) {
      await graph.deleteItem(ids[i], true, actor);
      delete expected[`k${String(i).padStart(2, '0')}.txt`];
    }
    // Every simulator call slowed, so the run is still copying when it is killed.
    await control.setFaults({ delay: { ms: 250 } });
    try {
      await call(gw, jobId, 'start');
      while ((await status(gw, jobId)).written < 2) await sleep(10);
      await call(gw, jobId, 'kill');
      const killed = await waitStatus(gw, jobId, 'ABORTED');
      expect(killed.written).toBeLessThan(30);
      expect(killed.removed).toBe(0);
    } finally {
      await control.clearFaults();
    }

    let mark = await control.mark();
    await call(gw, jobId, 'resume');
    // The resumed run redoes what the kill cut (the run's own claims: a document cut in its overwrite is written, not a conflict), then deletes.
    const resumed = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(resumed).toMatchObject({ status: 'COMPLETED', written: 30, removed: 5, failed: 0 });
    expect((await requestsSince(mark)).listings).toEqual([]);
    expect(listTree(out)).toEqual(expected);
    const rows = await report(jobId);
    expect(rows.filter((r) => r.outcome === 'p' && String(r.message).includes('deleted from the target'))).toHaveLength(5);

    mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 0, removed: 0, failed: 0 });
    expect((await requestsSince(mark)).listings).toEqual([]);
    expect(listTree(out)).toEqual(expected);
  });
});

/** The same through SharePoint REST's change log (GetChanges): the second run lists no folder (no `items?$filter=FileDirRef eq …`). */
describe(`Sync job from SharePoint through GetChanges (simulator), ${MODE} mode`, () => {
  let engine: SharePointEngine;
  let control: SimulatorControl;
  let gw: JobsGateway;
  let sp: ContentConnector;
  let base: string;

  beforeAll(async () => {
    engine = await useSharePointEngine();
    control = new SimulatorControl(engine.info.url, engine.info.caFile);
    base = (await new SharePointSetup(engine.info).createTestFolder('feed')).path;
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify({ id: 'sp', typeId: 'sharepoint', description: 'SharePoint', params: engine.info.connectorParams })}\n` });
    sp = gw.app.get(ConnectorRegistry).get('sp');
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  const listingsSince = async (mark: number) =>
    (await control.requests(mark)).requests.filter((r) => r.method === 'GET' && decodeURIComponent(r.path).includes('FileDirRef eq')).map((r) => r.path);

  it('the second run reads the change log and lists no folder; the target equals the source', async () => {
    const put = async (folder: string, name: string, text: string) =>
      sp.createFile({ folderId: await sp.folders!.createFolder(`${base}${folder}`, actor), fileName: name, content: Readable.from([Buffer.from(text)]) }, actor);
    const ids = { a: await put('', 'a.txt', 'alpha'), b: await put('', 'b.txt', 'bravo'), c: await put('', 'c.txt', 'charlie'), d: await put('/sub', 'd.txt', 'delta') };
    const expected: Record<string, string> = { 'a.txt': 'alpha', 'b.txt': 'bravo', 'c.txt': 'charlie', 'sub/d.txt': 'delta' };
    const out = path.join(gw.dstRoot, 'sp-out');
    const jobId = await defineJob(gw, jobBody('sync-sp-feed', { source: { connectorId: 'sp', folderPath: base, recursive: true }, target: { connectorId: 'dst', folderPath: '/sp-out' }, options: { mode: 'sync', deletions: 'delete' } }));
    let mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 4, failed: 0 });
    expect((await listingsSince(mark)).length).toBeGreaterThanOrEqual(2);
    expect(listTree(out)).toEqual(expected);

    await sp.contentUpdate!.updateContent(ids.a, { content: Readable.from([Buffer.from('alpha, changed')]) }, actor);
    expected['a.txt'] = 'alpha, changed';
    await sp.deleteItem(ids.b, true, actor);
    delete expected['b.txt'];
    const root = await sp.idByPath(path.posix.dirname(base), path.posix.basename(base));
    await sp.move!.moveItem(ids.c, { folderId: root, fileName: 'c2.txt' }, actor);
    await sp.move!.moveItem(ids.d, { folderId: root, fileName: 'd.txt' }, actor);
    expected['c2.txt'] = 'charlie';
    expected['d.txt'] = 'delta';
    delete expected['c.txt'];
    delete expected['sub/d.txt'];
    await put('/sub', 'new.txt', 'november');
    expected['sub/new.txt'] = 'november';

    mark = await control.mark();
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({
      status: 'COMPLETED',
      written: 4,
      removed: 1,
      failed: 0,
      bytesRead: 'alpha, changed'.length + 'november'.length,
    });
    expect(await listingsSince(mark)).toEqual([]);
    expect(listTree(out)).toEqual(expected);
  });
});
