import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { InvalidArgumentError, NotFoundError, type Actor, type ContentConnector } from '@gateway/connector-api';
import { FilesystemConnectorType } from './filesystem.connector-type';

const actor: Actor = { username: 'alice' };
const content = (text = 'alpha') => Readable.from([Buffer.from(text)]);

/** createFile and directCopy.copyFrom write `properties` in the document's first record; getItems reads documents as getItem does. */
describe('filesystem connector: properties written with the content, documents read together', () => {
  let dir: string;
  let src: ContentConnector;
  let dst: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'fs-props-')));
    const open = (id: string) => new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    src = await open('src');
    dst = await open('dst');
  });
  afterEach(async () => {
    await src.close?.();
    await dst.close?.();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  async function put(connector: ContentConnector, folder: string, name: string, properties?: Record<string, string>): Promise<string> {
    const folderId = await connector.folders!.createFolder(folder, actor);
    return connector.createFile({ folderId, fileName: name, content: content(), ...(properties ? { properties } : {}) }, actor);
  }

  async function absent(connector: ContentConnector, folder: string, name: string): Promise<boolean> {
    return connector.idByPath(folder, name).then(
      () => false,
      (e: unknown) => e instanceof NotFoundError,
    );
  }

  it('declares propertiesOnCreate on its propertyUpdate group', () => {
    expect(dst.propertyUpdate?.propertiesOnCreate).toBe(true);
  });

  it('createFile keeps the given properties (an empty value sets nothing) and refuses a bad one naming it, writing nothing', async () => {
    const id = await put(dst, '/out', 'a.txt', { Title: 'Report', Empty: '' });
    expect((await dst.getItem(id)).properties).toEqual({ Title: 'Report' });
    const refused = put(dst, '/out', 'b.txt', { Title: 'x', svc_name: 'y' });
    await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(refused).rejects.toMatchObject({ parameter: 'svc_name' });
    expect(await absent(dst, '/out', 'b.txt')).toBe(true);
  });

  it('directCopy.copyFrom writes the properties in the first record, on the copy thread', async () => {
    const sourceId = await put(src, '/in', 'a.txt');
    const folderId = await dst.folders!.createFolder('/out', actor);
    const done = await dst.directCopy!.copyFrom(src.localFiles!, sourceId, { folderId, fileName: 'a.txt', properties: { Title: 'Copied', Tags: 'a,b' } }, actor);
    expect(done).toBeDefined();
    expect((await dst.getItem(done!.id)).properties).toEqual({ Title: 'Copied', Tags: 'a,b' });
    expect((await dst.getItem(done!.id)).createdBy).toBe('alice');
    await expect(dst.directCopy!.copyFrom(src.localFiles!, sourceId, { folderId, fileName: 'b.txt', properties: { 'cmis:name': 'x' } }, actor)).rejects.toMatchObject({ parameter: 'cmis:name' });
    expect(await absent(dst, '/out', 'b.txt')).toBe(true);
  });

  it('directCopy.copyFrom writes the properties of a document too large for the copy thread (the large-copy path) as well', async () => {
    const folder = await src.folders!.createFolder('/in', actor);
    const large = Buffer.alloc(3 * 1024 * 1024 + 7, 0x61);
    const sourceId = await src.createFile({ folderId: folder, fileName: 'large.bin', content: Readable.from([large]) }, actor);
    const folderId = await dst.folders!.createFolder('/out', actor);
    const done = await dst.directCopy!.copyFrom(src.localFiles!, sourceId, { folderId, fileName: 'large.bin', properties: { Title: 'Large' } }, actor);
    expect(done).toMatchObject({ size: large.length });
    expect((await dst.getItem(done!.id)).properties).toEqual({ Title: 'Large' });
  });

  it('getItems answers each document as getItem does, and leaves out what getItem answers otherwise', async () => {
    const a = await put(src, '/in', 'a.txt', { p: '1' });
    const b = await put(src, '/in', 'b.txt');
    const c = await put(src, '/in/sub', 'c.txt', { q: '2' });
    // A file dropped in by hand: no record.
    await fsp.writeFile(path.join(dir, 'src', 'in', 'hand.txt'), 'by hand');
    const hand = await src.idByPath('/in', 'hand.txt');
    await src.contentUpdate!.updateContent(a, { content: content('alpha 2') }, actor);
    const folder = await src.idByPath('/', 'in');
    const missing = `${b.slice(0, -1)}x`;
    const version = `${a};1`;
    const items = await src.getItems!([a, b, c, hand, folder, missing, version, 'not-an-id']);
    expect([...items.keys()].sort()).toEqual([a, b, c, hand].sort());
    for (const id of [a, b, c, hand]) expect(items.get(id)).toEqual(await src.getItem(id));
    expect(items.get(a)?.properties).toEqual({ p: '1' });
    expect(items.get(a)?.versionCount).toBe(2);
  });
});
