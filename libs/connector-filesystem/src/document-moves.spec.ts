import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ConflictError, NotFoundError, type Actor, type ContentConnector } from '@gateway/connector-api';
import { FilesystemConnectorType } from './filesystem.connector-type';

const actor: Actor = { username: 'alice' };

describe('Filesystem move group', () => {
  let dir: string;
  let fsc: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'fs-move-')));
    fsc = await new FilesystemConnectorType().create({ id: 'fs', typeId: 'filesystem', description: '', params: { root: path.join(dir, 'root') } }, { dataDir: dir });
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  const text = async (id: string) => {
    const chunks: Buffer[] = [];
    for await (const c of await fsc.openContent(id)) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const content = (s: string) => Readable.from([Buffer.from(s)]);

  it('moves and renames a document with its versions; its new id is its new path', async () => {
    const from = await fsc.folders!.createFolder('/a', actor);
    const to = await fsc.folders!.createFolder('/b/c', actor);
    const id = await fsc.createFile({ folderId: from, fileName: 'x.txt', content: content('one') }, actor);
    await fsc.contentUpdate!.updateContent(id, { content: content('two') }, actor);
    const moved = await fsc.move!.moveItem(id, { folderId: to, fileName: 'y.txt' }, actor);
    expect(moved).toBe(await fsc.idByPath('/b/c', 'y.txt'));
    await expect(fsc.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await text(moved)).toBe('two');
    const versions = await fsc.versioning!.listVersions(moved);
    expect(versions).toHaveLength(2);
    expect(await text(versions.find((v) => v.label === '1.0')!.id)).toBe('one');
  });

  it('refuses a name taken in the destination, leaving both documents', async () => {
    const folder = await fsc.folders!.createFolder('/a', actor);
    const x = await fsc.createFile({ folderId: folder, fileName: 'x.txt', content: content('x') }, actor);
    const y = await fsc.createFile({ folderId: folder, fileName: 'y.txt', content: content('y') }, actor);
    await expect(fsc.move!.moveItem(x, { folderId: folder, fileName: 'y.txt' }, actor)).rejects.toBeInstanceOf(ConflictError);
    expect([await text(x), await text(y)]).toEqual(['x', 'y']);
  });

  it('finishes a move cut by a crash after its new link (both names on the one file)', async () => {
    const folder = await fsc.folders!.createFolder('/a', actor);
    const x = await fsc.createFile({ folderId: folder, fileName: 'x.txt', content: content('x') }, actor);
    fs.linkSync(path.join(dir, 'root', 'a', 'x.txt'), path.join(dir, 'root', 'a', 'moved.txt'));
    const moved = await fsc.move!.moveItem(x, { folderId: folder, fileName: 'moved.txt' }, actor);
    expect(await text(moved)).toBe('x');
    expect(fs.existsSync(path.join(dir, 'root', 'a', 'x.txt'))).toBe(false);
  });
});
