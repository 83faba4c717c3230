import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { STAMP_FIELDS, toPrecision, type ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from '../contract/fixtures';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, type JobsGateway } from './jobs-helpers';

/**
 * copyVersions carries each version's original dates and authors (issue 33 §2, decision 0094), from a
 * filesystem source into every content connector of the contract fixtures: a target whose fixture pins the
 * `versionStamps` capability must report, for every version, the source's modification date (to its
 * precision) and author, and the document's creation date and author; one that does not gets every version
 * all the same, and the outcome says what was not kept. One table over the fixtures, no code per connector.
 */

/** Three versions by three authors on three old dates, the last one empty; milliseconds that a precision of seconds drops. */
const HISTORY = [
  { bytes: randomBytes(70_000), by: 'bob', at: new Date('2001-02-03T04:05:06.789Z') },
  { bytes: Buffer.from('second version'), by: 'carol', at: new Date('2005-06-07T08:09:10.111Z') },
  { bytes: Buffer.alloc(0), by: 'dave', at: new Date('2010-11-12T13:14:15.222Z') },
];

/** CMIS 1.1's date and author properties: read-only by the specification; the server's type definition is asked all the same. */
const CMIS_STAMP_PROPERTIES = ['cmis:creationDate', 'cmis:lastModificationDate', 'cmis:createdBy', 'cmis:lastModifiedBy'];

interface ReportRow {
  relPath: string;
  outcome: string;
  message: string | null;
}

describe.each(Object.values(CONNECTOR_FIXTURES))(`copyVersions keeps dates and authors: filesystem → $typeId, ${MODE} mode`, (fixture) => {
  const declares = fixture.capabilities.includes('versionStamps');
  let env: ContractEnvironment;
  let gw: JobsGateway;
  let source: ContentConnector;
  let target: ContentConnector;

  beforeAll(async () => {
    env = await fixture.setup();
    gw = await startJobsGateway({ extraYaml: `  - ${env.connectorYaml}\n`, env: env.env });
    source = gw.app.get(ConnectorRegistry).get('src');
    target = gw.app.get(ConnectorRegistry).get(env.connectorId);
  });
  afterAll(async () => {
    await gw?.close();
    await env?.teardown();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  /** The history at the source: each version written by its author, then dated as HISTORY says (the filesystem keeps stamps). */
  async function seed(folder: string): Promise<void> {
    const folderId = await source.folders!.createFolder(folder, { username: 'seed' });
    const [first, ...rest] = HISTORY;
    const id = await source.createFile({ folderId, fileName: 'history.bin', content: Readable.from([first.bytes]) }, { username: first.by });
    await source.versionStamps!.stampWritten!(id, { created: first.at, modified: first.at }, { username: first.by });
    for (const v of rest) {
      await source.contentUpdate!.updateContent(id, { content: Readable.from([v.bytes]) }, { username: v.by });
      await source.versionStamps!.stampWritten!(id, { modified: v.at }, { username: v.by });
    }
  }

  it(`${declares ? 'every version keeps its date and author at the target' : 'every version is copied, and the outcome says the dates and authors were not kept'}`, async () => {
    const name = `stamps-${randomBytes(3).toString('hex')}`;
    await seed(`/${name}`);
    const targetFolder = `${env.testFolderPath}/${name}`;
    const jobId = await defineJob(gw, { jobName: name, source: { connectorId: 'src', folderPath: `/${name}` }, target: { connectorId: env.connectorId, folderPath: targetFolder }, options: { copyVersions: true } });
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    const [row] = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200)).body.results.rows as ReportRow[];

    const id = await target.idByPath(targetFolder, 'history.bin');
    const versions = [...(await target.versioning!.listVersions(id))].reverse();
    expect(versions.map((v) => v.size)).toEqual(HISTORY.map((h) => h.bytes.length));
    const group = target.versionStamps;
    if (!declares) {
      expect(group).toBeUndefined();
      expect(row).toMatchObject({ outcome: 'p', message: expect.stringContaining(`copyVersions: connector ${env.connectorId} cannot keep the original ${STAMP_FIELDS.join(', ')}`) });
      // Where the repository describes its own date and author properties (CMIS), it says they are its own to set.
      const own = (await target.propertyUpdate?.describeProperties?.())?.filter((p) => CMIS_STAMP_PROPERTIES.includes(p.name)) ?? [];
      if (fixture.typeId === 'cmis') expect(own.map((p) => [p.name, p.writable]).sort()).toEqual(CMIS_STAMP_PROPERTIES.map((name) => [name, false]).sort());
      return;
    }
    expect(group).toBeDefined();
    const at = (d: Date) => toPrecision(d, group!.precisionMs).toISOString();
    const kept = new Set(group!.keeps);
    // An empty version keeps the write's dates where the group says so (and the outcome says it, below).
    const datedAt = (size: number) => kept.has('modified') && (size > 0 || group!.stampsEmptyContent !== false);
    // Each version read on its own (getItem of its id): its modification date and author.
    const seen = await Promise.all(versions.map(async (v) => target.getItem(v.id)));
    expect(seen.map((v) => ({ modified: datedAt(v.size ?? 0) ? v.modified?.toISOString() : '-', by: kept.has('modifiedBy') ? v.modifiedBy : '-' }))).toEqual(
      HISTORY.map((h) => ({ modified: datedAt(h.bytes.length) ? at(h.at) : '-', by: kept.has('modifiedBy') ? h.by : '-' })),
    );
    const doc = await target.getItem(id);
    if (kept.has('created')) expect(doc.created?.toISOString()).toBe(at(HISTORY[0].at));
    if (kept.has('createdBy')) expect(doc.createdBy).toBe('bob');
    expect(row.outcome).toBe('p');
    if (kept.size === STAMP_FIELDS.length && group!.stampsEmptyContent !== false) expect(row.message).toBeNull();
    if (kept.size < STAMP_FIELDS.length) expect(row.message).toContain(`copyVersions: connector ${env.connectorId} cannot keep the original`);
    if (group!.stampsEmptyContent === false) expect(row.message).toContain(`copyVersions: connector ${env.connectorId} keeps no dates for an empty version`);
  });

  it('as a source: the filesystem target gets each version with the date and author the source lists for it', async () => {
    const name = `stamps-back-${randomBytes(3).toString('hex')}`;
    const folderId = await target.folders!.createFolder(`${env.testFolderPath}/${name}`, { username: 'seed' });
    const [first, ...rest] = HISTORY;
    // An empty version is a stream that ends at once (an empty chunk would be one more read for some clients).
    const content = (bytes: Buffer) => Readable.from(bytes.length > 0 ? [bytes] : []);
    const id = await target.createFile({ folderId, fileName: 'history.bin', content: content(first.bytes) }, { username: first.by });
    for (const v of rest) await target.contentUpdate!.updateContent(id, { content: content(v.bytes) }, { username: v.by });
    const listed = await target.versioning!.listVersions(id);
    const doc = await target.getItem(id);
    const jobId = await defineJob(gw, { jobName: name, source: { connectorId: env.connectorId, folderPath: `${env.testFolderPath}/${name}` }, target: { connectorId: 'dst', folderPath: `/${name}` }, options: { copyVersions: true } });
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0 });
    const dst = gw.app.get(ConnectorRegistry).get('dst');
    const copied = await dst.versioning!.listVersions(await dst.idByPath(`/${name}`, 'history.bin'));
    // Newest first on both sides; the newest version's author is the document's last writer where the list names none.
    // An older version the list names no author for (S3, Graph, SharePoint) is the job's own write: its author is not compared.
    const unnamed = (i: number) => listed[i].modifiedBy === undefined && i > 0;
    expect(copied.map((v, i) => ({ size: v.size, modified: v.modified.toISOString(), by: unnamed(i) ? '-' : v.modifiedBy }))).toEqual(
      listed.map((v, i) => ({ size: v.size, modified: v.modified.toISOString(), by: unnamed(i) ? '-' : (v.modifiedBy ?? doc.modifiedBy) })),
    );
  });
});
