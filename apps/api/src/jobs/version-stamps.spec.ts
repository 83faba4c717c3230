import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector, NewContent, NewFile, VersionStamp } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import { DocumentCopier, type CopyGuard } from './document-copier';
import type { JobDefinition } from '../config/job-definition.dto';

const runner: Actor = { username: 'job-runner' };
/** Three versions by three authors, on days long before the copy. */
const HISTORY = [
  { text: 'one', by: 'bob', at: new Date('2001-02-03T04:05:06.789Z') },
  { text: 'two two', by: 'carol', at: new Date('2005-06-07T08:09:10.111Z') },
  { text: '', by: 'dave', at: new Date('2010-11-12T13:14:15.222Z') },
];

/** The copier's version writer (version-stamps.ts) between real filesystem connectors on temporary folders. */
describe('copyVersions keeps dates and authors', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;
  let sourceId: string;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'stamps-')));
    const open = async (id: string) => new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
    // The source's history, each version written by its author and then dated as the source says.
    const folderId = await source.folders!.createFolder('/in', runner);
    sourceId = await source.createFile({ folderId, fileName: 'h.txt', mimeType: 'text/plain', content: text(HISTORY[0].text) }, { username: HISTORY[0].by });
    await source.versionStamps!.stampWritten!(sourceId, { modified: HISTORY[0].at, created: HISTORY[0].at }, { username: HISTORY[0].by });
    for (const v of HISTORY.slice(1)) {
      await source.contentUpdate!.updateContent(sourceId, { content: text(v.text), mimeType: 'text/plain' }, { username: v.by });
      await source.versionStamps!.stampWritten!(sourceId, { modified: v.at }, { username: v.by });
    }
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  const text = (s: string) => Readable.from([Buffer.from(s)]);
  const guard: CopyGuard = { cancelled: false, track: (s) => s };
  const definition = (): JobDefinition => ({
    jobName: 'j',
    jobGroup: 'g',
    source: { connectorId: 'src', folderPath: '/in', recursive: true },
    target: { connectorId: 'dst', folderPath: '/out' },
    options: { onExisting: 'skip', copyVersions: true, maxErrors: 0, removeSource: false, exclude: [] },
  });
  const copy = (to: ContentConnector) =>
    new DocumentCopier(definition(), source, to, runner).copy({ id: sourceId, rel: 'h.txt', path: '/in/h.txt', mimeType: 'text/plain' }, { fresh: true, claimedAt: Date.now() }, false, guard);

  it('gives every written version its source date and author, and the document its creation, oldest first', async () => {
    const outcome = await copy(target);
    expect(outcome).toMatchObject({ outcome: 'p' });
    expect(outcome?.message).toBeUndefined();
    const id = await target.idByPath('/out', 'h.txt');
    const versions = [...(await target.versioning!.listVersions(id))].reverse();
    expect(versions.map((v) => ({ at: v.modified.toISOString(), by: v.modifiedBy, size: v.size }))).toEqual(
      HISTORY.map((h) => ({ at: h.at.toISOString(), by: h.by, size: Buffer.byteLength(h.text) })),
    );
    const doc = await target.getItem(id);
    expect(doc).toMatchObject({ created: HISTORY[0].at, createdBy: 'bob', modified: HISTORY[2].at, modifiedBy: 'dave' });
    // Each older version read on its own says the same.
    expect(await target.getItem(versions[1].id)).toMatchObject({ modified: HISTORY[1].at, modifiedBy: 'carol' });
  });

  it('hands the stamp to the write itself for a target that takes it there, and sets nothing after', async () => {
    const seen: Array<VersionStamp | undefined> = [];
    const withWrite = Object.assign(Object.create(target) as ContentConnector, {
      versionStamps: { keeps: ['created', 'modified', 'createdBy', 'modifiedBy'], precisionMs: 1000 },
      directCopy: undefined,
      createFile: (input: NewFile, actor: Actor) => (seen.push(input.stamp), target.createFile(input, actor)),
      contentUpdate: { updateContent: (id: string, input: NewContent, actor: Actor) => (seen.push(input.stamp), target.contentUpdate!.updateContent(id, input, actor)) },
    });
    expect(await copy(withWrite)).toMatchObject({ outcome: 'p' });
    expect(seen).toEqual(HISTORY.map((h) => ({ created: HISTORY[0].at, createdBy: 'bob', modified: h.at, modifiedBy: h.by })));
  });

  it('says in the outcome what a target cannot keep, and still copies every version', async () => {
    const datesOnly = Object.assign(Object.create(target) as ContentConnector, {
      versionStamps: { keeps: ['created', 'modified'], precisionMs: 1, stampWritten: target.versionStamps!.stampWritten!.bind(target.versionStamps) },
    });
    const outcome = await copy(datesOnly);
    expect(outcome).toMatchObject({ outcome: 'p', message: 'copyVersions: connector dst cannot keep the original createdBy, modifiedBy (it keeps created, modified); the target\'s own values are those of the write' });
    const none = Object.assign(Object.create(target) as ContentConnector, { versionStamps: undefined });
    await target.deleteItem(await target.idByPath('/out', 'h.txt'), true, runner);
    const bare = await copy(none);
    expect(bare?.message).toMatch(/^copyVersions: connector dst cannot keep the original created, modified, createdBy, modifiedBy;/);
    expect(await target.versioning!.listVersions(await target.idByPath('/out', 'h.txt'))).toHaveLength(3);
  });

  it('keeps the copy and warns in its outcome when the target refuses a stamp after the write', async () => {
    const refusing = Object.assign(Object.create(target) as ContentConnector, {
      versionStamps: { keeps: ['created', 'modified', 'createdBy', 'modifiedBy'], precisionMs: 1, stampWritten: () => Promise.reject(new Error("the web's locale 1031 is not en-US")) },
    });
    const outcome = await copy(refusing);
    expect(outcome).toMatchObject({ outcome: 'p', message: "copyVersions: the original dates and authors were not kept (the web's locale 1031 is not en-US)" });
    expect(await target.versioning!.listVersions(await target.idByPath('/out', 'h.txt'))).toHaveLength(3);
  });
});
