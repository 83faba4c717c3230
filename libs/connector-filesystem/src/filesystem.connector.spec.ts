import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  deriveCapabilities,
  markWholeLocalFile,
  type ItemInfo,
} from '@gateway/connector-api';
import { DIRECT_COPY_MAX_BYTES, type FilesystemConnector } from './filesystem.connector';
import { FilesystemConnectorType } from './filesystem.connector-type';
import { nameKey } from './metadata-store';
import { encodeId } from './paths';
import { alice, bob, body, filesUnder, readText, sandbox, type Sandbox } from '../../../test/support/fs-sandbox';

describe('FilesystemConnector', () => {
  let sb: Sandbox;
  let fs: FilesystemConnector;
  let rootId: string;

  beforeEach(async () => {
    sb = await sandbox();
    fs = sb.connector;
    rootId = (await fs.rootFolder()).folderId;
  });
  afterEach(() => sb.cleanup());

  const create = (name: string, content: string, folderId = rootId, actor = alice) =>
    fs.createFile({ folderId, fileName: name, content: body(content) }, actor);
  const names = (items: ItemInfo[]) => items.map((i) => i.name);

  describe('repository calls', () => {
    it('declares every capability group it implements, including folder deletion by path', () => {
      const caps = deriveCapabilities(fs);
      for (const name of ['createFile', 'updateFile', 'listVersions', 'checkIn', 'checkOut', 'createFolder', 'deleteFolder', 'updateProperties'] as const) {
        expect(caps[name]).toBe(true);
      }
      expect(caps.getAllSites).toBe(false);
      expect(caps.createFileFromItem).toBe(false);
    });

    it('describes the root folder with a stable id', async () => {
      const root = await fs.rootFolder();
      expect(root).toEqual({ folderId: encodeId(''), folderName: 'repo', folderPath: '/' });
      expect((await fs.describeRepository()).rootFolderId).toBe(root.folderId);
      expect(await (await sb.reopen()).rootFolder()).toEqual(root);
      const info = await fs.getItem(root.folderId);
      expect(info).toMatchObject({ id: root.folderId, path: '/', baseType: 'folder', typeId: 'folder' });
    });

    it('lists the document types that createFile accepts and refuses others', async () => {
      const types = await fs.types();
      expect(Object.keys(types).length).toBeGreaterThan(0);
      for (const [index, type] of Object.keys(types).entries()) {
        const id = await fs.createFile({ folderId: rootId, fileName: `t${index}.txt`, type, content: body('x') }, alice);
        expect((await fs.getItem(id)).typeId).toBe(type);
      }
      const error = await fs.createFile({ folderId: rootId, fileName: 'u.txt', type: 'cmis:policy', content: body('x') }, alice).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.parameter).toBe('type');
      await expect(fsp.access(path.join(sb.root, 'u.txt'))).rejects.toThrow();
    });

    it('reports health, and an unhealthy root as unavailable', async () => {
      await expect(fs.checkHealth()).resolves.toBeUndefined();
      await fsp.rm(sb.root, { recursive: true });
      await expect(fs.checkHealth()).rejects.toMatchObject({ kind: 'upstream_unavailable' });
    });
  });

  describe('documents', () => {
    it('stores an upload as a plain file and describes it', async () => {
      const before = Date.now();
      const id = await create('report.pdf', 'hello world');
      expect(await fsp.readFile(path.join(sb.root, 'report.pdf'), 'utf8')).toBe('hello world');
      const item = await fs.getItem(id);
      expect(item).toMatchObject({
        id,
        name: 'report.pdf',
        path: '/report.pdf',
        baseType: 'document',
        typeId: 'file',
        mimeType: 'application/pdf',
        size: 11,
        createdBy: 'alice',
        modifiedBy: 'alice',
        checkedOut: false,
        versionCount: 1,
        versionLabel: '1.0',
        versionSeriesId: id,
        properties: {},
      });
      expect(item.checkedOutBy).toBeUndefined();
      expect(item.etag).toMatch(/^[0-9a-z-]+$/);
      expect(item.created!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(item.modified!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    });

    it('streams content, whole or as an inclusive range', async () => {
      const id = await create('a.txt', '0123456789');
      expect(await readText(fs.openContent(id))).toBe('0123456789');
      expect(await readText(fs.openContent(id, { start: 2, end: 5 }))).toBe('2345');
      expect(await readText(fs.openContent(id, { start: 9, end: 9 }))).toBe('9');
      await expect(fs.openContent(id, { start: 5, end: 2 })).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'range' });
    });

    it('keeps a declared media type and derives the others from the extension', async () => {
      const declared = await fs.createFile({ folderId: rootId, fileName: 'data.bin', mimeType: 'Application/X-Custom; charset=x', content: body('x') }, alice);
      const generic = await fs.createFile({ folderId: rootId, fileName: 'pic.PNG', mimeType: 'application/octet-stream', content: body('x') }, alice);
      const form = await fs.createFile({ folderId: rootId, fileName: 'notes.md', mimeType: 'application/x-www-form-urlencoded', content: body('x') }, alice);
      const unknown = await create('noext', 'x');
      expect((await fs.getItem(form)).mimeType).toBe('text/markdown');
      expect((await fs.getItem(declared)).mimeType).toBe('application/x-custom');
      expect((await fs.getItem(generic)).mimeType).toBe('image/png');
      expect((await fs.getItem(unknown)).mimeType).toBe('application/octet-stream');
    });

    it('refuses a second file with the same name, or the name of a folder, with a conflict', async () => {
      await create('a.txt', 'first');
      await fs.folders.createFolder('/sub', alice);
      for (const name of ['a.txt', 'sub']) {
        const error = await create(name, 'second').catch((e) => e);
        expect(error).toBeInstanceOf(ConflictError);
      }
      expect(await fsp.readFile(path.join(sb.root, 'a.txt'), 'utf8')).toBe('first');
      expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
    });

    it('requires folderId to name an existing folder', async () => {
      const fileId = await create('a.txt', 'x');
      const notFolder = await create('b.txt', 'x', fileId).catch((e) => e);
      expect(notFolder).toBeInstanceOf(InvalidArgumentError);
      expect(notFolder.parameter).toBe('folderId');
      const missing = await create('b.txt', 'x', encodeId('nope')).catch((e) => e);
      expect(missing).toBeInstanceOf(NotFoundError);
      expect(missing.resource).toBe('item');
      const garbage = await create('b.txt', 'x', 'not-an-id').catch((e) => e);
      expect(garbage).toMatchObject({ kind: 'invalid_argument', parameter: 'folderId' });
    });

    it('creates files inside subfolders', async () => {
      const folderId = await fs.folders.createFolder('/x/y', alice);
      const id = await create('deep.txt', 'deep', folderId);
      expect(id).toBe(encodeId('x/y/deep.txt'));
      expect((await fs.getItem(id)).path).toBe('/x/y/deep.txt');
      expect(await readText(fs.openContent(id))).toBe('deep');
    });

    it('answers 404 for ids of missing items and 400 for folders where documents are expected', async () => {
      await expect(fs.getItem(encodeId('missing.txt'))).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.openContent(encodeId('missing.txt'))).rejects.toBeInstanceOf(NotFoundError);
      await fs.folders.createFolder('/dir', alice);
      await expect(fs.openContent(encodeId('dir'))).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'id' });
      await expect(fs.deleteItem(encodeId('dir'), true, alice)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'id' });
      await expect(fs.versioning.listVersions(encodeId('dir'))).rejects.toMatchObject({ kind: 'invalid_argument' });
    });
  });

  describe('ids and metadata across restarts', () => {
    it('gives the same ids and state to a new connector instance on the same root', async () => {
      const folderId = await fs.folders.createFolder('/docs', alice);
      const id = await create('a.txt', 'v1', folderId);
      await fs.contentUpdate.updateContent(id, { content: body('v2') }, bob);
      await fs.propertyUpdate.updateProperties(id, { project: 'apollo' }, bob);
      await fs.checkInOut.checkOut(id, alice);
      const before = await fs.getItem(id);
      const versionsBefore = await fs.versioning.listVersions(id);

      const again = await sb.reopen();
      expect(await again.idByPath('/docs', 'a.txt')).toBe(id);
      expect(await again.idByPath('/', 'docs')).toBe(folderId);
      expect(await again.getItem(id)).toEqual(before);
      expect(await again.versioning.listVersions(id)).toEqual(versionsBefore);
      expect(await readText(again.openContent(versionsBefore[1].id))).toBe('v1');
      await expect(again.contentUpdate.updateContent(id, { content: body('v3') }, bob)).rejects.toBeInstanceOf(ConflictError);
    });
  });

  describe('copying between two filesystem connectors', () => {
    let other: Sandbox;
    beforeEach(async () => {
      other = await sandbox();
    });
    afterEach(() => other.cleanup());

    it('copies a whole document, including an older version, and closes the source stream', async () => {
      const id = await create('a.bin', 'version one');
      await fs.contentUpdate.updateContent(id, { content: body('version two, longer') }, bob);
      const otherRoot = (await other.connector.rootFolder()).folderId;
      for (const [name, sourceId, expected] of [
        ['current.bin', id, 'version two, longer'],
        ['older.bin', (await fs.versioning.listVersions(id))[1].id, 'version one'],
      ]) {
        const stream = await fs.openContent(sourceId);
        const copied = await other.connector.createFile({ folderId: otherRoot, fileName: name, content: stream }, alice);
        expect(stream.destroyed).toBe(true);
        expect(await readText(other.connector.openContent(copied))).toBe(expected);
        expect(await other.connector.getItem(copied)).toMatchObject({ size: expected.length, createdBy: 'alice', versionCount: 1 });
      }
      expect(await filesUnder(path.join(other.root, '.gateway', 'tmp'))).toEqual([]);
    });

    it('copies a stream marked as reading a whole local file (a finished tus upload) in the kernel, without reading it', async () => {
      const file = path.join(other.root, '..', `marked-${path.basename(other.root)}.bin`);
      await fsp.writeFile(file, 'uploaded elsewhere');
      try {
        const stream = markWholeLocalFile(createReadStream(file), file);
        const copied = await fs.createFile({ folderId: (await fs.rootFolder()).folderId, fileName: 'marked.bin', content: stream }, alice);
        // Streamed, the body would have been read; copied by the kernel, the stream is only closed.
        expect(stream.readableDidRead).toBe(false);
        expect(stream.destroyed).toBe(true);
        expect(await readText(fs.openContent(copied))).toBe('uploaded elsewhere');
      } finally {
        await fsp.rm(file, { force: true });
      }
    });

    describe('directly (copyFrom, on the copy thread)', () => {
      it('copies the current document with its first record: creator, media type, one version, nothing staged left', async () => {
        const id = await create('a.txt', 'version one');
        await fs.contentUpdate.updateContent(id, { content: body('version two') }, bob);
        const otherRoot = (await other.connector.rootFolder()).folderId;
        const done = await other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: otherRoot, fileName: 'b.txt', mimeType: 'text/x-note' }, alice);
        const copied = done?.id;
        expect(copied).toBe(encodeId('b.txt'));
        // The hash of the bytes read on the copy thread, which the target's contentHash group reports without reading the file again.
        expect(done?.sha256).toBe(createHash('sha256').update('version two').digest('hex'));
        expect(await other.connector.contentHash.hashOf(copied!)).toBe(done?.sha256);
        expect(await readText(other.connector.openContent(copied!))).toBe('version two');
        expect(await other.connector.getItem(copied!)).toMatchObject({ size: 11, createdBy: 'alice', modifiedBy: 'alice', mimeType: 'text/x-note', versionCount: 1 });
        expect(await filesUnder(path.join(other.root, '.gateway', 'tmp'))).toEqual([]);
        // The same record a restart reads.
        expect(await (await other.reopen()).getItem(copied!)).toMatchObject({ createdBy: 'alice', mimeType: 'text/x-note' });
      });

      it('copies a document larger than the copy thread takes on a large-copy thread: every chunk hashed, its record, its hash kept until the file changes', async () => {
        // Several 256 KiB chunks and a short last one, each byte distinct per position so a chunk written twice or skipped changes the hash.
        const bytes = Buffer.alloc(DIRECT_COPY_MAX_BYTES * 3 + 12_345);
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 18)) & 0xff;
        await fsp.writeFile(path.join(sb.root, 'big.bin'), bytes);
        const otherRoot = (await other.connector.rootFolder()).folderId;
        const done = await other.connector.directCopy.copyFrom(fs.localFiles, encodeId('big.bin'), { folderId: otherRoot, fileName: 'big.bin', mimeType: 'application/x-big' }, alice);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        expect(done).toEqual({ id: encodeId('big.bin'), sha256, size: bytes.length });
        expect((await fsp.readFile(path.join(other.root, 'big.bin'))).equals(bytes)).toBe(true);
        expect(await other.connector.getItem(done!.id)).toMatchObject({ size: bytes.length, createdBy: 'alice', mimeType: 'application/x-big', versionCount: 1 });
        expect(await filesUnder(path.join(other.root, '.gateway', 'tmp'))).toEqual([]);
        expect(await other.connector.contentHash.hashOf(done!.id)).toBe(sha256);
        // A byte flipped at the target afterwards: the kept hash no longer counts (size and mtime are the file's), the file is hashed again.
        const handle = await fsp.open(path.join(other.root, 'big.bin'), 'r+');
        await handle.write(Buffer.from([bytes[DIRECT_COPY_MAX_BYTES] ^ 0xff]), 0, 1, DIRECT_COPY_MAX_BYTES);
        await handle.utimes(new Date(), new Date(Date.now() + 5000));
        await handle.close();
        const flipped = Buffer.from(bytes);
        flipped[DIRECT_COPY_MAX_BYTES] ^= 0xff;
        expect(await other.connector.contentHash.hashOf(done!.id)).toBe(createHash('sha256').update(flipped).digest('hex'));
        // A name taken by hand (no record): refused before anything is copied, the file untouched.
        await fsp.writeFile(path.join(other.root, 'hand.bin'), 'mine');
        await expect(other.connector.directCopy.copyFrom(fs.localFiles, encodeId('big.bin'), { folderId: otherRoot, fileName: 'hand.bin' }, alice)).rejects.toBeInstanceOf(ConflictError);
        expect(await fsp.readFile(path.join(other.root, 'hand.bin'), 'utf8')).toBe('mine');
        expect(await filesUnder(path.join(other.root, '.gateway', 'tmp'))).toEqual([]);
        // The name is taken now: refused as createFile would, the file untouched.
        await expect(other.connector.directCopy.copyFrom(fs.localFiles, encodeId('big.bin'), { folderId: otherRoot, fileName: 'big.bin' }, alice)).rejects.toBeInstanceOf(ConflictError);
        expect((await fsp.readFile(path.join(other.root, 'big.bin'))).equals(flipped)).toBe(true);
      });

      it('leaves to streaming (undefined, nothing written) what it cannot copy: a version id, a leftover record', async () => {
        const id = await create('a.txt', 'one');
        await fs.contentUpdate.updateContent(id, { content: body('two') }, bob);
        const otherRoot = (await other.connector.rootFolder()).folderId;
        const to = (fileName: string) => ({ folderId: otherRoot, fileName });
        expect(await other.connector.directCopy.copyFrom(fs.localFiles, (await fs.versioning.listVersions(id))[1].id, to('v.txt'), alice)).toBeUndefined();
        // A record whose file was deleted by hand: createFile clears it, so it streams.
        const gone = await other.connector.createFile({ folderId: otherRoot, fileName: 'gone.txt', content: body('old') }, alice);
        await fsp.unlink(path.join(other.root, 'gone.txt'));
        expect(await other.connector.directCopy.copyFrom(fs.localFiles, id, to('gone.txt'), alice)).toBeUndefined();
        expect(await fsp.readdir(other.root)).toEqual(['.gateway']);
        expect(gone).toBe(encodeId('gone.txt'));
      });

      it('finds the source through its localFiles group, whatever wraps the connector', async () => {
        const id = await create('a.txt', 'alpha');
        const otherRoot = (await other.connector.rootFolder()).folderId;
        // As the metrics Proxy does: every member read through a wrapper, the driver's identity gone.
        const asked: string[] = [];
        const wrapped = new Proxy(fs, {
          get: (object, property) => (property === 'localFiles' ? { ...object.localFiles, unverifiedFile: (i: string) => (asked.push(i), object.localFiles.unverifiedFile(i)) } : Reflect.get(object, property)),
        });
        const copied = (await other.connector.directCopy.copyFrom(wrapped.localFiles, id, { folderId: otherRoot, fileName: 'a.txt' }, alice))?.id;
        expect(copied).toBe(encodeId('a.txt'));
        expect(asked).toEqual([id]);
        expect(await readText(other.connector.openContent(copied!))).toBe('alpha');
      });

      it('refuses as createFile and openContent would: taken name, missing source, folder ids, links', async () => {
        const id = await create('a.txt', 'alpha');
        const otherRoot = (await other.connector.rootFolder()).folderId;
        await other.connector.createFile({ folderId: otherRoot, fileName: 'taken.txt', content: body('mine') }, bob);
        const error = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
        const taken = await error(other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: otherRoot, fileName: 'taken.txt' }, alice));
        expect(taken).toBeInstanceOf(ConflictError);
        expect((taken as ConflictError).code).toBe('ALREADY_EXISTS');
        expect(await readText(other.connector.openContent(encodeId('taken.txt')))).toBe('mine');
        expect(await error(other.connector.directCopy.copyFrom(fs.localFiles, encodeId('none.txt'), { folderId: otherRoot, fileName: 'n.txt' }, alice))).toBeInstanceOf(NotFoundError);
        const folderSource = await error(other.connector.directCopy.copyFrom(fs.localFiles, rootId, { folderId: otherRoot, fileName: 'f.txt' }, alice));
        expect(folderSource).toBeInstanceOf(InvalidArgumentError);
        const docAsFolder = await error(other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: encodeId('taken.txt'), fileName: 'x.txt' }, alice));
        expect(docAsFolder).toMatchObject({ parameter: 'folderId' });
        await fsp.mkdir(path.join(sb.dir, 'outside'));
        await fsp.symlink(path.join(sb.dir, 'outside'), path.join(other.root, 'linked'));
        expect(await error(other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: encodeId('linked'), fileName: 'a.txt' }, alice))).toBeInstanceOf(NotFoundError);
        await fsp.symlink(path.join(sb.root, 'a.txt'), path.join(sb.root, 'alias.txt'));
        expect(await error(other.connector.directCopy.copyFrom(fs.localFiles, encodeId('alias.txt'), { folderId: otherRoot, fileName: 'y.txt' }, alice))).toBeInstanceOf(NotFoundError);
        expect(await fsp.readdir(path.join(sb.dir, 'outside'))).toEqual([]);
        expect((await fsp.readdir(other.root)).sort()).toEqual(['.gateway', 'linked', 'taken.txt']);
        await expect(other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: otherRoot, fileName: '../x' }, alice)).rejects.toMatchObject({ parameter: 'fileName' });
      });

      it('copies many documents at once, each whole, with a record each', async () => {
        const otherRoot = (await other.connector.rootFolder()).folderId;
        const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => create(`f${i}.txt`, `content ${i}`)));
        const copied = await Promise.all(ids.map((id, i) => other.connector.directCopy.copyFrom(fs.localFiles, id, { folderId: otherRoot, fileName: `f${i}.txt` }, alice)));
        for (const [i, c] of copied.entries()) expect(await readText(other.connector.openContent(c!.id))).toBe(`content ${i}`);
        const listed = await other.connector.listFolder(otherRoot);
        expect(listed.items).toHaveLength(50);
        expect(listed.items.every((item) => item.createdBy === 'alice')).toBe(true);
      });
    });

    it('writes the rest of a stream already partly read, and a ranged stream, as the bytes it delivers', async () => {
      const id = await create('a.txt', 'abcdefghij');
      const otherRoot = (await other.connector.rootFolder()).folderId;
      const ranged = await fs.openContent(id, { start: 2, end: 4 });
      const rangedId = await other.connector.createFile({ folderId: otherRoot, fileName: 'ranged.txt', content: ranged }, alice);
      expect(await readText(other.connector.openContent(rangedId))).toBe('cde');

      const started = await fs.openContent(id);
      const first: Buffer = await new Promise((resolve) => started.once('readable', () => resolve(started.read(3) as Buffer)));
      expect(first.toString()).toBe('abc');
      const restId = await other.connector.createFile({ folderId: otherRoot, fileName: 'rest.txt', content: started }, alice);
      expect(await readText(other.connector.openContent(restId))).toBe('defghij');
    });
  });

  describe('metadata a power cut or a hand cleaned up', () => {
    it('reads a document whose first record a power cut took back as a document without history', async () => {
      const id = await create('a.txt', 'first');
      // synchronous=NORMAL: a power cut can lose the last commits, here the first record.
      const db = new BetterSqlite3(path.join(sb.root, '.gateway', 'metadata.db'));
      expect(db.prepare("DELETE FROM documents WHERE name = 'a.txt'").run().changes).toBe(1);
      db.close();

      const item = await fs.getItem(id);
      expect(item).toMatchObject({ versionCount: 1, createdBy: undefined });
      expect(await readText(fs.openContent(id))).toBe('first');
      await fs.contentUpdate.updateContent(id, { content: body('second') }, bob);
      expect((await fs.versioning.listVersions(id)).length).toBe(2);
    });

    it('records an update killed between its rename and its record as the new version, the previous one kept', async () => {
      const id = await create('a.txt', 'first');
      const db = new BetterSqlite3(path.join(sb.root, '.gateway', 'metadata.db'));
      const recordBefore = db.prepare("SELECT * FROM documents WHERE name = 'a.txt'").get() as Record<string, unknown>;
      db.close();
      await fs.contentUpdate.updateContent(id, { content: body('second') }, bob);
      // Take the record back to before the update, as a kill between commitVersion's rename and its write leaves it:
      // the previous content archived as version 1 (a hard link), the new content in place, the record still at 1.
      const undo = new BetterSqlite3(path.join(sb.root, '.gateway', 'metadata.db'));
      const columns = Object.keys(recordBefore);
      undo.prepare(`INSERT OR REPLACE INTO documents (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`).run(recordBefore);
      undo.close();
      const again = await sb.reopen();
      const versions = await again.versioning.listVersions(id);
      expect(versions.map((v) => v.label)).toEqual(['2.0', '1.0']);
      expect(await readText(again.openContent(versions[1].id))).toBe('first');
      expect(await readText(again.openContent(id))).toBe('second');
      await again.contentUpdate.updateContent(id, { content: body('third') }, bob);
      expect((await again.versioning.listVersions(id)).map((v) => v.label)).toEqual(['3.0', '2.0', '1.0']);
      expect(await readText(again.openContent(`${id};2`))).toBe('second');
      await again.close();
    });

    it('keeps every record change across a restart, as one database file beside the content', async () => {
      const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`f${i}.txt`, `content ${i}`)));
      await fs.checkInOut.checkOut(ids[3], bob);
      await fs.propertyUpdate.updateProperties(ids[4], { project: 'apollo' }, alice);
      await fs.close();
      expect(await fsp.readdir(path.join(sb.root, '.gateway'))).toEqual(expect.arrayContaining(['metadata.db', 'format.json']));
      expect((await filesUnder(path.join(sb.root, '.gateway', 'docs'))).length).toBe(0);

      const again = await sb.reopen();
      const items = (await again.listFolder(rootId)).items;
      expect(items.map((i) => i.createdBy)).toEqual(Array(20).fill('alice'));
      expect(items.find((i) => i.name === 'f3.txt')).toMatchObject({ checkedOut: true, checkedOutBy: 'bob' });
      expect((await again.getItem(ids[4])).properties).toEqual({ project: 'apollo' });
      await again.close();
    });
    it('recreates tmp/ when it was deleted while running', async () => {
      await create('a.txt', 'one');
      await fsp.rm(path.join(sb.root, '.gateway', 'tmp'), { recursive: true });
      await new Promise((r) => setTimeout(r, 1100)); // tmp/ is re-checked at most once a second
      const id = await create('b.txt', 'two');
      expect(await readText(fs.openContent(id))).toBe('two');
    });
  });

  describe('files dropped in by hand', () => {
    it('are listed and readable with synthesized metadata', async () => {
      await fsp.writeFile(path.join(sb.root, 'dropped.txt'), 'by hand');
      await fsp.mkdir(path.join(sb.root, 'dropped-dir'));
      await fsp.writeFile(path.join(sb.root, 'dropped-dir', 'inner.csv'), 'a,b');
      const page = await fs.listFolder(rootId);
      expect(names(page.items)).toEqual(['dropped-dir', 'dropped.txt']);
      const file = page.items.find((i) => i.name === 'dropped.txt')!;
      expect(file).toMatchObject({ baseType: 'document', size: 7, versionCount: 1, versionLabel: '1.0', checkedOut: false, mimeType: 'text/plain' });
      expect(file.createdBy).toBeUndefined();
      expect(await readText(fs.openContent(file.id))).toBe('by hand');
      const inner = await fs.idByPath('/dropped-dir', 'inner.csv');
      expect((await fs.getItem(inner)).mimeType).toBe('text/csv');
      expect(await fs.versioning.listVersions(file.id)).toHaveLength(1);
    });

    it('keep the hand-dropped content as version 1 when updated through the gateway', async () => {
      await fsp.writeFile(path.join(sb.root, 'dropped.txt'), 'original');
      const id = encodeId('dropped.txt');
      await fs.contentUpdate.updateContent(id, { content: body('new') }, alice);
      const versions = await fs.versioning.listVersions(id);
      expect(versions.map((v) => v.label)).toEqual(['2.0', '1.0']);
      expect(await readText(fs.openContent(versions[1].id))).toBe('original');
      expect(await readText(fs.openContent(id))).toBe('new');
    });

    it('fold an edit made by hand into the current version, with a new etag', async () => {
      const id = await create('a.txt', 'gateway');
      const before = await fs.getItem(id);
      await fsp.writeFile(path.join(sb.root, 'a.txt'), 'edited by hand!');
      const after = await fs.getItem(id);
      expect(after.size).toBe(15);
      expect(after.etag).not.toBe(before.etag);
      expect(after.modifiedBy).toBeUndefined();
      expect(after.versionCount).toBe(1);
      await fs.contentUpdate.updateContent(id, { content: body('next') }, bob);
      const [latest, previous] = await fs.versioning.listVersions(id);
      expect(previous.size).toBe(15);
      expect(await readText(fs.openContent(previous.id))).toBe('edited by hand!');
      expect(latest.size).toBe(4);
    });

    it('drop the history of a document deleted by hand when a new one takes its name', async () => {
      const id = await create('a.txt', 'one');
      await fs.contentUpdate.updateContent(id, { content: body('two') }, alice);
      await fsp.rm(path.join(sb.root, 'a.txt'));
      await expect(fs.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
      expect(await create('a.txt', 'fresh', rootId, bob)).toBe(id);
      expect(await fs.getItem(id)).toMatchObject({ versionCount: 1, createdBy: 'bob', size: 5 });
      await expect(fs.getItem(`${id};1`)).resolves.toMatchObject({ size: 5 });
      await expect(fs.getItem(`${id};2`)).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('listing', () => {
    it('never shows the metadata folder, whatever the gateway has stored', async () => {
      const id = await create('a.txt', 'x');
      await fs.contentUpdate.updateContent(id, { content: body('y') }, alice);
      await fs.checkInOut.checkOut(id, alice);
      expect(await fsp.readdir(path.join(sb.root, '.gateway'))).not.toHaveLength(0);
      const items = (await fs.listFolder(rootId)).items;
      expect(names(items)).toEqual(['a.txt']);
      for (const item of items) expect(item.path).not.toContain('.gateway');
    });

    it('reports the entries it cannot address, with why, on the first page only (never its own metadata folder)', async () => {
      await create('a.txt', 'x');
      await create('b.txt', 'x');
      await fsp.writeFile(path.join(sb.root, 'back\\slash.txt'), 'b');
      await fsp.mkdir(path.join(sb.root, 'tab\tdir'));
      const first = await fs.listFolder(rootId, { limit: 1 });
      expect(names(first.items)).toEqual(['a.txt']);
      // In directory order, which the disk decides.
      expect([...(first.unaddressable ?? [])].sort((x, y) => x.name.localeCompare(y.name))).toEqual([
        { name: 'back\\slash.txt', baseType: 'document', reason: 'the name contains a path separator inside a name' },
        { name: 'tab\tdir', baseType: 'folder', reason: 'the name contains a control character' },
      ]);
      const second = await fs.listFolder(rootId, { limit: 1, cursor: first.nextCursor });
      expect(names(second.items)).toEqual(['b.txt']);
      expect(second.unaddressable).toBeUndefined();
    });

    it('sorts by name, mixes folders and documents, and pages with an opaque cursor', async () => {
      for (const name of ['b.txt', 'a.txt', 'C.txt', 'é.txt', '10.txt', '2.txt']) await create(name, name);
      await fs.folders.createFolder('/m-folder', alice);
      const all = (await fs.listFolder(rootId)).items;
      expect(names(all)).toEqual(['10.txt', '2.txt', 'C.txt', 'a.txt', 'b.txt', 'm-folder', 'é.txt']);
      expect(all.find((i) => i.name === 'm-folder')!.baseType).toBe('folder');

      const first = await fs.listFolder(rootId, { limit: 3 });
      expect(names(first.items)).toEqual(['10.txt', '2.txt', 'C.txt']);
      expect(typeof first.nextCursor).toBe('string');
      const second = await fs.listFolder(rootId, { limit: 3, cursor: first.nextCursor });
      expect(names(second.items)).toEqual(['a.txt', 'b.txt', 'm-folder']);
      const last = await fs.listFolder(rootId, { limit: 3, cursor: second.nextCursor });
      expect(names(last.items)).toEqual(['é.txt']);
      expect(last.nextCursor).toBeUndefined();
      const exact = await fs.listFolder(rootId, { limit: 7 });
      expect(exact.items).toHaveLength(7);
      expect(exact.nextCursor).toBeUndefined();
    });

    it('continues after the cursor even when entries change between pages', async () => {
      for (const name of ['a', 'b', 'c', 'd']) await create(name, name);
      const first = await fs.listFolder(rootId, { limit: 2 });
      await fs.deleteItem(encodeId('b'), true, alice);
      await create('bb', 'new');
      const second = await fs.listFolder(rootId, { limit: 10, cursor: first.nextCursor });
      expect(names(second.items)).toEqual(['bb', 'c', 'd']);
    });

    it('refuses a malformed cursor or limit, and a document as the folder', async () => {
      const fileId = await create('a.txt', 'x');
      await expect(fs.listFolder(rootId, { cursor: '!!' })).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'cursor' });
      await expect(fs.listFolder(rootId, { cursor: 'YQ==' })).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'cursor' });
      await expect(fs.listFolder(rootId, { limit: 0 })).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'limit' });
      await expect(fs.listFolder(rootId, { limit: 1.5 })).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'limit' });
      await expect(fs.listFolder(fileId)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'id' });
      await expect(fs.listFolder(encodeId('missing'))).rejects.toBeInstanceOf(NotFoundError);
    });

    it('describes documents in a listing exactly as getItem does', async () => {
      const id = await create('a.txt', 'x');
      await fs.contentUpdate.updateContent(id, { content: body('yy') }, bob);
      await fs.propertyUpdate.updateProperties(id, { colour: 'blue' }, bob);
      await fs.checkInOut.checkOut(id, bob);
      const listed = (await fs.listFolder(rootId)).items[0];
      expect(listed).toEqual(await fs.getItem(id));
      expect(listed).toMatchObject({ checkedOut: true, checkedOutBy: 'bob', versionCount: 2, properties: { colour: 'blue' } });
    });
  });

  describe('idByPath', () => {
    it('finds documents and folders by their parent path and name', async () => {
      const folderId = await fs.folders.createFolder('/a/b', alice);
      const id = await create('c.txt', 'x', folderId);
      expect(await fs.idByPath('/a/b', 'c.txt')).toBe(id);
      expect(await fs.idByPath('/a/b/', 'c.txt')).toBe(id);
      expect(await fs.idByPath('a/b', 'c.txt')).toBe(id);
      expect(await fs.idByPath('/a', 'b')).toBe(folderId);
      expect(await fs.idByPath('/', 'a')).toBe(encodeId('a'));
    });

    it('answers NotFoundError for a missing item', async () => {
      const error = await fs.idByPath('/nowhere', 'x.txt').catch((e) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error.resource).toBe('item');
      await expect(fs.idByPath('/', 'x.txt')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('versions', () => {
    it('adds a version on every content update and keeps older ones readable, newest first', async () => {
      const id = await create('a.txt', 'one');
      const etags = [(await fs.getItem(id)).etag];
      expect(await fs.contentUpdate.updateContent(id, { content: body('two!') }, bob)).toBe(id);
      etags.push((await fs.getItem(id)).etag);
      await fs.contentUpdate.updateContent(id, { content: body('three') }, alice);
      etags.push((await fs.getItem(id)).etag);
      expect(new Set(etags).size).toBe(3);

      const versions = await fs.versioning.listVersions(id);
      expect(versions.map((v) => v.label)).toEqual(['3.0', '2.0', '1.0']);
      expect(versions.map((v) => v.size)).toEqual([5, 4, 3]);
      expect(versions.map((v) => v.id)).toEqual([`${id};3`, `${id};2`, `${id};1`]);
      for (const v of versions) {
        expect(v.versionSeriesId).toBe(id);
        expect(v.name).toBe('a.txt');
        expect(v.modified).toBeInstanceOf(Date);
      }
      expect(await readText(fs.openContent(`${id};1`))).toBe('one');
      expect(await readText(fs.openContent(`${id};2`))).toBe('two!');
      expect(await readText(fs.openContent(`${id};3`))).toBe('three');
      expect(await readText(fs.openContent(`${id};2`, { start: 1, end: 2 }))).toBe('wo');

      expect(await fs.getItem(`${id};2`)).toMatchObject({ id: `${id};2`, size: 4, versionLabel: '2.0', modifiedBy: 'bob', versionCount: 3, versionSeriesId: id });
      expect(await fs.getItem(id)).toMatchObject({ id, size: 5, versionLabel: '3.0', modifiedBy: 'alice', createdBy: 'alice', versionCount: 3 });
      expect((await fs.getItem(`${id};1`)).etag).toBe(etags[0]);
    });

    it('answers 404 for a version that does not exist', async () => {
      const id = await create('a.txt', 'one');
      await expect(fs.getItem(`${id};2`)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.openContent(`${id};7`)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('applies changes through the current version id but refuses an older one', async () => {
      const id = await create('a.txt', 'one');
      await fs.contentUpdate.updateContent(`${id};1`, { content: body('two') }, alice);
      const error = await fs.contentUpdate.updateContent(`${id};1`, { content: body('three') }, alice).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.parameter).toBe('fileId');
      expect(await readText(fs.openContent(id))).toBe('two');
    });

    it('keeps the declared media type of the previous version unless a new one is declared', async () => {
      const id = await fs.createFile({ folderId: rootId, fileName: 'data', mimeType: 'text/x-special', content: body('x') }, alice);
      await fs.contentUpdate.updateContent(id, { content: body('y') }, alice);
      expect((await fs.getItem(id)).mimeType).toBe('text/x-special');
      await fs.contentUpdate.updateContent(id, { content: body('z'), mimeType: 'text/x-other' }, alice);
      expect((await fs.getItem(id)).mimeType).toBe('text/x-other');
      expect((await fs.getItem(`${id};1`)).mimeType).toBe('text/x-special');
    });
  });

  describe('delete', () => {
    it('removes a document with all its versions and metadata', async () => {
      const id = await create('a.txt', 'one');
      await fs.contentUpdate.updateContent(id, { content: body('two') }, alice);
      await fs.propertyUpdate.updateProperties(id, { k: 'v' }, alice);
      expect(await fs.deleteItem(id, true, alice)).toBe(id);
      await expect(fsp.access(path.join(sb.root, 'a.txt'))).rejects.toThrow();
      await expect(fs.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fs.openContent(`${id};1`)).rejects.toBeInstanceOf(NotFoundError);
      expect(await filesUnder(path.join(sb.root, '.gateway', 'docs'))).toEqual([]);
      // a new document of that name starts afresh
      await create('a.txt', 'new');
      expect(await fs.getItem(id)).toMatchObject({ versionCount: 1, properties: {} });
    });

    it('removes only the latest version when asked, restoring the previous one', async () => {
      const id = await create('a.txt', 'one');
      await fs.contentUpdate.updateContent(id, { content: body('two') }, bob);
      await fs.contentUpdate.updateContent(id, { content: body('three') }, alice);
      expect(await fs.deleteItem(id, false, alice)).toBe(id);
      expect(await readText(fs.openContent(id))).toBe('two');
      expect(await fs.getItem(id)).toMatchObject({ versionCount: 2, versionLabel: '2.0', modifiedBy: 'bob', size: 3 });
      expect((await fs.versioning.listVersions(id)).map((v) => v.label)).toEqual(['2.0', '1.0']);
      await expect(fs.getItem(`${id};3`)).rejects.toBeInstanceOf(NotFoundError);
      expect(await readText(fs.openContent(`${id};1`))).toBe('one');
      // version numbers are never reused, so an old version id never changes meaning
      await fs.contentUpdate.updateContent(id, { content: body('four') }, alice);
      expect((await fs.versioning.listVersions(id)).map((v) => v.label)).toEqual(['4.0', '2.0', '1.0']);
      expect(await readText(fs.openContent(`${id};2`))).toBe('two');
    });

    it('deletes the document when its only version is removed', async () => {
      const id = await create('a.txt', 'one');
      await fs.deleteItem(id, false, alice);
      await expect(fs.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(fsp.access(path.join(sb.root, 'a.txt'))).rejects.toThrow();
    });

    it('deletes files dropped in by hand', async () => {
      await fsp.writeFile(path.join(sb.root, 'dropped.txt'), 'x');
      await fs.deleteItem(encodeId('dropped.txt'), true, alice);
      await expect(fsp.access(path.join(sb.root, 'dropped.txt'))).rejects.toThrow();
    });

    it('answers 404 for a missing document', async () => {
      await expect(fs.deleteItem(encodeId('missing'), true, alice)).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('check-out and check-in', () => {
    it('records the holder and refuses others, naming the holder', async () => {
      const id = await create('a.txt', 'one');
      expect(await fs.checkInOut.checkOut(id, alice)).toBe(id);
      expect(await fs.getItem(id)).toMatchObject({ checkedOut: true, checkedOutBy: 'alice' });
      expect(await fs.checkInOut.checkOut(id, alice)).toBe(id); // again by the holder: no-op

      const attempts: (() => Promise<unknown>)[] = [
        () => fs.checkInOut.checkOut(id, bob),
        () => fs.contentUpdate.updateContent(id, { content: body('bob') }, bob),
        () => fs.propertyUpdate.updateProperties(id, { k: 'v' }, bob),
        () => fs.deleteItem(id, true, bob),
        () => fs.deleteItem(id, false, bob),
        () => fs.checkInOut.checkIn(id, bob, 'not mine'),
      ];
      for (const attempt of attempts) {
        const error = (await attempt().catch((e: unknown) => e)) as ConflictError;
        expect(error).toBeInstanceOf(ConflictError);
        expect(error.message).toBe("Document is checked out by 'alice'");
        expect(error.details).toMatchObject({ checkedOutBy: 'alice' });
      }
      expect(await readText(fs.openContent(id))).toBe('one');
      expect(await fs.getItem(id)).toMatchObject({ versionCount: 1, properties: {} });
    });

    it('lets the holder update, then check in a new version with a comment', async () => {
      const id = await create('a.txt', 'one');
      await fs.checkInOut.checkOut(id, alice);
      await fs.contentUpdate.updateContent(id, { content: body('two') }, alice);
      await fs.propertyUpdate.updateProperties(id, { status: 'draft' }, alice);
      expect(await fs.checkInOut.checkIn(id, alice, 'ready for review')).toBe(id);
      const item = await fs.getItem(id);
      expect(item).toMatchObject({ checkedOut: false, versionCount: 3, versionLabel: '3.0', checkinComment: 'ready for review', modifiedBy: 'alice', size: 3 });
      expect(item.checkedOutBy).toBeUndefined();
      const [latest, middle] = await fs.versioning.listVersions(id);
      expect(latest).toMatchObject({ label: '3.0', comment: 'ready for review', size: 3 });
      expect(middle.comment).toBeUndefined();
      expect(await readText(fs.openContent(latest.id))).toBe('two');
      expect(await readText(fs.openContent(middle.id))).toBe('two');
      // others may act again
      await fs.contentUpdate.updateContent(id, { content: body('bob') }, bob);
      expect((await fs.getItem(id)).checkinComment).toBeUndefined();
    });

    it('checks in without a comment', async () => {
      const id = await create('a.txt', 'one');
      await fs.checkInOut.checkOut(id, alice);
      await fs.checkInOut.checkIn(id, alice);
      expect(await fs.getItem(id)).toMatchObject({ versionCount: 2, checkedOut: false });
      expect((await fs.getItem(id)).checkinComment).toBeUndefined();
    });

    it('refuses to check in a document that is not checked out', async () => {
      const id = await create('a.txt', 'one');
      const error = await fs.checkInOut.checkIn(id, alice, 'x').catch((e) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe('NOT_CHECKED_OUT');
      expect((await fs.getItem(id)).versionCount).toBe(1);
    });

    it('checks out files dropped in by hand', async () => {
      await fsp.writeFile(path.join(sb.root, 'dropped.txt'), 'x');
      const id = encodeId('dropped.txt');
      await fs.checkInOut.checkOut(id, bob);
      await expect(fs.deleteItem(id, true, alice)).rejects.toMatchObject({ details: { checkedOutBy: 'bob' } });
    });

    it('refuses folders', async () => {
      const folderId = await fs.folders.createFolder('/f', alice);
      await expect(fs.checkInOut.checkOut(folderId, alice)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'id' });
    });
  });

  describe('properties', () => {
    it('stores custom properties without adding a version, and removes them with an empty value', async () => {
      const id = await create('a.txt', 'x');
      expect(await fs.propertyUpdate.updateProperties(id, { project: 'apollo', 'dc:title': 'Report' }, bob)).toBe(id);
      expect((await fs.getItem(id)).properties).toEqual({ project: 'apollo', 'dc:title': 'Report' });
      await fs.propertyUpdate.updateProperties(id, { project: '', owner: 'carol' }, bob);
      const item = await fs.getItem(id);
      expect(item.properties).toEqual({ 'dc:title': 'Report', owner: 'carol' });
      expect(item.versionCount).toBe(1);
      expect(item.modifiedBy).toBe('alice');
    });

    it('refuses built-in names, naming the property', async () => {
      const id = await create('a.txt', 'x');
      for (const name of ['svc_filename', 'SVC_content_type', 'name', 'Name', 'mimeType', 'cmis:name', 'size', 'bad name', '1st']) {
        const error = await fs.propertyUpdate.updateProperties(id, { [name]: 'renamed.txt' }, alice).catch((e) => e);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error.parameter).toBe(name);
      }
      await expect(fs.propertyUpdate.updateProperties(id, { note: 'x'.repeat(9000) }, alice)).rejects.toMatchObject({ parameter: 'note' });
      expect(await fs.idByPath('/', 'a.txt')).toBe(id);
      expect((await fs.getItem(id)).properties).toEqual({});
    });

    it('refuses folders and missing documents', async () => {
      const folderId = await fs.folders.createFolder('/f', alice);
      await expect(fs.propertyUpdate.updateProperties(folderId, { k: 'v' }, alice)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'fileId' });
      await expect(fs.propertyUpdate.updateProperties(encodeId('nope'), { k: 'v' }, alice)).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('folders', () => {
    it('creates missing parents and is idempotent', async () => {
      const id = await fs.folders.createFolder('/a/b/c', alice);
      expect(id).toBe(encodeId('a/b/c'));
      expect((await fsp.stat(path.join(sb.root, 'a', 'b', 'c'))).isDirectory()).toBe(true);
      expect(await fs.folders.createFolder('/a/b/c', alice)).toBe(id);
      expect(await fs.folders.createFolder('/a/b/c/', bob)).toBe(id);
      expect(await fs.folders.createFolder('/a', alice)).toBe(encodeId('a'));
      expect(await fs.folders.createFolder('/', alice)).toBe(rootId);
      expect((await fs.getItem(id)).baseType).toBe('folder');
    });

    it('answers a conflict when a document is in the way', async () => {
      await create('file', 'x');
      for (const p of ['/file', '/file/sub']) {
        const error = await fs.folders.createFolder(p, alice).catch((e) => e);
        expect(error).toBeInstanceOf(ConflictError);
      }
    });

    it('deletes a folder recursively, with the metadata of everything inside', async () => {
      const folderId = await fs.folders.createFolder('/doomed/inner', alice);
      const a = await create('a.txt', 'a', folderId);
      await fs.contentUpdate.updateContent(a, { content: body('a2') }, alice);
      await create('b.txt', 'b', encodeId('doomed'));
      await fs.checkInOut.checkOut(a, alice);
      const keeper = await create('keep.txt', 'k');
      await fs.propertyUpdate.updateProperties(keeper, { k: 'v' }, alice);

      expect(await fs.folders.deleteFolder('/doomed', alice)).toBe(encodeId('doomed'));
      await expect(fsp.access(path.join(sb.root, 'doomed'))).rejects.toThrow();
      await expect(fs.getItem(a)).rejects.toBeInstanceOf(NotFoundError);
      const docs = await fsp.readdir(path.join(sb.root, '.gateway', 'docs'));
      expect(docs).not.toContain(nameKey('doomed'));
      expect(docs).not.toContain(nameKey('doomed/inner'));
      expect(await filesUnder(path.join(sb.root, '.gateway', 'trash'))).toEqual([]);
      expect((await fs.getItem(keeper)).properties).toEqual({ k: 'v' });
      // re-created content does not inherit anything
      const again = await fs.folders.createFolder('/doomed/inner', bob);
      await fsp.writeFile(path.join(sb.root, 'doomed', 'inner', 'a.txt'), 'hand');
      expect(await fs.getItem(encodeId('doomed/inner/a.txt'))).toMatchObject({ versionCount: 1, checkedOut: false });
      expect(again).toBe(folderId);
    });

    it('refuses while another user holds a document inside', async () => {
      const folderId = await fs.folders.createFolder('/shared/deep', alice);
      const id = await create('a.txt', 'a', folderId);
      await fs.checkInOut.checkOut(id, alice);
      const error = await fs.folders.deleteFolder('/shared', bob).catch((e) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.details).toMatchObject({ checkedOutBy: 'alice', path: '/shared/deep/a.txt' });
      expect(await readText(fs.openContent(id))).toBe('a');
      await fs.folders.deleteFolder('/shared', alice);
      await expect(fs.getItem(id)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('refuses the root, documents and missing folders', async () => {
      for (const p of ['/', '', 'a/..']) {
        await expect(fs.folders.deleteFolder(p, alice)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'path' });
      }
      await create('file.txt', 'x');
      await expect(fs.folders.deleteFolder('/file.txt', alice)).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'path' });
      const missing = await fs.folders.deleteFolder('/missing', alice).catch((e) => e);
      expect(missing).toBeInstanceOf(NotFoundError);
      expect(await fsp.readFile(path.join(sb.root, 'file.txt'), 'utf8')).toBe('x');
    });
  });
  describe('metadata written by layout 1 (a JSON file per document)', () => {
    const legacyRoot = () => path.join(sb.dir, 'legacy');
    const openLegacy = async () =>
      (await new FilesystemConnectorType().create(
        { id: 'legacy', typeId: 'filesystem', description: '', params: { root: legacyRoot() } },
        { dataDir: sb.dir },
      )) as FilesystemConnector;
    /** What layout 1 wrote for a document with two versions, checked out, with a property. */
    async function writeLegacyDocument(rel: string, older: string, current: string): Promise<void> {
      const root = legacyRoot();
      await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await fsp.writeFile(path.join(root, rel), current);
      const stat = await fsp.lstat(path.join(root, rel), { bigint: true });
      const folder = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
      const dir = path.join(root, '.gateway', 'docs', nameKey(folder), nameKey(path.basename(rel)));
      await fsp.mkdir(path.join(dir, 'v'), { recursive: true });
      await fsp.writeFile(path.join(dir, 'v', '1'), older);
      const record = {
        format: 1,
        path: rel,
        created: '2025-01-02T03:04:05.000Z',
        createdBy: 'carol',
        checkedOutBy: 'dave',
        checkedOutAt: '2025-01-03T00:00:00.000Z',
        properties: { project: 'apollo' },
        lastVersion: 2,
        versions: [
          { n: 1, size: older.length, modified: '2025-01-02T03:04:05.000Z', modifiedBy: 'carol' },
          { n: 2, size: current.length, modified: new Date(Number(stat.mtimeNs / 1_000_000n)).toISOString(), modifiedBy: 'dave', comment: 'second' },
        ],
        current: { ino: stat.ino.toString(), size: Number(stat.size), mtimeNs: stat.mtimeNs.toString() },
      };
      await fsp.writeFile(path.join(dir, 'meta.json'), JSON.stringify(record));
    }

    it('moves the records into the database at start, keeping history, check-out and properties', async () => {
      await writeLegacyDocument('a.txt', 'one', 'two');
      await writeLegacyDocument('sub/b.txt', 'old b', 'new b');
      // A damaged record cannot be moved: its document reads as a file without history.
      await fsp.writeFile(path.join(legacyRoot(), 'c.txt'), 'c');
      const damaged = path.join(legacyRoot(), '.gateway', 'docs', nameKey(''), nameKey('c.txt'));
      await fsp.mkdir(damaged, { recursive: true });
      await fsp.writeFile(path.join(damaged, 'meta.json'), '{"format":1,');
      await fsp.writeFile(path.join(legacyRoot(), '.gateway', 'format.json'), '{"format":1}');

      const legacy = await openLegacy();
      const a = encodeId('a.txt');
      expect(await legacy.getItem(a)).toMatchObject({
        createdBy: 'carol',
        checkedOutBy: 'dave',
        properties: { project: 'apollo' },
        versionCount: 2,
        modifiedBy: 'dave',
        checkinComment: 'second',
      });
      expect((await legacy.versioning.listVersions(a)).map((v) => v.label)).toEqual(['2.0', '1.0']);
      expect(await readText(legacy.openContent(`${a};1`))).toBe('one');
      expect(await readText(legacy.openContent(encodeId('sub/b.txt')))).toBe('new b');
      expect(await readText(legacy.openContent(`${encodeId('sub/b.txt')};1`))).toBe('old b');
      expect(await legacy.getItem(encodeId('c.txt'))).toMatchObject({ versionCount: 1, createdBy: undefined });
      await expect(legacy.contentUpdate.updateContent(a, { content: body('three') }, alice)).rejects.toBeInstanceOf(ConflictError);
      await legacy.checkInOut.checkIn(a, { username: 'dave' }, 'third');
      expect((await legacy.versioning.listVersions(a)).map((v) => v.label)).toEqual(['3.0', '2.0', '1.0']);

      const left = await filesUnder(path.join(legacyRoot(), '.gateway', 'docs'));
      expect(left.filter((f) => f.endsWith('meta.json'))).toEqual([]);
      expect(JSON.parse(await fsp.readFile(path.join(legacyRoot(), '.gateway', 'format.json'), 'utf8'))).toEqual({ format: 2 });
      await legacy.close();

      // Started again, nothing is moved twice and nothing is lost.
      const again = await openLegacy();
      expect((await again.versioning.listVersions(a)).map((v) => v.label)).toEqual(['3.0', '2.0', '1.0']);
      expect((await again.getItem(a)).checkedOut).toBe(false);
      await again.close();
    });

    it('refuses a metadata layout newer than it understands, naming root', async () => {
      await fsp.mkdir(path.join(legacyRoot(), '.gateway'), { recursive: true });
      await fsp.writeFile(path.join(legacyRoot(), '.gateway', 'format.json'), '{"format":3}');
      await expect(openLegacy()).rejects.toMatchObject({ kind: 'invalid_argument', parameter: 'root' });
    });
  });
});
