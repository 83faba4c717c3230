import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ConflictError, type ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { GraphSetup, useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';
import { connectorParams, createBucket, directClient, useS3Engine, type S3Engine, type S3EngineName } from '../contract/fixtures/s3-engine';
import { MODE, call, defineJob, jobBody, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

const actor = { username: 'admin' };

async function text(connector: ContentConnector, id: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await connector.openContent(id)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The move groups of Graph (PATCH parentReference/name), SharePoint REST (moveto) and S3 (copy + delete) on their simulators and engines, and a sync job following renames into Graph. */
describe(`Graph move group and a sync job into Graph (simulator), ${MODE} mode`, () => {
  let engine: GraphEngine;
  let gw: JobsGateway;
  let graph: ContentConnector;
  let base: string;

  beforeAll(async () => {
    engine = await useGraphEngine();
    base = `sync-${randomBytes(4).toString('hex')}`;
    await new GraphSetup(engine.info).createFolder(base);
    const params = { ...engine.info.connectorParams, clientSecret: '${GRAPH_SECRET}' };
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify({ id: 'graph', typeId: 'graph', description: 'Graph simulator', params })}\n`, env: { GRAPH_SECRET: engine.info.clientSecret } });
    graph = gw.app.get(ConnectorRegistry).get('graph');
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  it('moves and renames a document, keeping its id; refuses a taken name', async () => {
    const a = await graph.folders!.createFolder(`/${base}/a`, actor);
    const b = await graph.folders!.createFolder(`/${base}/b`, actor);
    const id = await graph.createFile({ folderId: a, fileName: 'x.txt', content: Readable.from([Buffer.from('x')]) }, actor);
    const other = await graph.createFile({ folderId: b, fileName: 'taken.txt', content: Readable.from([Buffer.from('t')]) }, actor);
    expect(await graph.move!.moveItem(id, { folderId: b, fileName: 'y.txt' }, actor)).toBe(id);
    expect((await graph.getItem(id)).path).toBe(`/${base}/b/y.txt`);
    expect(await text(graph, id)).toBe('x');
    expect(await graph.idByPath(`/${base}/b`, 'y.txt')).toBe(id);
    await expect(graph.move!.moveItem(id, { folderId: b, fileName: 'taken.txt' }, actor)).rejects.toBeInstanceOf(ConflictError);
    expect(await text(graph, other)).toBe('t');
  });

  it('a sync job moves at Graph what was renamed or moved at the filesystem source, reading nothing', async () => {
    const root = path.join(gw.srcRoot, 'to-graph');
    writeTree(root, { 'one.txt': 'one', 'sub/two.txt': 'two', 'three.txt': 'three' });
    const jobId = await defineJob(gw, jobBody('sync-graph', { source: { connectorId: 'src', folderPath: '/to-graph' }, target: { connectorId: 'graph', folderPath: `/${base}/out` }, options: { mode: 'sync', deletions: 'delete' } }));
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 3 });
    const twoId = await graph.idByPath(`/${base}/out/sub`, 'two.txt');
    fs.renameSync(path.join(root, 'one.txt'), path.join(root, 'uno.txt'));
    fs.renameSync(path.join(root, 'sub/two.txt'), path.join(root, 'two.txt'));
    fs.rmSync(path.join(root, 'three.txt'));
    const opened = gw.src.opened;
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 2, removed: 1, failed: 0, bytesRead: 0 });
    expect(gw.src.opened).toBe(opened);
    expect(await graph.idByPath(`/${base}/out`, 'two.txt')).toBe(twoId);
    const listed = (await graph.listFolder(await graph.idByPath(`/${base}`, 'out'))).items.map((i) => `${i.baseType}:${i.name}`).sort();
    expect(listed).toEqual(['document:two.txt', 'document:uno.txt', 'folder:sub']);
    expect(await text(graph, await graph.idByPath(`/${base}/out`, 'uno.txt'))).toBe('one');
  });
});

describe(`SharePoint REST move group (simulator), ${MODE} mode`, () => {
  let engine: SharePointEngine;
  let gw: JobsGateway;
  let sp: ContentConnector;
  let base: string;

  beforeAll(async () => {
    engine = await useSharePointEngine();
    base = (await new SharePointSetup(engine.info).createTestFolder('move')).path;
    gw = await startJobsGateway({ extraYaml: `  - ${JSON.stringify({ id: 'sp', typeId: 'sharepoint', description: 'SharePoint', params: engine.info.connectorParams })}\n` });
    sp = gw.app.get(ConnectorRegistry).get('sp');
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  it('moves and renames a file with MoveTo, keeping its id; refuses a taken name', async () => {
    const a = await sp.folders!.createFolder(`${base}/a`, actor);
    const b = await sp.folders!.createFolder(`${base}/b`, actor);
    const id = await sp.createFile({ folderId: a, fileName: 'x.txt', content: Readable.from([Buffer.from('x')]) }, actor);
    const other = await sp.createFile({ folderId: b, fileName: 'taken.txt', content: Readable.from([Buffer.from('t')]) }, actor);
    expect(await sp.move!.moveItem(id, { folderId: b, fileName: 'y.txt' }, actor)).toBe(id);
    expect((await sp.getItem(id)).path).toBe(`${base}/b/y.txt`);
    expect(await sp.idByPath(`${base}/b`, 'y.txt')).toBe(id);
    expect(await text(sp, id)).toBe('x');
    await expect(sp.move!.moveItem(id, { folderId: b, fileName: 'taken.txt' }, actor)).rejects.toBeInstanceOf(ConflictError);
    expect(await text(sp, other)).toBe('t');
  });
});

const S3_ENGINE = ((process.env.GATEWAY_S3_E2E_ENGINES ?? 'minio').split(',')[0].trim() || 'minio') as S3EngineName;

describe(`S3 move group (${S3_ENGINE}), ${MODE} mode`, () => {
  let engine: S3Engine;
  let gw: JobsGateway;
  let s3: ContentConnector;

  beforeAll(async () => {
    engine = await useS3Engine(S3_ENGINE);
    const bucket = await createBucket(directClient(engine.info), 'move');
    gw = await startJobsGateway({
      extraYaml: `  - ${JSON.stringify({ id: 's3', typeId: 's3', description: 'S3', params: connectorParams(engine.info, bucket) })}\n`,
      env: { S3_TEST_SECRET: engine.info.secretAccessKey },
    });
    s3 = gw.app.get(ConnectorRegistry).get('s3');
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
    await engine?.release();
  });

  it('moves and renames an object by copy then delete (the id is the key: it changes); refuses a taken key', async () => {
    const a = await s3.folders!.createFolder('/a', actor);
    const b = await s3.folders!.createFolder('/b/c', actor);
    const id = await s3.createFile({ folderId: a, fileName: 'x.txt', mimeType: 'text/plain', content: Readable.from([Buffer.from('x')]) }, actor);
    const other = await s3.createFile({ folderId: b, fileName: 'taken.txt', content: Readable.from([Buffer.from('t')]) }, actor);
    const moved = await s3.move!.moveItem(id, { folderId: b, fileName: 'y.txt' }, actor);
    expect(moved).toBe(await s3.idByPath('/b/c', 'y.txt'));
    expect(moved).not.toBe(id);
    await expect(s3.getItem(id)).rejects.toThrow();
    expect(await text(s3, moved)).toBe('x');
    expect((await s3.getItem(moved)).mimeType).toBe('text/plain');
    await expect(s3.move!.moveItem(moved, { folderId: b, fileName: 'taken.txt' }, actor)).rejects.toBeInstanceOf(ConflictError);
    expect([await text(s3, moved), await text(s3, other)]).toEqual(['x', 't']);
  });
});
