import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector, NewContent, NewFile, PropertyDefinition, VersionInfo, VersionStamp } from '@gateway/connector-api';
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
  const copy = (to: ContentConnector, from: ContentConnector = source, claim = { fresh: true, claimedAt: Date.now() }) =>
    new DocumentCopier(definition(), from, to, runner).copy({ id: sourceId, rel: 'h.txt', path: '/in/h.txt', mimeType: 'text/plain' }, claim, false, guard);
  /** A target whose versions keep properties of their own (as CMIS's do), declaring `declared`; its property writes recorded. */
  const withVersionProperties = (declared: string[], writes: Array<{ id: string; properties: Record<string, string> }>) =>
    Object.assign(Object.create(target) as ContentConnector, {
      versionStamps: undefined,
      versioning: { listVersions: (id: string) => target.versioning!.listVersions(id), versionProperties: true },
      propertyUpdate: {
        updateProperties: (id: string, properties: Record<string, string>, actor: Actor) => (writes.push({ id, properties }), target.propertyUpdate!.updateProperties(id, properties, actor)),
        describeProperties: (): Promise<PropertyDefinition[]> => Promise.resolve(declared.map((name) => ({ name, kind: 'string', multiValue: false, writable: true }))),
      },
    });

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
    expect(outcome).toMatchObject({
      outcome: 'p',
      message:
        "copyVersions: connector dst cannot keep the original createdBy, modifiedBy (it keeps created, modified); the target's own values are those of the write (as properties neither: its properties are the document's, not each version's, so source_modified, source_author, source_version would keep the newest version's only)",
    });
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

  it("writes each version's date, author and label as its properties where the target keeps them per version, not as fields", async () => {
    const writes: Array<{ id: string; properties: Record<string, string> }> = [];
    const outcome = await copy(withVersionProperties(['source_modified', 'source_author', 'source_version'], writes));
    expect(outcome).toMatchObject({
      outcome: 'p',
      message:
        "copyVersions: connector dst keeps each version's original modified, modifiedBy and label as its properties source_modified, source_author, source_version; it cannot keep the original created, createdBy, whose values are those of the write",
    });
    const labels = [...(await source.versioning!.listVersions(sourceId))].reverse().map((v) => v.label);
    expect(writes.map((w) => w.properties)).toEqual(HISTORY.map((h, i) => ({ source_modified: h.at.toISOString(), source_author: h.by, source_version: labels[i] })));
    expect(new Set(writes.map((w) => w.id))).toEqual(new Set([await target.idByPath('/out', 'h.txt')]));
  });

  it('writes no properties, and says why, where the target type does not declare them', async () => {
    const writes: Array<{ id: string; properties: Record<string, string> }> = [];
    const outcome = await copy(withVersionProperties(['source_modified'], writes));
    expect(writes).toEqual([]);
    expect(outcome?.message).toBe(
      "copyVersions: connector dst cannot keep the original created, modified, createdBy, modifiedBy; the target's own values are those of the write (as properties neither: its document type does not declare source_author, source_version (writable single strings), which would keep them per version)",
    );
  });

  it('takes the original date and author from a source version that carries them as properties (a copy of a copy), not its write', async () => {
    const originals = HISTORY.map((h, i) => ({ at: new Date(Date.UTC(1990, i, 1, 12, 0, 0, 7 * i)), by: `${h.by}-original` }));
    const copyOfCopy = Object.assign(Object.create(source) as ContentConnector, {
      versioning: {
        listVersions: async (id: string): Promise<VersionInfo[]> =>
          (await source.versioning!.listVersions(id)).map((v, i, all) => {
            const o = originals[all.length - 1 - i];
            return { ...v, properties: { source_modified: o.at.toISOString(), source_author: o.by, source_version: `${i}.0` } };
          }),
      },
    });
    expect(await copy(target, copyOfCopy)).toMatchObject({ outcome: 'p' });
    const versions = [...(await target.versioning!.listVersions(await target.idByPath('/out', 'h.txt')))].reverse();
    expect(versions.map((v) => ({ at: v.modified.toISOString(), by: v.modifiedBy }))).toEqual(originals.map((o) => ({ at: o.at.toISOString(), by: o.by })));
  });

  it('recognizes its own stamped copy when redone after a crash (the copy reports the source date, not the write time)', async () => {
    const claimedAt = Date.now();
    expect(await copy(target)).toMatchObject({ outcome: 'p' });
    const redone = await copy(target, source, { fresh: false, claimedAt });
    expect(redone).toMatchObject({ outcome: 'p', message: 'recovered: written by an earlier attempt of this run' });
    expect(await target.versioning!.listVersions(await target.idByPath('/out', 'h.txt'))).toHaveLength(3);
  });
});
