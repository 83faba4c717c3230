import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { toPrecision, type ContentConnector, type VersionInfo } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { SOURCE_STAMP_PROPERTIES } from '../../apps/api/src/jobs/version-stamp-properties';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from '../contract/fixtures';
import { CmisSetup, useCmisEngine, type CmisEngine } from '../contract/fixtures/cmis-engine';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * Issue 33 §2's acceptance: a document of 30 versions (sizes all different, one empty, each by its own author on
 * its own old date) copied with `copyVersions` by four jobs, filesystem → SharePoint REST (simulator) → CMIS
 * (OpenCMIS InMemory) → Graph (simulator) → filesystem, ends with 30 versions in order, each with its bytes. What
 * each hop keeps of the dates and authors (decision 0105), so what the chain's end can read:
 * - SharePoint keeps each version's date as its own field, to the minute (the chain's coarsest precision), and
 *   the newest version's author; an older version's author is not kept, as a field nor as a property (its
 *   columns are the item's, not each version's), and the job's outcome says so.
 * - CMIS keeps none as fields; its versions keep the date, author and label as properties source_modified,
 *   source_author, source_version where the document type declares them (this file's type does), and the next
 *   job reads them back instead of CMIS's own write time.
 * - Graph keeps each version's date (seconds), but not an empty version's (an upload session takes no empty
 *   content), nor an older version's author; the outcome says both.
 * A second chain, filesystem → CMIS → filesystem, keeps every date to the millisecond and every author.
 */

const VERSIONS = 30;
const EMPTY = 12;
/** Distinct sizes, one empty; distinct authors; distinct dates, far apart, with seconds and milliseconds a minute precision drops. */
const HISTORY = Array.from({ length: VERSIONS }, (_, i) => ({
  bytes: i === EMPTY ? Buffer.alloc(0) : randomBytes(1_000 + i * 997),
  by: `author-${String(i).padStart(2, '0')}`,
  // Mid-day UTC: no local time in a daylight-saving change of the SharePoint web's zone.
  at: new Date(Date.UTC(1995 + (i % 20), i % 12, 1 + (i % 27), 12 + (i % 7), (i * 7) % 60, (i * 13) % 60, (i * 37) % 1000)),
}));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MINUTE = 60_000;

/** A versionable CMIS type that declares the three properties, so CMIS keeps each version's original. */
const CHAIN_TYPE = 'gw:versionChainDocument';

interface ReportRow {
  outcome: string;
  message: string | null;
}

describe(`copyVersions through four repositories keeps 30 versions, their bytes, dates and authors, ${MODE} mode`, () => {
  let sharepoint: ContractEnvironment;
  let graph: ContractEnvironment;
  let cmisEngine: CmisEngine;
  let cmisFolder: string;
  let gw: JobsGateway;
  const connector = (id: string): ContentConnector => gw.app.get(ConnectorRegistry).get(id);

  beforeAll(async () => {
    sharepoint = await CONNECTOR_FIXTURES.sharepoint.setup();
    graph = await CONNECTOR_FIXTURES.graph.setup();
    cmisEngine = await useCmisEngine();
    const setup = new CmisSetup(cmisEngine.info);
    await setup.ensureDocumentType(CHAIN_TYPE, 'VersionableType', [...SOURCE_STAMP_PROPERTIES]);
    cmisFolder = (await setup.createTestFolder('chain')).path;
    const cmisParams = { url: cmisEngine.info.browserUrl, repositoryId: cmisEngine.info.repositoryId, user: cmisEngine.info.username, password: '${CHAIN_CMIS_PASSWORD}', userMapping: 'actor', documentType: CHAIN_TYPE };
    const cmisYaml = JSON.stringify({ id: 'chain-cmis', typeId: 'cmis', description: 'Version chain (CMIS)', params: cmisParams });
    gw = await startJobsGateway({
      extraYaml: [sharepoint.connectorYaml, graph.connectorYaml, cmisYaml].map((y) => `  - ${y}\n`).join(''),
      env: { ...sharepoint.env, ...graph.env, CHAIN_CMIS_PASSWORD: cmisEngine.info.password },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sharepoint?.teardown();
    await graph?.teardown();
    await cmisEngine?.release();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  /** The history at the filesystem source, each version written by its author, then dated (the filesystem keeps all four fields). */
  async function seed(folder: string): Promise<void> {
    const source = connector('src');
    const folderId = await source.folders!.createFolder(folder, { username: 'seed' });
    const [first, ...rest] = HISTORY;
    const id = await source.createFile({ folderId, fileName: 'history.bin', content: Readable.from([first.bytes]) }, { username: first.by });
    await source.versionStamps!.stampWritten!(id, { created: first.at, createdBy: first.by, modified: first.at, modifiedBy: first.by }, { username: first.by });
    for (const v of rest) {
      await source.contentUpdate!.updateContent(id, { content: Readable.from(v.bytes.length > 0 ? [v.bytes] : []) }, { username: v.by });
      await source.versionStamps!.stampWritten!(id, { modified: v.at, modifiedBy: v.by }, { username: v.by });
    }
  }

  /** One copy job with copyVersions: it writes the one document; answers its outcome's row. */
  async function hop(name: string, from: { connectorId: string; folderPath: string }, to: { connectorId: string; folderPath: string }): Promise<ReportRow> {
    const jobId = await defineJob(gw, { jobName: name, source: from, target: to, options: { copyVersions: true } });
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    const [row] = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as ReportRow[];
    expect(row.outcome).toBe('p');
    return row;
  }

  /** The document's versions at a connector, oldest first, each with the sha256 of its bytes. */
  async function versionsAt(connectorId: string, folder: string): Promise<Array<VersionInfo & { sha256: string }>> {
    const c = connector(connectorId);
    const versions = [...(await c.versioning!.listVersions(await c.idByPath(folder, 'history.bin')))].reverse();
    return Promise.all(
      versions.map(async (v) => {
        const hash = createHash('sha256');
        for await (const chunk of await c.openContent(v.id)) hash.update(chunk as Buffer);
        return { ...v, sha256: hash.digest('hex') };
      }),
    );
  }

  it('fs → SharePoint → CMIS → Graph → fs: 30 versions in order, bytes equal per version, dates to the minute and the authors each hop keeps', async () => {
    const name = `chain-${randomBytes(3).toString('hex')}`;
    await seed(`/${name}`);
    const places = {
      sharepoint: { connectorId: sharepoint.connectorId, folderPath: `${sharepoint.testFolderPath}/${name}` },
      cmis: { connectorId: 'chain-cmis', folderPath: `${cmisFolder}/${name}` },
      graph: { connectorId: graph.connectorId, folderPath: `${graph.testFolderPath}/${name}` },
      end: { connectorId: 'dst', folderPath: `/${name}` },
    };
    const toSharePoint = await hop(`${name}-1`, { connectorId: 'src', folderPath: `/${name}` }, places.sharepoint);
    expect(toSharePoint.message).toContain(`copyVersions: connector ${sharepoint.connectorId} cannot keep the original modifiedBy`);
    expect(toSharePoint.message).toContain("its properties are the document's, not each version's");

    const toCmis = await hop(`${name}-2`, places.sharepoint, places.cmis);
    expect(toCmis.message).toContain(`copyVersions: connector chain-cmis keeps each version's original modified, modifiedBy and label as its properties ${SOURCE_STAMP_PROPERTIES.join(', ')}`);
    // At CMIS: each version's own properties hold the date SharePoint kept (to the minute) and SharePoint's label.
    const atCmis = await versionsAt('chain-cmis', places.cmis.folderPath);
    const atSharePoint = await versionsAt(sharepoint.connectorId, places.sharepoint.folderPath);
    expect(atCmis.map((v) => [v.properties?.source_modified, v.properties?.source_version])).toEqual(HISTORY.map((h, i) => [toPrecision(h.at, MINUTE).toISOString(), atSharePoint[i].label]));
    expect(atCmis[VERSIONS - 1].properties?.source_author).toBe(HISTORY[VERSIONS - 1].by);

    const toGraph = await hop(`${name}-3`, places.cmis, places.graph);
    expect(toGraph.message).toContain(`copyVersions: connector ${graph.connectorId} keeps no dates for an empty version`);
    await hop(`${name}-4`, places.graph, places.end);

    const end = await versionsAt('dst', places.end.folderPath);
    expect(end.map((v) => v.sha256)).toEqual(HISTORY.map((h) => sha256(h.bytes)));
    expect(end.map((v) => v.size)).toEqual(HISTORY.map((h) => h.bytes.length));
    // Every date as SharePoint kept it (to the minute), but the empty version's: Graph dated it by its write.
    const dated = (i: number) => i !== EMPTY;
    expect(end.map((v, i) => (dated(i) ? v.modified.toISOString() : '-'))).toEqual(HISTORY.map((h, i) => (dated(i) ? toPrecision(h.at, MINUTE).toISOString() : '-')));
    expect(end[EMPTY].modified.getTime()).toBeGreaterThan(Date.now() - 10 * MINUTE);
    // The newest version's author went through as the document's last writer at every hop; the older ones' stop at SharePoint.
    expect(end[VERSIONS - 1].modifiedBy).toBe(HISTORY[VERSIONS - 1].by);
    expect(end.slice(0, -1).filter((v, i) => v.modifiedBy === HISTORY[i].by)).toEqual([]);
    // The document's creation: its author kept as a field by SharePoint and Graph, its date lost at CMIS (a note of hop 2).
    const doc = await connector('dst').getItem(await connector('dst').idByPath(places.end.folderPath, 'history.bin'));
    expect(toCmis.message).toContain('it cannot keep the original created, createdBy');
    expect(doc.created?.getTime()).not.toBe(toPrecision(HISTORY[0].at, MINUTE).getTime());
  });

  it('fs → CMIS → fs: every date to the millisecond and every author, carried by the CMIS versions’ properties', async () => {
    const name = `chain-cmis-${randomBytes(3).toString('hex')}`;
    await seed(`/${name}`);
    const cmis = { connectorId: 'chain-cmis', folderPath: `${cmisFolder}/${name}` };
    await hop(`${name}-1`, { connectorId: 'src', folderPath: `/${name}` }, cmis);
    await hop(`${name}-2`, cmis, { connectorId: 'dst', folderPath: `/${name}` });
    const end = await versionsAt('dst', `/${name}`);
    expect(end.map((v) => ({ sha256: v.sha256, modified: v.modified.toISOString(), by: v.modifiedBy }))).toEqual(
      HISTORY.map((h) => ({ sha256: sha256(h.bytes), modified: h.at.toISOString(), by: h.by })),
    );
  });
});
