import fs, { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { copyDocumentSync, type DirectCopyRequest } from './direct-copy';

/** The errnos of link() that mean "no hard links on this filesystem" (fs-calls.ts LINK_UNSUPPORTED): the copy is renamed into place instead. */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS'];
/** Other errnos of link(): reported as they are, the name left as it was (rename could have succeeded and is not tried). */
const LINK_FAILURES = ['EACCES', 'EMLINK', 'ENOSPC', 'EIO', 'EROFS', 'ENAMETOOLONG'];

/**
 * Placing a staged copy where link() fails: on real folders, with link() alone answering each errno
 * (no filesystem at hand refuses hard links), the rename and every check made for real.
 */
describe('copyDocumentSync, placing the copy where link() fails', () => {
  let dir: string;
  let out: string;
  let tmp: string;
  let source: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'direct-copy-link-')));
    source = path.join(dir, 'src', 'a.txt');
    out = path.join(dir, 'dst', 'out');
    tmp = path.join(dir, 'dst', '.gateway', 'tmp');
    mkdirSync(path.join(dir, 'src'));
    mkdirSync(out, { recursive: true });
    mkdirSync(tmp, { recursive: true });
    writeFileSync(source, 'alpha');
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
      name: 'a.txt',
      staged: path.join(tmp, 'staged.upload'),
      cloneMode: 0,
      maxBytes: 1024,
      ...change,
    };
  }
  const placed = () => readdirSync(out);
  const leftovers = () => readdirSync(tmp);

  function linkFails(code?: string): jest.SpyInstance {
    return jest.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error(`${code ?? 'no errno'}: link`), code === undefined ? {} : { code });
    });
  }

  describe.each(NO_HARD_LINKS)('link() failing with %s (no hard links here)', (code) => {
    it('the staged copy is renamed into place: copied, its lstat answered, nothing staged left', () => {
      const link = linkFails(code);
      const result = copyDocumentSync(request());
      expect(link).toHaveBeenCalledWith(path.join(tmp, 'staged.upload'), path.join(out, 'a.txt'));
      const stat = lstatSync(path.join(out, 'a.txt'), { bigint: true });
      expect(result).toEqual({
        step: 'copied',
        sha256: createHash('sha256').update('alpha').digest('hex'),
        stat: { ino: stat.ino, size: 5n, mtimeNs: stat.mtimeNs, birthtimeNs: stat.birthtimeNs },
      });
      expect(readFileSync(path.join(out, 'a.txt'), 'utf8')).toBe('alpha');
      expect(leftovers()).toEqual([]);
    });

    it('a name taken by a file: exists, the file untouched (rename would have replaced it), nothing staged left', () => {
      writeFileSync(path.join(out, 'a.txt'), 'mine');
      linkFails(code);
      expect(copyDocumentSync(request())).toEqual({ step: 'exists' });
      expect(readFileSync(path.join(out, 'a.txt'), 'utf8')).toBe('mine');
      expect(leftovers()).toEqual([]);
    });

    it('a name taken by a link to nothing: exists, the link kept', () => {
      symlinkSync(path.join(dir, 'nowhere'), path.join(out, 'a.txt'));
      linkFails(code);
      expect(copyDocumentSync(request())).toEqual({ step: 'exists' });
      expect(lstatSync(path.join(out, 'a.txt')).isSymbolicLink()).toBe(true);
      expect(leftovers()).toEqual([]);
    });
  });

  it.each(LINK_FAILURES)('link() failing with %s: that errno on the new path, nothing placed, nothing staged left', (code) => {
    linkFails(code);
    expect(copyDocumentSync(request())).toEqual({ step: 'target', code });
    expect(placed()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('link() failing without an errno: EIO, nothing placed', () => {
    linkFails();
    expect(copyDocumentSync(request())).toEqual({ step: 'target', code: 'EIO' });
    expect(placed()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('link() answering EEXIST (the name taken between the checks and the link): exists, the staged copy removed', () => {
    linkFails('EEXIST');
    expect(copyDocumentSync(request())).toEqual({ step: 'exists' });
    expect(placed()).toEqual([]);
    expect(leftovers()).toEqual([]);
  });
});
