import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ConflictError, InvalidArgumentError } from '@gateway/connector-api';
import type { FilesystemConnector } from './filesystem.connector';
import { encodeId } from './paths';
import { alice, bob, body, filesUnder, readAll, readText, sandbox, sha256, type Sandbox } from '../../../test/support/fs-sandbox';

/** An upload that sends some bytes and then fails, like a client that disconnects. */
function abortedUpload(): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent++ < 4) this.push(randomBytes(64 * 1024));
      else this.destroy(new Error('client aborted'));
    },
  });
}

async function writeMany(dir: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 200) {
    await Promise.all(names.slice(i, i + 200).map((n) => fsp.writeFile(path.join(dir, n), n)));
  }
}

describe('FilesystemConnector under load and concurrency', () => {
  let sb: Sandbox;
  let fs: FilesystemConnector;
  const rootId = encodeId('');

  beforeEach(async () => {
    sb = await sandbox();
    fs = sb.connector;
  });
  afterEach(() => sb.cleanup());

  it('pages through 2,500 files returning every one exactly once, in order', async () => {
    const names = Array.from({ length: 2500 }, (_, i) => `file-${String(i).padStart(5, '0')}-${i % 7}.txt`);
    await writeMany(sb.root, names);
    // some with gateway metadata, so both paths of the listing are exercised
    for (const name of names.slice(0, 25)) await fs.propertyUpdate.updateProperties(encodeId(name), { batch: 'x' }, alice);

    for (const limit of [100, 333]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await fs.listFolder(rootId, { limit, cursor });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items.map((i) => i.name));
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBe(Math.ceil(2500 / limit));
      expect(seen).toHaveLength(2500);
      expect(new Set(seen).size).toBe(2500);
      expect(seen).toEqual([...names].sort());
    }
    const withMeta = (await fs.listFolder(rootId, { limit: 1 })).items[0];
    expect(withMeta.properties).toEqual({ batch: 'x' });
  });

  it('lists a folder of 10,000 entries in one call, with sizes', async () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `n${i}`);
    await writeMany(sb.root, names);
    const { items, nextCursor } = await fs.listFolder(rootId);
    expect(nextCursor).toBeUndefined();
    expect(items).toHaveLength(10_000);
    expect(items.every((i) => i.size === i.name.length)).toBe(true);
    // How fast is for bench/; what bounds the work (a few stats in flight, results in order) is mapBounded's, tested in libs/concurrency.
  });

  it('never lets a reader see a torn file while writers replace it', async () => {
    const initial = randomBytes(256 * 1024);
    const id = await fs.createFile({ folderId: rootId, fileName: 'hot.bin', content: body(initial) }, alice);
    const contents = Array.from({ length: 8 }, () => randomBytes(256 * 1024 + Math.floor(Math.random() * 4096)));
    const valid = new Set([initial, ...contents].map(sha256));

    let writing = true;
    const reads: string[] = [];
    const reader = async () => {
      while (writing) reads.push(sha256(await readAll(await fs.openContent(id))));
    };
    const readers = Array.from({ length: 4 }, reader);
    // each upload trickles in over several chunks, so the writes really overlap
    const chunked = (data: Buffer) => Readable.from([data.subarray(0, 1000), data.subarray(1000, 100_000), data.subarray(100_000)]);
    await Promise.all(contents.map((c, i) => fs.contentUpdate.updateContent(id, { content: chunked(c) }, i % 2 ? alice : bob)));
    writing = false;
    await Promise.all(readers);

    expect(reads.length).toBeGreaterThan(0);
    for (const hash of reads) expect(valid.has(hash)).toBe(true);
    const versions = await fs.versioning.listVersions(id);
    expect(versions).toHaveLength(9);
    const stored = await Promise.all(versions.map(async (v) => sha256(await readAll(await fs.openContent(v.id)))));
    expect(new Set(stored)).toEqual(valid);
    expect(stored[stored.length - 1]).toBe(sha256(initial));
    expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
  });

  it('lets exactly one of several concurrent creates of one name win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => fs.createFile({ folderId: rootId, fileName: 'race.txt', content: body(`writer ${i}`) }, alice)),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    for (const r of lost) expect(r.reason).toBeInstanceOf(ConflictError);
    expect(await readText(fs.openContent(encodeId('race.txt')))).toMatch(/^writer \d$/);
    expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
  });

  it('gives a check-out to exactly one of two concurrent users', async () => {
    const id = await fs.createFile({ folderId: rootId, fileName: 'a.txt', content: body('x') }, alice);
    const results = await Promise.allSettled([fs.checkInOut.checkOut(id, alice), fs.checkInOut.checkOut(id, bob)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const holder = (await fs.getItem(id)).checkedOutBy;
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(rejected.reason).toBeInstanceOf(ConflictError);
    expect(rejected.reason.details.checkedOutBy).toBe(holder);
  });

  it('keeps every concurrent property update (metadata writes are serialised)', async () => {
    const id = await fs.createFile({ folderId: rootId, fileName: 'a.txt', content: body('x') }, alice);
    await Promise.all(Array.from({ length: 20 }, (_, i) => fs.propertyUpdate.updateProperties(id, { [`p${i}`]: String(i) }, alice)));
    const properties = (await (await sb.reopen()).getItem(id)).properties!;
    expect(Object.keys(properties)).toHaveLength(20);
  });

  it('leaves nothing behind when an upload stream fails while creating', async () => {
    const error = await fs.createFile({ folderId: rootId, fileName: 'partial.bin', content: abortedUpload() }, alice).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.parameter).toBe('content');
    expect(await fsp.readdir(sb.root)).toEqual(['.gateway']);
    expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
    expect(await filesUnder(path.join(sb.root, '.gateway', 'docs'))).toEqual([]);
    expect((await fs.listFolder(rootId)).items).toEqual([]);
  });

  it('keeps the current content when an update stream fails', async () => {
    const id = await fs.createFile({ folderId: rootId, fileName: 'a.txt', content: body('intact') }, alice);
    const before = await fs.getItem(id);
    await expect(fs.contentUpdate.updateContent(id, { content: abortedUpload() }, alice)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await readText(fs.openContent(id))).toBe('intact');
    expect(await fs.getItem(id)).toEqual(before);
    expect(await filesUnder(path.join(sb.root, '.gateway', 'tmp'))).toEqual([]);
  });

  it('clears stale temporary files at start but keeps recent ones', async () => {
    const tmp = path.join(sb.root, '.gateway', 'tmp');
    await fsp.writeFile(path.join(tmp, 'old.upload'), 'x');
    await fsp.writeFile(path.join(tmp, 'recent.upload'), 'x');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await fsp.utimes(path.join(tmp, 'old.upload'), old, old);
    await sb.reopen();
    expect(await fsp.readdir(tmp)).toEqual(['recent.upload']);
  });
});
