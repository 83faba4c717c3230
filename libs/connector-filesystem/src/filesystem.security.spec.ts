import { execFileSync } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { GatewayError, InvalidArgumentError, NotFoundError, UpstreamError } from '@gateway/connector-api';
import { FilesystemConnectorType } from './filesystem.connector-type';
import type { FilesystemConnector } from './filesystem.connector';
import { encodeId } from './paths';
import { alice, body, filesUnder, readText, sandbox, type Sandbox } from '../../../test/support/fs-sandbox';

/** Ids built around hostile paths, as an attacker would craft them. */
const idOf = (raw: string) => 'fs-' + Buffer.from(raw, 'utf8').toString('base64url');

const HOSTILE_ID_PATHS = [
  '..',
  '../secret.txt',
  'sub/../../secret.txt',
  '/etc/passwd',
  '%2e%2e/secret.txt',
  '%252e%252e/secret.txt',
  '..%2fsecret.txt',
  '..\\secret.txt',
  'secret.txt\u0000',
  '.gateway',
  '.gateway/format.json',
  '.Gateway/docs',
];

const HOSTILE_NAMES = ['..', '.', '', '../escaped.txt', '/tmp/escaped.txt', 'a/b.txt', '..\\escaped.txt', 'x\u0000.txt', '%2e%2e', '%252e%252e', '..%2fescaped.txt', '.gateway', '.GATEWAY'];

const HOSTILE_FOLDER_PATHS = ['/..', '/../outside', '/sub/../../outside', '\\..\\outside', '/%2e%2e/outside', '/%252e%252e', '/sub/..%2f..%2f', '/sub\u0000', '/.gateway', '/.gateway/docs', '/.GATEWAY'];

function expectRefused(error: unknown, parameter: string): void {
  expect(error).toBeInstanceOf(GatewayError);
  if (error instanceof InvalidArgumentError) expect(error.parameter).toBe(parameter);
  else expect(error).toBeInstanceOf(NotFoundError);
}

describe('FilesystemConnector confinement to the root', () => {
  let sb: Sandbox;
  let fs: FilesystemConnector;
  let rootId: string;
  let outside: string;
  let snapshotOutside: () => Promise<string[]>;

  beforeEach(async () => {
    sb = await sandbox();
    fs = sb.connector;
    rootId = encodeId('');
    outside = path.join(sb.dir, 'outside');
    await fsp.mkdir(outside);
    await fsp.writeFile(path.join(outside, 'secret.txt'), 'top secret');
    await fsp.writeFile(path.join(sb.dir, 'secret.txt'), 'top secret');
    await fsp.mkdir(path.join(sb.root, 'sub'));
    await fsp.writeFile(path.join(sb.root, 'sub', 'ok.txt'), 'fine');
    // Everything outside the root, to prove no call created, changed or removed anything there.
    snapshotOutside = async () => {
      const all = await filesUnder(sb.dir);
      const listed = all.filter((f) => !f.startsWith('repo' + path.sep));
      return Promise.all(listed.map(async (f) => `${f}=${(await fsp.readFile(path.join(sb.dir, f))).toString('base64')}`));
    };
  });
  afterEach(() => sb.cleanup());

  describe.each(HOSTILE_ID_PATHS)('an id decoding to %j', (raw) => {
    const id = idOf(raw);

    it('is refused by every call taking an id, and nothing outside changes', async () => {
      const before = await snapshotOutside();
      const calls: [string, () => Promise<unknown>][] = [
        ['id', () => fs.getItem(id)],
        ['id', () => fs.openContent(id)],
        ['id', () => fs.listFolder(id)],
        ['id', () => fs.versioning.listVersions(id)],
        ['id', () => fs.deleteItem(id, true, alice)],
        ['id', () => fs.checkInOut.checkOut(id, alice)],
        ['id', () => fs.checkInOut.checkIn(id, alice)],
        ['fileId', () => fs.contentUpdate.updateContent(id, { content: body('pwned') }, alice)],
        ['fileId', () => fs.propertyUpdate.updateProperties(id, { k: 'v' }, alice)],
        ['folderId', () => fs.createFile({ folderId: id, fileName: 'dropped.txt', content: body('pwned') }, alice)],
      ];
      for (const [parameter, call] of calls) expectRefused(await call().catch((e) => e), parameter);
      expect(await snapshotOutside()).toEqual(before);
    });

    it('is refused when percent-encoded or with a version suffix', async () => {
      for (const variant of [encodeURIComponent(id), `${id};1`, id + '%3B1', id.replace('fs-', 'fs%2D')]) {
        expectRefused(await fs.getItem(variant).catch((e) => e), 'id');
        expectRefused(await fs.openContent(variant).catch((e) => e), 'id');
      }
    });
  });

  it.each(HOSTILE_NAMES)('refuses %j as the name of a new file and writes nothing', async (fileName) => {
    const before = await snapshotOutside();
    const error = await fs.createFile({ folderId: rootId, fileName, content: body('pwned') }, alice).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.parameter).toBe('fileName');
    expect(await snapshotOutside()).toEqual(before);
    expect(await fsp.readdir(sb.root)).toEqual(expect.arrayContaining(['.gateway', 'sub']));
    expect(await fsp.readdir(sb.root)).toHaveLength(2);
    expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
  });

  it.each(HOSTILE_FOLDER_PATHS)('refuses %j as a folder path everywhere', async (folderPath) => {
    const before = await snapshotOutside();
    expectRefused(await fs.idByPath(folderPath, 'secret.txt').catch((e) => e), 'folderPath');
    expectRefused(await fs.folders.createFolder(folderPath, alice).catch((e) => e), 'path');
    expectRefused(await fs.folders.createFolder(`${folderPath}/new`, alice).catch((e) => e), 'path');
    expectRefused(await fs.folders.deleteFolder(folderPath, alice).catch((e) => e), 'path');
    expect(await snapshotOutside()).toEqual(before);
    expect((await fsp.stat(path.join(sb.root, '.gateway', 'docs'))).isDirectory()).toBe(true);
  });

  it.each(HOSTILE_NAMES.filter((n) => n !== ''))('refuses %j as the fileName of idByPath', async (fileName) => {
    expectRefused(await fs.idByPath('/sub', fileName).catch((e) => e), 'fileName');
    expectRefused(await fs.idByPath('/', fileName).catch((e) => e), 'fileName');
  });

  describe('symbolic links', () => {
    beforeEach(async () => {
      await fsp.symlink(outside, path.join(sb.root, 'link-out'));
      await fsp.symlink(path.join(outside, 'secret.txt'), path.join(sb.root, 'file-out.txt'));
      await fsp.symlink(path.join(sb.root, 'sub', 'ok.txt'), path.join(sb.root, 'file-in.txt'));
      await fsp.symlink(path.join(sb.root, 'sub'), path.join(sb.root, 'dir-in'));
      await fsp.symlink(path.join(sb.root, '.gateway'), path.join(sb.root, 'meta-link'));
      await fsp.symlink('../../secret.txt', path.join(sb.root, 'sub', 'relative-out.txt'));
    });

    it('are left out of listings, whether they point outside or inside', async () => {
      const root = (await fs.listFolder(rootId)).items.map((i) => i.name);
      expect(root).toEqual(['sub']);
      const sub = (await fs.listFolder(encodeId('sub'))).items.map((i) => i.name);
      expect(sub).toEqual(['ok.txt']);
    });

    it('cannot be read, listed or found, directly or as a path component', async () => {
      for (const rel of ['link-out', 'link-out/secret.txt', 'file-out.txt', 'file-in.txt', 'dir-in', 'dir-in/ok.txt', 'meta-link', 'meta-link/format.json', 'sub/relative-out.txt']) {
        const id = encodeId(rel);
        await expect(fs.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(fs.openContent(id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(fs.listFolder(id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(fs.versioning.listVersions(id)).rejects.toBeInstanceOf(NotFoundError);
      }
      await expect(fs.idByPath('/link-out', 'secret.txt')).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.idByPath('/', 'file-out.txt')).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.idByPath('/dir-in', 'ok.txt')).rejects.toBeInstanceOf(NotFoundError);
    });

    it('cannot be written through, and nothing outside changes', async () => {
      const before = await snapshotOutside();
      await expect(fs.createFile({ folderId: encodeId('link-out'), fileName: 'x.txt', content: body('pwned') }, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.contentUpdate.updateContent(encodeId('file-out.txt'), { content: body('pwned') }, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.contentUpdate.updateContent(encodeId('link-out/secret.txt'), { content: body('pwned') }, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.propertyUpdate.updateProperties(encodeId('file-out.txt'), { k: 'v' }, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.checkInOut.checkOut(encodeId('file-out.txt'), alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.deleteItem(encodeId('file-out.txt'), true, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.deleteItem(encodeId('link-out/secret.txt'), true, alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.folders.deleteFolder('/link-out', alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.folders.deleteFolder('/meta-link', alice)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.folders.createFolder('/link-out/new', alice)).rejects.toMatchObject({ kind: 'conflict' });
      await expect(fs.folders.createFolder('/link-out', alice)).rejects.toMatchObject({ kind: 'conflict' });
      expect(await snapshotOutside()).toEqual(before);
      expect((await fsp.lstat(path.join(sb.root, 'link-out'))).isSymbolicLink()).toBe(true);
      expect(await fsp.readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    });

    it('inside a folder being deleted are removed as links, never followed', async () => {
      await fsp.symlink(outside, path.join(sb.root, 'sub', 'nested-out'));
      await fs.folders.deleteFolder('/sub', alice);
      await expect(fsp.access(path.join(sb.root, 'sub'))).rejects.toThrow();
      expect(await fsp.readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    });

    it('named .gateway refuse to start the connector', async () => {
      const root = path.join(sb.dir, 'other-repo');
      await fsp.mkdir(root);
      await fsp.symlink(outside, path.join(root, '.gateway'));
      const error = await new FilesystemConnectorType()
        .create({ id: 'x', typeId: 'filesystem', description: '', params: { root } }, { dataDir: sb.dir })
        .catch((e) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.parameter).toBe('root');
      expect(await fsp.readdir(outside)).toEqual(['secret.txt']);
    });
  });

  describe('the metadata folder', () => {
    beforeEach(async () => {
      const id = await fs.createFile({ folderId: rootId, fileName: 'a.txt', content: body('x') }, alice);
      await fs.contentUpdate.updateContent(id, { content: body('y') }, alice);
    });

    it('is never listed and cannot be addressed by id or path', async () => {
      expect((await fs.listFolder(rootId)).items.map((i) => i.name)).toEqual(['a.txt', 'sub']);
      for (const rel of ['.gateway', '.gateway/docs', '.gateway/format.json', '.gateway/tmp']) {
        expectRefused(await fs.getItem(encodeId(rel)).catch((e) => e), 'id');
        expectRefused(await fs.listFolder(encodeId(rel)).catch((e) => e), 'id');
        expectRefused(await fs.openContent(encodeId(rel)).catch((e) => e), 'id');
      }
      expectRefused(await fs.idByPath('/', '.gateway').catch((e) => e), 'fileName');
      expectRefused(await fs.idByPath('/.gateway', 'format.json').catch((e) => e), 'folderPath');
      expectRefused(await fs.folders.createFolder('/.gateway/x', alice).catch((e) => e), 'path');
      expectRefused(await fs.folders.deleteFolder('/.gateway', alice).catch((e) => e), 'path');
      expect(await fsp.readdir(path.join(sb.root, '.gateway'))).toEqual(expect.arrayContaining(['docs', 'tmp', 'format.json']));
    });

    it('is not reachable through a version id either', async () => {
      const id = encodeId('a.txt');
      expect(await readText(fs.openContent(`${id};1`))).toBe('x');
      for (const suffix of ['../1', '1/../../format.json', '0', '-1', '1e0', ' 1']) {
        expectRefused(await fs.openContent(`${id};${suffix}`).catch((e) => e), 'id');
      }
    });

    it('is an ordinary name below the root', async () => {
      const folderId = await fs.folders.createFolder('/sub/.gateway', alice);
      const id = await fs.createFile({ folderId, fileName: 'note.txt', content: body('fine') }, alice);
      expect(await readText(fs.openContent(id))).toBe('fine');
    });
  });

  it('refuses to start, without blocking, when a FIFO or a link stands in place of the metadata database', async () => {
    const id = await fs.createFile({ folderId: rootId, fileName: 'kept.txt', content: body('kept') }, alice);
    await fs.close();
    const database = path.join(sb.root, '.gateway', 'metadata.db');
    const forged = path.join(sb.dir, 'forged.db');
    await fsp.rename(database, forged);

    // SQLite would open a FIFO and wait on its first read for ever.
    execFileSync('mkfifo', [database]);
    const fifoError = await sb.reopen().catch((e: unknown) => e);
    expect(fifoError).toBeInstanceOf(InvalidArgumentError);
    expect((fifoError as InvalidArgumentError).parameter).toBe('root');
    expect((fifoError as Error).message).toContain('not a regular file');

    await fsp.rm(database);
    await fsp.symlink(forged, database);
    await expect(sb.reopen()).rejects.toBeInstanceOf(InvalidArgumentError);
    await fsp.rm(database);
    await fsp.symlink(forged, `${database}-wal`);
    await expect(sb.reopen()).rejects.toBeInstanceOf(InvalidArgumentError);
    await fsp.rm(`${database}-wal`);

    await fsp.rename(forged, database);
    const again = await sb.reopen();
    expect((await again.getItem(id)).createdBy).toBe(alice.username);
    await again.close();
  });

  it('answers a damaged metadata record as damaged (502), not as some other state', async () => {
    const id = await fs.createFile({ folderId: rootId, fileName: 'kept.txt', content: body('kept') }, alice);
    const db = new BetterSqlite3(path.join(sb.root, '.gateway', 'metadata.db'));
    db.prepare("UPDATE documents SET record = '{\"format\":1,' WHERE name = 'kept.txt'").run();
    db.close();
    const error = await fs.getItem(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toContain('damaged');
    await expect(fs.listFolder(rootId)).rejects.toBeInstanceOf(UpstreamError);
  });

  it('does not list or open special files dropped in by hand', async () => {
    execFileSync('mkfifo', [path.join(sb.root, 'pipe')]);
    expect((await fs.listFolder(rootId)).items.map((i) => i.name)).toEqual(['sub']);
    await expect(fs.getItem(encodeId('pipe'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(fs.openContent(encodeId('pipe'))).rejects.toBeInstanceOf(NotFoundError);
  });
});
