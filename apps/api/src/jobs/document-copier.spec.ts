import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import { CLOCK_TOLERANCE_MS, DocumentCopier, globToRegExp, joinPath, resolveFolderId, type CopyGuard } from './document-copier';
import type { JobDefinition } from '../config/job-definition.dto';
import type { DocItem } from './task-plan';

const actor: Actor = { username: 'alice' };

/** Copies between two real filesystem connectors on temporary folders. */
describe('DocumentCopier', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'copier-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  function definition(options: Partial<JobDefinition['options']> = {}, targetFolder = '/out'): JobDefinition {
    return {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: targetFolder },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], ...options },
    };
  }

  const copier = (options: Partial<JobDefinition['options']> = {}, targetFolder?: string) => new DocumentCopier(definition(options, targetFolder), source, target, actor);

  /** A guard that follows the streams a copy opens, and can say "cut". */
  function guard(cancelled = false): CopyGuard & { opened: Readable[]; cancelled: boolean } {
    return {
      cancelled,
      opened: [],
      track(stream: Readable) {
        this.opened.push(stream);
        return stream;
      },
    };
  }

  async function put(connector: ContentConnector, folder: string, name: string, text: string): Promise<string> {
    const folderId = await connector.folders!.createFolder(folder, actor);
    return connector.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, actor);
  }

  async function read(connector: ContentConnector, id: string): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of await connector.openContent(id)) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async function targetText(folder: string, name: string): Promise<string> {
    return read(target, await target.idByPath(folder, name));
  }

  const item = (id: string, rel: string, extra: Partial<DocItem> = {}): DocItem => ({ id, rel, path: `/in/${rel}`, mimeType: 'text/plain', ...extra });
  const fresh = { fresh: true, claimedAt: Date.now() };

  it('writes a new document at its path relative to the target folder, making the folders', async () => {
    const id = await put(source, '/in/sub/deeper', 'a.txt', 'alpha');
    const g = guard();
    const outcome = await copier().copy(item(id, 'sub/deeper/a.txt'), fresh, false, g);
    // The checksum: the SHA-256 hashed on the copy thread, checked against the target's hash of what it wrote.
    const checksum = '8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8';
    expect(outcome).toEqual({ docId: id, outcome: 'p', sourcePath: '/in/sub/deeper/a.txt', targetId: expect.any(String), removed: false, checksum, verified: 'sha256' });
    expect(await targetText('/out/sub/deeper', 'a.txt')).toBe('alpha');
    // Between two filesystem connectors the target copies the file itself: no stream is opened.
    expect(g.opened).toHaveLength(0);
  });

  it('streams the content of a source that withdrew its localFiles group (it reads otherwise)', async () => {
    const id = await put(source, '/in', 'a.txt', 'alpha');
    const derived = Object.assign(Object.create(source) as ContentConnector, { localFiles: undefined });
    const g = guard();
    const outcome = await new DocumentCopier(definition(), derived, target, actor).copy(item(id, 'a.txt'), fresh, false, g);
    expect(outcome).toMatchObject({ outcome: 'p' });
    expect(await targetText('/out', 'a.txt')).toBe('alpha');
    expect(g.opened).toHaveLength(1);
  });

  it('asks the target for a direct copy with the document, folder, name and media type, and reports its id', async () => {
    const id = await put(source, '/in', 'a.txt', 'alpha');
    const asked: unknown[] = [];
    let made: string | undefined;
    const direct = Object.assign(Object.create(target) as ContentConnector, {
      directCopy: {
        copyFrom: async (...args: Parameters<NonNullable<ContentConnector['directCopy']>['copyFrom']>) => {
          asked.push(args);
          made = (await target.directCopy!.copyFrom(...args))?.id;
          return made === undefined ? undefined : { id: made, sha256: '8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8', size: 5 };
        },
      },
    });
    const g = guard();
    const outcome = await new DocumentCopier(definition(), source, direct, actor).copy(item(id, 'a.txt'), fresh, false, g);
    expect(outcome).toMatchObject({ outcome: 'p', targetId: made, checksum: '8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8' });
    expect(asked).toEqual([[source.localFiles, id, { folderId: await target.idByPath('/', 'out'), fileName: 'a.txt', mimeType: 'text/plain' }, actor]]);
    expect(g.opened).toHaveLength(0);
  });

  it('writes a document of the source folder itself into the target folder, also when that is the root', async () => {
    const id = await put(source, '/in', 'top.txt', 'top');
    expect((await copier().copy(item(id, 'top.txt'), fresh, false, guard()))?.outcome).toBe('p');
    expect(await targetText('/out', 'top.txt')).toBe('top');
    expect((await copier({}, '/').copy(item(id, 'top.txt'), fresh, false, guard()))?.outcome).toBe('p');
    expect(await targetText('/', 'top.txt')).toBe('top');
  });

  it('skips a document whose name matches an exclude pattern, writing nothing', async () => {
    const id = await put(source, '/in', 'notes.tmp', 'x');
    const outcome = await copier({ exclude: ['*.bak', '*.tmp'] }).copy(item(id, 'notes.tmp'), fresh, false, guard());
    expect(outcome).toEqual({ docId: id, outcome: 's', sourcePath: '/in/notes.tmp', message: 'Excluded by pattern ^.*\\.tmp$' });
    await expect(target.idByPath('/out', 'notes.tmp')).rejects.toThrow();
  });

  it('leaves an existing target alone with onExisting skip (a duplicate)', async () => {
    const id = await put(source, '/in', 'a.txt', 'new');
    const existing = await put(target, '/out', 'a.txt', 'old');
    const outcome = await copier({ onExisting: 'skip' }).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toEqual({ docId: id, outcome: 'd', sourcePath: '/in/a.txt', targetId: existing, message: 'Already exists at the target' });
    expect(await targetText('/out', 'a.txt')).toBe('old');
  });

  it('replaces an existing target with onExisting overwrite', async () => {
    const id = await put(source, '/in', 'a.txt', 'new');
    await put(target, '/out', 'a.txt', 'old');
    const outcome = await copier({ onExisting: 'overwrite' }).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p', message: 'overwritten' });
    expect(await targetText('/out', 'a.txt')).toBe('new');
  });

  it('adds a version to an existing target with onExisting version', async () => {
    const id = await put(source, '/in', 'a.txt', 'new');
    const existing = await put(target, '/out', 'a.txt', 'old');
    const outcome = await copier({ onExisting: 'version' }).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p', message: 'new version' });
    expect(await targetText('/out', 'a.txt')).toBe('new');
    expect((await target.versioning!.listVersions(existing)).length).toBe(2);
  });

  it('copies every version, oldest first, with copyVersions', async () => {
    const id = await put(source, '/in', 'v.txt', 'one');
    await new Promise((r) => setTimeout(r, 20));
    const latest = await source.contentUpdate!.updateContent(id, { content: Readable.from([Buffer.from('two')]), mimeType: 'text/plain', fileName: 'v.txt' }, actor);
    const outcome = await copier({ copyVersions: true }).copy(item(latest, 'v.txt'), fresh, false, guard());
    expect(outcome?.outcome).toBe('p');
    const targetId = await target.idByPath('/out', 'v.txt');
    const versions = await target.versioning!.listVersions(targetId);
    expect(versions.length).toBe(2);
    const oldestFirst = [...versions].reverse();
    expect([await read(target, oldestFirst[0].id), await read(target, oldestFirst[1].id)]).toEqual(['one', 'two']);
  });

  it('copies the current version alone, and says so, to a target that keeps no versions', async () => {
    const id = await put(source, '/in', 'v.txt', 'one');
    const latest = await source.contentUpdate!.updateContent(id, { content: Readable.from([Buffer.from('two')]), mimeType: 'text/plain', fileName: 'v.txt' }, actor);
    const unversioned = Object.assign(Object.create(target) as ContentConnector, { versioning: undefined });
    const outcome = await new DocumentCopier(definition({ copyVersions: true }), source, unversioned, actor).copy(item(latest, 'v.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p', message: 'copyVersions: the target keeps no versions, the current version only was copied' });
    expect(await targetText('/out', 'v.txt')).toBe('two');
    expect(await target.versioning!.listVersions(await target.idByPath('/out', 'v.txt'))).toHaveLength(1);
  });

  it("keeps the source's version order when their dates tie or run backwards (clocks to the second, skew)", async () => {
    const id = await put(source, '/in', 'v.txt', 'one');
    let latest = id;
    for (const text of ['two', 'three']) {
      latest = await source.contentUpdate!.updateContent(id, { content: Readable.from([Buffer.from(text)]), mimeType: 'text/plain', fileName: 'v.txt' }, actor);
    }
    // Newest first, as the group promises, but the newest dated earliest: a sort by date would reverse them.
    const skewed = Object.assign(Object.create(source) as ContentConnector, {
      versioning: { listVersions: async (v: string) => (await source.versioning!.listVersions(v)).map((x, i) => ({ ...x, modified: new Date(1_000 + i)})) },
    });
    const outcome = await new DocumentCopier(definition({ copyVersions: true }), skewed, target, actor).copy(item(latest, 'v.txt'), fresh, false, guard());
    expect(outcome?.outcome).toBe('p');
    const versions = await target.versioning!.listVersions(await target.idByPath('/out', 'v.txt'));
    expect(await Promise.all([...versions].reverse().map((v) => read(target, v.id)))).toEqual(['one', 'two', 'three']);
  });

  it('copies the document alone with copyVersions when the source lists no versions or cannot version', async () => {
    const id = await put(source, '/in', 'v.txt', 'only');
    const noList = Object.assign(Object.create(source) as ContentConnector, { versioning: { listVersions: async () => [] } });
    expect((await new DocumentCopier(definition({ copyVersions: true }), noList, target, actor).copy(item(id, 'v.txt'), fresh, false, guard()))?.outcome).toBe('p');
    expect(await targetText('/out', 'v.txt')).toBe('only');
    const unversioned = Object.assign(Object.create(source) as ContentConnector, { versioning: undefined });
    const g = guard();
    const outcome = await new DocumentCopier(definition({ copyVersions: true }, '/out2'), unversioned, target, actor).copy(item(id, 'v.txt'), fresh, false, g);
    expect(outcome).toMatchObject({ outcome: 'p' });
    // Still a localFiles source: its one content is copied directly, no stream opened.
    expect(g.opened).toHaveLength(0);
    expect(await target.versioning!.listVersions(await target.idByPath('/out2', 'v.txt'))).toHaveLength(1);
  });

  it('reports an existing target it cannot remove for overwrite as an error, keeping the target', async () => {
    const id = await put(source, '/in', 'a.txt', 'new');
    await put(target, '/out', 'a.txt', 'old');
    const stuck = Object.assign(Object.create(target) as ContentConnector, { deleteItem: async () => Promise.reject(new Error('locked')) });
    const outcome = await new DocumentCopier(definition({ onExisting: 'overwrite' }), source, stuck, actor).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'e', message: 'INTERNAL: locked' });
    expect(await targetText('/out', 'a.txt')).toBe('old');
  });

  it('counts a copy whose source is already gone at removal as removed by someone else (not removed here)', async () => {
    const id = await put(source, '/in', 'a.txt', 'x');
    const vanished = Object.assign(Object.create(source) as ContentConnector, {
      deleteItem: async () => {
        const { NotFoundError } = await import('@gateway/connector-api');
        throw new NotFoundError('document', id);
      },
    });
    const outcome = await new DocumentCopier(definition({ removeSource: true }), vanished, target, actor).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p', removed: false });
  });

  it('removes the source after the copy with removeSource', async () => {
    const id = await put(source, '/in', 'a.txt', 'moved');
    const outcome = await copier({ removeSource: true }).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p', removed: true });
    await expect(source.getItem(id)).rejects.toThrow();
    expect(await targetText('/out', 'a.txt')).toBe('moved');
  });

  it('counts a target written since the claim as the earlier attempt\'s write (recovered), without writing again', async () => {
    const id = await put(source, '/in', 'a.txt', 'same');
    const claimedAt = Date.now();
    const written = await put(target, '/out', 'a.txt', 'same');
    const g = guard();
    const outcome = await copier().copy(item(id, 'a.txt', { size: 4 }), { fresh: false, claimedAt }, false, g);
    expect(outcome).toEqual({ docId: id, outcome: 'p', sourcePath: '/in/a.txt', targetId: written, message: 'recovered: written by an earlier attempt of this run', removed: false, bytes: 4 });
    expect(g.opened).toHaveLength(0);
  });

  it('does not count a target older than the claim, or of another size, as the earlier attempt\'s write', async () => {
    const id = await put(source, '/in', 'a.txt', 'same');
    await put(target, '/out', 'a.txt', 'same');
    const later = Date.now() + 10 * CLOCK_TOLERANCE_MS;
    expect(await copier().copy(item(id, 'a.txt', { size: 4 }), { fresh: false, claimedAt: later }, false, guard())).toMatchObject({ outcome: 'd' });
    expect(await copier().copy(item(id, 'a.txt', { size: 99 }), { fresh: false, claimedAt: Date.now() - 60_000 }, false, guard())).toMatchObject({ outcome: 'd' });
    const sizeUnknown = await copier().copy(item(id, 'a.txt', { size: undefined }), { fresh: false, claimedAt: Date.now() - 60_000 }, false, guard());
    expect(sizeUnknown).toMatchObject({ outcome: 'p', message: 'recovered: written by an earlier attempt of this run' });
  });

  it('writes a document redone after a claim when the earlier attempt left nothing at the target', async () => {
    const id = await put(source, '/in', 'a.txt', 'late');
    const outcome = await copier().copy(item(id, 'a.txt'), { fresh: false, claimedAt: Date.now() - 60_000 }, false, guard());
    expect(outcome).toMatchObject({ outcome: 'p' });
    expect(outcome).not.toHaveProperty('message');
    expect(await targetText('/out', 'a.txt')).toBe('late');
  });

  it('fetches a run-errors item by id: its path, type and size come from the source', async () => {
    const id = await put(source, '/in/sub', 'b.txt', 'bravo');
    const bare: DocItem = { id, rel: 'sub/b.txt' };
    const c = copier();
    expect(c.sourcePath(bare)).toBe('/in/sub/b.txt');
    expect(await c.copy(bare, fresh, true, guard())).toMatchObject({ outcome: 'p', sourcePath: '/in/sub/b.txt' });
    expect(await targetText('/out/sub', 'b.txt')).toBe('bravo');
  });

  it('reports a document it cannot read as an error with the gateway error code', async () => {
    const id = await put(source, '/in', 'gone.txt', 'x');
    await source.deleteItem(id, true, actor);
    const outcome = await copier().copy(item(id, 'gone.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ docId: id, outcome: 'e', sourcePath: '/in/gone.txt' });
    expect(outcome?.message).toMatch(/^[A-Z_]+: /);
  });

  it('reports an error that is not a gateway error as INTERNAL', async () => {
    const broken = Object.assign(Object.create(source) as ContentConnector, {
      openContent: async () => Promise.reject(new TypeError('socket hang up')),
      localFiles: undefined,
    });
    const id = await put(source, '/in', 'a.txt', 'x');
    const outcome = await new DocumentCopier(definition(), broken, target, actor).copy(item(id, 'a.txt'), fresh, false, guard());
    expect(outcome).toMatchObject({ outcome: 'e', message: 'INTERNAL: socket hang up' });
  });

  it('answers nothing (the document stays claimed) and writes nothing when the run is cut', async () => {
    const id = await put(source, '/in', 'a.txt', 'x');
    expect(await copier().copy(item(id, 'a.txt'), fresh, false, guard(true))).toBeUndefined();
    await expect(target.idByPath('/out', 'a.txt')).rejects.toThrow();
  });

  it('answers nothing when the run is cut while the document is being written', async () => {
    const id = await put(source, '/in', 'a.txt', 'x'.repeat(100_000));
    // Streamed (a source without its localFiles group is not copied directly), so the cut reaches the write.
    source = Object.assign(Object.create(source) as ContentConnector, { localFiles: undefined });
    const g = guard();
    g.track = function (stream: Readable) {
      this.opened.push(stream);
      this.cancelled = true;
      stream.destroy(new Error('killed'));
      return stream;
    };
    expect(await copier().copy(item(id, 'a.txt'), fresh, false, g)).toBeUndefined();
    await expect(target.idByPath('/out', 'a.txt')).rejects.toThrow();
  });

  it('makes a target folder once per copier, and again after a failure', async () => {
    const made: string[] = [];
    const counting = Object.assign(Object.create(target) as ContentConnector, {
      folders: {
        createFolder: async (p: string, a: Actor) => {
          made.push(p);
          if (made.length === 1) throw new Error('disk hiccup');
          return target.folders!.createFolder(p, a);
        },
      },
    });
    const c = new DocumentCopier(definition(), source, counting, actor);
    const a = await put(source, '/in', 'a.txt', 'a');
    const b = await put(source, '/in', 'b.txt', 'b');
    const d = await put(source, '/in', 'd.txt', 'd');
    expect((await c.copy(item(a, 'a.txt'), fresh, false, guard()))?.outcome).toBe('e');
    expect((await c.copy(item(b, 'b.txt'), fresh, false, guard()))?.outcome).toBe('p');
    expect((await c.copy(item(d, 'd.txt'), fresh, false, guard()))?.outcome).toBe('p');
    expect(made).toEqual(['/out', '/out']);
  });

  it('resolves a target folder by path on a connector that cannot make folders', async () => {
    await target.folders!.createFolder('/out', actor);
    const noFolders = Object.assign(Object.create(target) as ContentConnector, { folders: undefined });
    expect(await resolveFolderId(noFolders, '/out')).toBe(await target.idByPath('/', 'out'));
    expect(await resolveFolderId(noFolders, '/')).toBe((await target.rootFolder()).folderId);
    expect(await resolveFolderId(noFolders, '')).toBe((await target.rootFolder()).folderId);
  });
});

describe('copier helpers', () => {
  it('turns an exclude glob into an anchored pattern: * any run, ? one character, the rest literal', () => {
    const r = globToRegExp('a?c*.t(x)t');
    expect(r.source).toBe('^a.c.*\\.t\\(x\\)t$');
    expect(r.test('abcZZ.t(x)t')).toBe(true);
    expect(r.test('ac.t(x)t')).toBe(false);
    expect(r.test('xabc.t(x)t')).toBe(false);
    expect(globToRegExp('[a]+{b}^$|\\').test('[a]+{b}^$|\\')).toBe(true);
  });

  it('joins a relative path to a folder, the root included', () => {
    expect(joinPath('/', 'a/b')).toBe('/a/b');
    expect(joinPath('/in', 'a/b')).toBe('/in/a/b');
  });
});
