import { chmodSync, constants, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { FolderChecks, copyDocumentSync, type DirectCopyRequest } from './direct-copy';

/** Sizes around 64 KiB, which once split read copies from kernel copies (now every copy is read and hashed). */
const READ_COPY_MAX_BYTES = 64 * 1024;

/** The calls of a direct copy, on real folders: each check refuses as openContent / createFile would, and nothing is left behind. */
describe('copyDocumentSync', () => {
  let dir: string;
  let src: string;
  let dst: string;
  let tmp: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'direct-copy-')));
    src = path.join(dir, 'src');
    dst = path.join(dir, 'dst');
    tmp = path.join(dst, '.gateway', 'tmp');
    mkdirSync(path.join(src, 'in', 'sub'), { recursive: true });
    mkdirSync(path.join(dst, 'out'), { recursive: true });
    mkdirSync(tmp, { recursive: true });
    writeFileSync(path.join(src, 'in', 'sub', 'a.txt'), 'alpha');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const into = (folder: string, parents: string[] = []) => ({ path: folder, parents, rel: 'out', records: { database: 'unused', key: 'unused' } });
  /** in/sub/a.txt -> out/a.txt, with every path as the connector derives it. */
  function request(change: Partial<DirectCopyRequest> = {}): DirectCopyRequest {
    return {
      source: path.join(src, 'in', 'sub', 'a.txt'),
      sourceFolders: [path.join(src, 'in'), path.join(src, 'in', 'sub')],
      into: into(path.join(dst, 'out')),
      name: 'a.txt',
      staged: path.join(tmp, 'staged.upload'),
      cloneMode: 0,
      maxBytes: 1024,
      ...change,
    };
  }
  const leftovers = () => readdirSync(tmp);
  const placed = () => readdirSync(path.join(dst, 'out'));

  it('copies the bytes to the new path, answers its lstat and removes the staged copy', () => {
    const result = copyDocumentSync(request());
    const stat = lstatSync(path.join(dst, 'out', 'a.txt'), { bigint: true });
    expect(result).toEqual({
      step: 'copied',
      sha256: createHash('sha256').update('alpha').digest('hex'),
      stat: { ino: stat.ino, size: 5n, mtimeNs: stat.mtimeNs, birthtimeNs: stat.birthtimeNs },
    });
    expect(readFileSync(path.join(dst, 'out', 'a.txt'), 'utf8')).toBe('alpha');
    expect(stat.nlink).toBe(1n);
    expect(leftovers()).toEqual([]);
  });

  it('copies a source of exactly maxBytes, and leaves a larger one to the streaming path without writing anything', () => {
    expect(copyDocumentSync(request({ maxBytes: 5 }))).toMatchObject({ step: 'copied' });
    rmSync(path.join(dst, 'out', 'a.txt'));
    expect(copyDocumentSync(request({ maxBytes: 4 }))).toEqual({ step: 'large' });
    expect(placed()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  describe('the bytes, hash and mode of the copy (read from the checked descriptor, or cloned)', () => {
    const sizes = [0, 1, READ_COPY_MAX_BYTES, READ_COPY_MAX_BYTES + 1, 3 * READ_COPY_MAX_BYTES + 7];
    it.each(sizes)('a source of %i bytes: the same bytes, their SHA-256, the source mode, nothing staged left', (size) => {
      const bytes = randomBytes(size);
      const source = path.join(src, 'in', 'sub', 'sized.bin');
      writeFileSync(source, bytes);
      chmodSync(source, 0o640);
      const result = copyDocumentSync(request({ source, maxBytes: 4 * READ_COPY_MAX_BYTES }));
      expect(result).toMatchObject({ step: 'copied', sha256: createHash('sha256').update(bytes).digest('hex'), stat: { size: BigInt(size) } });
      expect(readFileSync(path.join(dst, 'out', 'a.txt')).equals(bytes)).toBe(true);
      expect(lstatSync(path.join(dst, 'out', 'a.txt')).mode & 0o777).toBe(0o640);
      expect(leftovers()).toEqual([]);
    });

    it('a read copy takes the source mode less the umask, whatever its size; a clone (a reflink mode) the exact mode', () => {
      const umask = process.umask(0o022);
      try {
        const source = path.join(src, 'in', 'sub', 'shared.bin');
        const copyOf = (size: number, change: Partial<DirectCopyRequest> = {}) => {
          writeFileSync(source, randomBytes(size));
          chmodSync(source, 0o664);
          rmSync(path.join(dst, 'out', 'a.txt'), { force: true });
          expect(copyDocumentSync(request({ source, maxBytes: 4 * READ_COPY_MAX_BYTES, ...change }))).toMatchObject({ step: 'copied' });
          return lstatSync(path.join(dst, 'out', 'a.txt')).mode & 0o777;
        };
        expect(copyOf(READ_COPY_MAX_BYTES)).toBe(0o644);
        expect(copyOf(READ_COPY_MAX_BYTES + 1)).toBe(0o644);
        expect(copyOf(10, { cloneMode: constants.COPYFILE_FICLONE })).toBe(0o664);
      } finally {
        process.umask(umask);
      }
    });

    /** The large-copy threads' requests: no size bound, through one 256 KiB chunk at a time. */
    const CHUNK = 256 * 1024;
    it.each([0, 1, CHUNK, CHUNK + 1, 4 * CHUNK + 13])('chunked, a source of %i bytes: the same bytes, their SHA-256, the source mode less the umask, nothing staged left', (size) => {
      const umask = process.umask(0o022);
      try {
        const bytes = Buffer.alloc(size);
        for (let i = 0; i < size; i++) bytes[i] = (i * 13 + (i >> 18)) & 0xff;
        const source = path.join(src, 'in', 'sub', 'chunked.bin');
        writeFileSync(source, bytes);
        chmodSync(source, 0o664);
        const result = copyDocumentSync(request({ source, maxBytes: Number.POSITIVE_INFINITY, chunked: true }));
        expect(result).toMatchObject({ step: 'copied', sha256: createHash('sha256').update(bytes).digest('hex'), stat: { size: BigInt(size) } });
        expect(readFileSync(path.join(dst, 'out', 'a.txt')).equals(bytes)).toBe(true);
        expect(lstatSync(path.join(dst, 'out', 'a.txt')).mode & 0o777).toBe(0o644);
        expect(leftovers()).toEqual([]);
      } finally {
        process.umask(umask);
      }
    });

    it('chunked, onto a staged name already taken: fallback, the name neither overwritten nor removed', () => {
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      expect(copyDocumentSync(request({ maxBytes: Number.POSITIVE_INFINITY, chunked: true }))).toEqual({ step: 'fallback' });
      expect(placed()).toEqual([]);
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
    });

    it('a reflink mode (COPYFILE_FICLONE, the clone falling back to a copy on ext4) copies a source and hashes it from the descriptor', () => {
      expect(copyDocumentSync(request({ cloneMode: constants.COPYFILE_FICLONE }))).toMatchObject({ step: 'copied', sha256: createHash('sha256').update('alpha').digest('hex') });
      expect(readFileSync(path.join(dst, 'out', 'a.txt'), 'utf8')).toBe('alpha');
    });
  });

  describe('the source', () => {
    it('missing: the errno of its lstat', () => {
      expect(copyDocumentSync(request({ source: path.join(src, 'in', 'sub', 'gone.txt') }))).toEqual({ step: 'source', code: 'ENOENT' });
    });

    it('a folder: source-folder', () => {
      expect(copyDocumentSync(request({ source: path.join(src, 'in', 'sub'), sourceFolders: [path.join(src, 'in')] }))).toEqual({ step: 'source-folder' });
    });

    it('a symbolic link, even to a file inside the root: source-missing, nothing read', () => {
      symlinkSync(path.join(src, 'in', 'sub', 'a.txt'), path.join(src, 'in', 'sub', 'link.txt'));
      expect(copyDocumentSync(request({ source: path.join(src, 'in', 'sub', 'link.txt') }))).toEqual({ step: 'source-missing' });
      expect(placed()).toEqual([]);
    });

    it('under a folder that is a symbolic link: source-missing', () => {
      const outside = path.join(dir, 'outside');
      mkdirSync(outside);
      writeFileSync(path.join(outside, 'a.txt'), 'secret');
      symlinkSync(outside, path.join(src, 'in', 'linked'));
      const result = copyDocumentSync(request({ source: path.join(src, 'in', 'linked', 'a.txt'), sourceFolders: [path.join(src, 'in'), path.join(src, 'in', 'linked')] }));
      expect(result).toEqual({ step: 'source-missing' });
      expect(placed()).toEqual([]);
    });

    it('a FIFO: source-missing, without hanging', () => {
      execFileSync('mkfifo', [path.join(src, 'in', 'sub', 'pipe')]);
      expect(copyDocumentSync(request({ source: path.join(src, 'in', 'sub', 'pipe') }))).toEqual({ step: 'source-missing' });
    });
  });

  describe('the target', () => {
    it('folder missing: the errno of its lstat', () => {
      const result = copyDocumentSync(request({ into: into(path.join(dst, 'none')) }));
      expect(result).toEqual({ step: 'target-folder', code: 'ENOENT' });
      expect(leftovers()).toEqual([]);
    });

    it('folder that is a document: target-not-folder', () => {
      writeFileSync(path.join(dst, 'out', 'doc'), 'x');
      expect(copyDocumentSync(request({ into: into(path.join(dst, 'out', 'doc')) }))).toEqual({ step: 'target-not-folder' });
    });

    it('folder that is a symbolic link, or under one: target-folder-missing, nothing written through the link', () => {
      const outside = path.join(dir, 'outside');
      mkdirSync(outside);
      symlinkSync(outside, path.join(dst, 'out', 'linked'));
      expect(copyDocumentSync(request({ into: into(path.join(dst, 'out', 'linked')) }))).toEqual({
        step: 'target-folder-missing',
      });
      mkdirSync(path.join(outside, 'deeper'));
      const under = request({
        into: into(path.join(dst, 'out', 'linked', 'deeper'), [path.join(dst, 'out'), path.join(dst, 'out', 'linked')]),
      });
      expect(copyDocumentSync(under)).toEqual({ step: 'target-folder-missing' });
      expect(readdirSync(outside)).toEqual(['deeper']);
      expect(readdirSync(path.join(outside, 'deeper'))).toEqual([]);
      expect(leftovers()).toEqual([]);
    });

    it('name taken: exists, and the file there is untouched', () => {
      writeFileSync(path.join(dst, 'out', 'a.txt'), 'mine');
      expect(copyDocumentSync(request())).toEqual({ step: 'exists' });
      expect(readFileSync(path.join(dst, 'out', 'a.txt'), 'utf8')).toBe('mine');
      expect(leftovers()).toEqual([]);
    });

    it('name taken by a symbolic link: exists, the link and what it points at untouched', () => {
      writeFileSync(path.join(dir, 'elsewhere'), 'keep');
      symlinkSync(path.join(dir, 'elsewhere'), path.join(dst, 'out', 'a.txt'));
      expect(copyDocumentSync(request())).toEqual({ step: 'exists' });
      expect(readFileSync(path.join(dir, 'elsewhere'), 'utf8')).toBe('keep');
    });

    it('a kernel copy that fails (the staging folder is gone): fallback, nothing placed', () => {
      expect(copyDocumentSync(request({ staged: path.join(dst, '.gateway', 'gone', 'staged.upload') }))).toEqual({ step: 'fallback' });
      expect(placed()).toEqual([]);
    });

    it('a staged name already taken is neither overwritten nor removed: fallback', () => {
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      expect(copyDocumentSync(request())).toEqual({ step: 'fallback' });
      expect(placed()).toEqual([]);
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
    });

    it('a copy of several read chunks onto a staged name already taken: fallback, the name neither overwritten nor removed', () => {
      const source = path.join(src, 'in', 'sub', 'large.bin');
      writeFileSync(source, randomBytes(READ_COPY_MAX_BYTES + 1));
      writeFileSync(path.join(tmp, 'staged.upload'), 'someone else');
      expect(copyDocumentSync(request({ source, maxBytes: 4 * READ_COPY_MAX_BYTES }))).toEqual({ step: 'fallback' });
      expect(placed()).toEqual([]);
      expect(readFileSync(path.join(tmp, 'staged.upload'), 'utf8')).toBe('someone else');
    });

    it('where link() cannot reach the name (staged on another filesystem): looks before renaming, never replaces, reports the errno', () => {
      const shm = mkdtempSync(path.join('/dev/shm', 'direct-copy-'));
      try {
        const staged = path.join(shm, 'staged.upload');
        writeFileSync(path.join(dst, 'out', 'taken.txt'), 'mine');
        expect(copyDocumentSync(request({ staged, name: 'taken.txt' }))).toEqual({ step: 'exists' });
        expect(readFileSync(path.join(dst, 'out', 'taken.txt'), 'utf8')).toBe('mine');
        expect(copyDocumentSync(request({ staged }))).toEqual({ step: 'target', code: 'EXDEV' });
        expect(placed()).toEqual(['taken.txt']);
        expect(readdirSync(shm)).toEqual([]);
      } finally {
        rmSync(shm, { recursive: true, force: true });
      }
    });

    it('a failure checking or placing the new name reports its errno and leaves no staged copy', () => {
      if (process.getuid?.() === 0) {
        // root ignores permissions: a folder replaced by a file between the checks and link() fails the same way (ENOTDIR).
        // (A name through x stands for the folder swapped after its check.)
        const req = request({ name: 'x/a.txt' });
        writeFileSync(path.join(dst, 'out', 'x'), 'file');
        expect(copyDocumentSync(req)).toEqual({ step: 'target', code: 'ENOTDIR' });
      } else {
        execFileSync('chmod', ['a-w', path.join(dst, 'out')]);
        expect(copyDocumentSync(request())).toEqual({ step: 'target', code: 'EACCES' });
        execFileSync('chmod', ['u+w', path.join(dst, 'out')]);
      }
      expect(leftovers()).toEqual([]);
    });
  });

  it('with one FolderChecks (one message of the copy thread), looks at each folder once: a folder made after its failed check still fails', () => {
    const folders = new FolderChecks();
    const later = path.join(dst, 'later');
    expect(copyDocumentSync(request({ into: into(later) }), folders)).toEqual({ step: 'target-folder', code: 'ENOENT' });
    mkdirSync(later);
    expect(copyDocumentSync(request({ into: into(later) }), folders)).toEqual({ step: 'target-folder', code: 'ENOENT' });
    expect(copyDocumentSync(request({ into: into(later) }))).toMatchObject({ step: 'copied' });
    expect(folders.lstat(path.join(src, 'in'))).toBe(folders.lstat(path.join(src, 'in')));
  });

  it('closes the source descriptor it opened, copied or not (no descriptor is left open)', () => {
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    for (let i = 0; i < 20; i++) {
      expect(copyDocumentSync(request({ name: `c${i}.txt`, staged: path.join(tmp, `s${i}`) }))).toMatchObject({ step: 'copied' });
    }
    expect(copyDocumentSync(request({ maxBytes: 1 }))).toEqual({ step: 'large' });
    expect(fds()).toBe(before);
  });
});
