import fs, { appendFileSync, constants, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { copyDocumentSync, type DirectCopyRequest } from './direct-copy';

/** direct-copy.ts's read chunk (READ_CHUNK_BYTES): the clone and streamed copies read this much at a time; a read copy's buffer has this much room past maxBytes. */
const CHUNK = 256 * 1024;

/** Bytes that differ from one offset to the next, so a chunk read at the wrong place changes the copy. */
function pattern(size: number, seed = 7): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed + (i >> 12)) & 0xff;
  return bytes;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const fsError = (code: string, call: string) => Object.assign(new Error(`${code}: ${call}`), { code });

/**
 * The edges of a direct copy's reads and writes, on real files: a source exactly at maxBytes or one
 * byte past it (one that grew since its fstat), reads and writes that return short counts, a read or
 * a write that fails, for the read copy, the clone and the streamed (chunked) copy. Where the disk
 * cannot be made to do it (a short write, EIO on a read, ENOSPC), the one fs call is wrapped around
 * the real one.
 */
describe('copyDocumentSync, at the edges of its reads and writes', () => {
  let dir: string;
  let source: string;
  let tmp: string;
  let out: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'direct-copy-edges-')));
    source = path.join(dir, 'src', 'a.bin');
    out = path.join(dir, 'dst', 'out');
    tmp = path.join(dir, 'dst', '.gateway', 'tmp');
    mkdirSync(path.join(dir, 'src'));
    mkdirSync(out, { recursive: true });
    mkdirSync(tmp, { recursive: true });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  function request(change: Partial<DirectCopyRequest> = {}): DirectCopyRequest {
    return {
      source,
      sourceFolders: [path.join(dir, 'src')],
      into: { path: out, parents: [], rel: 'out', records: { database: 'unused', key: 'unused' } },
      name: 'a.bin',
      staged: path.join(tmp, 'staged.upload'),
      cloneMode: 0,
      maxBytes: CHUNK,
      ...change,
    };
  }
  const placed = () => readdirSync(out);
  const leftovers = () => readdirSync(tmp);
  const copied = () => readFileSync(path.join(out, 'a.bin'));

  /** The three ways a source is copied: read whole, cloned (COPYFILE_FICLONE, a copy on ext4 or tmpfs), streamed a chunk at a time. */
  const WAYS: Array<[string, Partial<DirectCopyRequest>]> = [
    ['read copy', {}],
    ['clone', { cloneMode: constants.COPYFILE_FICLONE }],
    ['streamed copy', { chunked: true, maxBytes: Number.POSITIVE_INFINITY }],
  ];

  /** The source grows by `extra` bytes right after its fstat: the size check passed, the read finds more. */
  function growAfterFstat(extra: Buffer): void {
    const realFstat = fs.fstatSync;
    jest.spyOn(fs, 'fstatSync').mockImplementationOnce((fd: number) => {
      const stat = realFstat(fd);
      appendFileSync(source, extra);
      return stat;
    });
  }

  /** Every read from a descriptor returns at most `most` bytes (as a read on a network or FUSE filesystem may), through the real call. */
  function shortReads(most: number): jest.SpyInstance {
    const realRead = fs.readSync;
    return jest.spyOn(fs, 'readSync').mockImplementation(((fd: number, buffer: Buffer, offset: number, length: number, position: number) =>
      realRead(fd, buffer, offset, Math.min(length, most), position)) as typeof fs.readSync);
  }

  /** Every write returns at most `most` bytes written (as write(2) may when interrupted or near a quota), through the real call. */
  function shortWrites(most: number): jest.SpyInstance {
    const realWrite = fs.writeSync;
    return jest.spyOn(fs, 'writeSync').mockImplementation(((fd: number, buffer: Buffer, offset: number, length: number) =>
      realWrite(fd, buffer, offset, Math.min(length, most))) as typeof fs.writeSync);
  }

  describe('a read copy at maxBytes', () => {
    it('a source that grew to exactly maxBytes since its fstat is copied whole, with the hash of every byte', () => {
      const bytes = pattern(CHUNK);
      writeFileSync(source, bytes.subarray(0, 100));
      growAfterFstat(bytes.subarray(100));
      expect(copyDocumentSync(request())).toMatchObject({ step: 'copied', sha256: sha256(bytes), stat: { size: BigInt(CHUNK) } });
      expect(copied().equals(bytes)).toBe(true);
      expect(leftovers()).toEqual([]);
    });

    it.each([CHUNK, 3 * CHUNK])('a source that grew to one byte past maxBytes (%i) is left to the streaming path: nothing staged, nothing placed, a staged name taken left alone', (maxBytes) => {
      writeFileSync(source, pattern(100));
      growAfterFstat(pattern(maxBytes + 1 - 100, 9));
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      expect(copyDocumentSync(request({ maxBytes }))).toEqual({ step: 'fallback' });
      expect(placed()).toEqual([]);
      expect(leftovers()).toEqual(['staged.upload']);
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
    });

    it('read a little at a time, a source of exactly maxBytes is copied whole, and one that grew a byte past it is not', () => {
      const bytes = pattern(10_000);
      writeFileSync(source, bytes);
      const reads = shortReads(1000);
      expect(copyDocumentSync(request({ maxBytes: 10_000 }))).toMatchObject({ step: 'copied', sha256: sha256(bytes) });
      expect(reads.mock.calls.length).toBeGreaterThan(10);
      jest.restoreAllMocks();
      expect(copied().equals(bytes)).toBe(true);
      rmSync(path.join(out, 'a.bin'));
      shortReads(1000);
      growAfterFstat(Buffer.from('!'));
      expect(copyDocumentSync(request({ maxBytes: 10_000 }))).toEqual({ step: 'fallback' });
      jest.restoreAllMocks();
      expect(placed()).toEqual([]);
      expect(leftovers()).toEqual([]);
    });
  });

  describe.each(WAYS)('a %s', (_way, way) => {
    it.each([2 * CHUNK + 5, 10_000])('of %i bytes read and written a little at a time is the same bytes with their hash', (size) => {
      const bytes = pattern(size);
      writeFileSync(source, bytes);
      const reads = shortReads(4096);
      const writes = shortWrites(3000);
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way }))).toMatchObject({ step: 'copied', sha256: sha256(bytes), stat: { size: BigInt(size) } });
      expect(reads.mock.calls.length).toBeGreaterThan(2);
      // The clone writes through the kernel copy, not writeSync.
      if (way.cloneMode === undefined) expect(writes.mock.calls.length).toBeGreaterThanOrEqual(Math.ceil(size / 3000));
      else expect(writes).not.toHaveBeenCalled();
      jest.restoreAllMocks();
      expect(copied().equals(bytes)).toBe(true);
      expect(leftovers()).toEqual([]);
    });

    it('of several chunks read whole is the same bytes with their hash', () => {
      const bytes = pattern(3 * CHUNK + 17);
      writeFileSync(source, bytes);
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way }))).toMatchObject({ step: 'copied', sha256: sha256(bytes) });
      expect(copied().equals(bytes)).toBe(true);
    });

    it('whose source cannot be read (EIO) places nothing and leaves nothing staged', () => {
      writeFileSync(source, pattern(5000));
      jest.spyOn(fs, 'readSync').mockImplementation(() => {
        throw fsError('EIO', 'read');
      });
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way }))).toEqual({ step: 'fallback' });
      jest.restoreAllMocks();
      expect(placed()).toEqual([]);
      expect(leftovers()).toEqual([]);
    });

    it('whose source cannot be read leaves a staged name someone else took alone', () => {
      writeFileSync(source, pattern(5000));
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      jest.spyOn(fs, 'readSync').mockImplementation(() => {
        throw fsError('EIO', 'read');
      });
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way }))).toEqual({ step: 'fallback' });
      jest.restoreAllMocks();
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
      expect(placed()).toEqual([]);
    });

    it('closes every descriptor it opened (the source and the staged copy), copied or not', () => {
      const descriptors = () => readdirSync('/proc/self/fd').length;
      writeFileSync(source, pattern(CHUNK + 3));
      const before = descriptors();
      for (let i = 0; i < 5; i++) {
        expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way, name: `c${i}.bin`, staged: path.join(tmp, `s${i}`) }))).toMatchObject({ step: 'copied' });
      }
      writeFileSync(path.join(tmp, 'taken'), 'someone else');
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way, staged: path.join(tmp, 'taken') }))).toEqual({ step: 'fallback' });
      expect(descriptors()).toBe(before);
    });
  });

  describe.each(WAYS.filter(([, way]) => way.cloneMode === undefined))('a %s whose write fails once begun (ENOSPC)', (_way, way) => {
    it('removes its partial staged copy and places nothing', () => {
      writeFileSync(source, pattern(CHUNK + 100));
      const realWrite = fs.writeSync;
      let calls = 0;
      jest.spyOn(fs, 'writeSync').mockImplementation(((fd: number, buffer: Buffer, offset: number, length: number) => {
        if (++calls > 1) throw fsError('ENOSPC', 'write');
        return realWrite(fd, buffer, offset, Math.min(length, 100));
      }) as typeof fs.writeSync);
      expect(copyDocumentSync(request({ maxBytes: 4 * CHUNK, ...way }))).toEqual({ step: 'fallback' });
      expect(calls).toBe(2);
      expect(leftovers()).toEqual([]);
      expect(placed()).toEqual([]);
    });
  });

  describe('a clone', () => {
    it('onto a staged name already taken: fallback, the name neither overwritten nor removed', () => {
      writeFileSync(source, pattern(5000));
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      expect(copyDocumentSync(request({ cloneMode: constants.COPYFILE_FICLONE }))).toEqual({ step: 'fallback' });
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
      expect(placed()).toEqual([]);
    });

    it('whose kernel copy fails after making the staged file (ENOSPC part way): the partial copy removed, nothing placed', () => {
      writeFileSync(source, pattern(5000));
      jest.spyOn(fs, 'copyFileSync').mockImplementation(((_from: string, to: string) => {
        writeFileSync(to, pattern(100), { flag: 'wx' });
        throw fsError('ENOSPC', 'copyfile');
      }) as typeof fs.copyFileSync);
      expect(copyDocumentSync(request({ cloneMode: constants.COPYFILE_FICLONE }))).toEqual({ step: 'fallback' });
      jest.restoreAllMocks();
      expect(leftovers()).toEqual([]);
      expect(placed()).toEqual([]);
    });
  });
});
