import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DownloadOffload } from './offload';

describe('DownloadOffload', () => {
  let base: string;
  let root: string;
  let outside: string;
  const accel = new DownloadOffload({ kind: 'accel-redirect', prefix: '/_offload' });

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'offload-spec-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, 'docs', 'a b#?%.txt'), 'inside');
    fs.writeFileSync(path.join(root, 'docs', 'été.txt'), 'inside');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  const at = (...parts: string[]) => ({ area: 'repo/fs', root, path: path.join(root, ...parts) });

  it('names the internal location of a file below its root, every path segment percent-encoded, after running `before`', async () => {
    const before = jest.fn(async () => undefined);
    const handOff = await accel.handOff(at('docs', 'a b#?%.txt'), before, { start: 0, end: 9 });
    expect(handOff).toEqual({ header: 'X-Accel-Redirect', value: '/_offload/repo/fs/docs/a%20b%23%3F%25.txt' });
    expect(before).toHaveBeenCalledWith({ start: 0, end: 9 });
    expect((await accel.handOff(at('docs', 'été.txt')))?.value).toBe('/_offload/repo/fs/docs/%C3%A9t%C3%A9.txt');
  });

  it('hands off nothing (and does not run `before`) when offload is off', async () => {
    const before = jest.fn(async () => undefined);
    expect(await new DownloadOffload(undefined).handOff(at('docs', 'été.txt'), before)).toBeUndefined();
    expect(before).not.toHaveBeenCalled();
  });

  it('refuses what resolves outside the root: a link to a file, a linked folder, a traversal', async () => {
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'docs', 'link.txt'));
    fs.symlinkSync(outside, path.join(root, 'out'));
    const before = jest.fn(async () => undefined);
    for (const file of [at('docs', 'link.txt'), at('out', 'secret.txt'), { ...at(), path: `${root}/docs/../../outside/secret.txt` }]) {
      expect(await accel.handOff(file, before)).toBeUndefined();
    }
    expect(before).not.toHaveBeenCalled();
  });

  it('refuses the root itself, folders, missing files and a sibling folder sharing the root as a name prefix', async () => {
    fs.mkdirSync(`${root}-sibling`);
    fs.writeFileSync(`${root}-sibling/x.txt`, 'x');
    for (const p of [root, path.join(root, 'docs'), path.join(root, 'missing.txt'), `${root}-sibling/x.txt`]) {
      expect(await accel.handOff({ area: 'files', root, path: p })).toBeUndefined();
    }
  });

  it('names a link inside the root by the file it points at, and accepts a root that is itself a link', async () => {
    fs.symlinkSync(path.join(root, 'docs', 'été.txt'), path.join(root, 'alias.txt'));
    expect((await accel.handOff(at('alias.txt')))?.value).toBe('/_offload/repo/fs/docs/%C3%A9t%C3%A9.txt');
    const linkedRoot = path.join(base, 'linked-root');
    fs.symlinkSync(root, linkedRoot);
    expect((await accel.handOff({ area: 'files', root: linkedRoot, path: path.join(linkedRoot, 'docs', 'été.txt') }))?.value).toBe(
      '/_offload/files/docs/%C3%A9t%C3%A9.txt',
    );
  });

  it('finds a root created after the first look (user files before the first export)', async () => {
    const later = path.join(base, 'later');
    expect(await accel.handOff({ area: 'files', root: later, path: path.join(later, 'f') })).toBeUndefined();
    fs.mkdirSync(later);
    fs.writeFileSync(path.join(later, 'f'), 'x');
    expect((await accel.handOff({ area: 'files', root: later, path: path.join(later, 'f') }))?.value).toBe('/_offload/files/f');
  });

  it('X-Sendfile: the real path in the configured header; a name a header cannot carry is served by the gateway', async () => {
    const sendfile = new DownloadOffload({ kind: 'sendfile', header: 'X-Sendfile' });
    expect(await sendfile.handOff(at('docs', 'a b#?%.txt'))).toEqual({ header: 'X-Sendfile', value: path.join(root, 'docs', 'a b#?%.txt') });
    expect(await sendfile.handOff(at('docs', 'été.txt'))).toBeUndefined();
  });
});
