import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeId } from '@gateway/connector-filesystem';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

/**
 * Hostile ids, names and paths walked through every id- and path-taking
 * parameter of every content route. Each attempt must be refused (400, or 404
 * when the value is well-formed but names nothing reachable) and nothing
 * outside the repository root may be read, created, changed or removed.
 *
 * Layout (all in a fresh temporary directory, so a bug cannot reach real
 * system files through the relative forms):
 *   <tmp>/a/b/etc/passwd            what '../../../etc/passwd' from the root would reach
 *   <tmp>/a/b/c/outside/secret.txt  the sentinel
 *   <tmp>/a/b/c/root/               the repository root
 *       docs/real.txt               a legitimate document
 *       docs/file-link -> ../../outside/secret.txt
 *       link-out -> ../outside      a folder link leading out
 */

const SECRET = 'TOP-SECRET-SENTINEL-5f2c';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

describe('Path traversal through the content routes', () => {
  let gw: TestGateway;
  let tmp: string;
  let root: string;
  let outside: string;
  let configFile: string;
  let docsId: string;
  let realId: string;
  // Every Linux host has it: a file outside any root whose change would show a write escaping.
  const passwdBefore = sha(fs.readFileSync('/etc/passwd'));

  /** Every file, folder and link outside the root, with the content of files, so any change shows. */
  function snapshotOutsideRoot(): Record<string, string> {
    const snapshot: Record<string, string> = {};
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (full === root) continue;
        const rel = path.relative(tmp, full);
        if (entry.isSymbolicLink()) snapshot[rel] = `link:${fs.readlinkSync(full)}`;
        else if (entry.isDirectory()) {
          snapshot[rel] = 'dir';
          walk(full);
        } else snapshot[rel] = `file:${sha(fs.readFileSync(full))}`;
      }
    };
    walk(tmp);
    return snapshot;
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'traversal-'));
    const c = path.join(tmp, 'a', 'b', 'c');
    root = path.join(c, 'root');
    outside = path.join(c, 'outside');
    fs.mkdirSync(path.join(tmp, 'a', 'b', 'etc'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'a', 'b', 'etc', 'passwd'), `root:x:0:0:${SECRET}\n`);
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
    fs.writeFileSync(path.join(c, 'secret.txt'), SECRET);
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'docs', 'real.txt'), 'legitimate');
    fs.symlinkSync('../../outside/secret.txt', path.join(root, 'docs', 'file-link'));
    fs.symlinkSync('../outside', path.join(root, 'link-out'));
    configFile = path.join(tmp, 'gateway.yaml');
    fs.writeFileSync(configFile, `connectors:\n  - ${JSON.stringify({ id: 'fs', typeId: 'filesystem', params: { root } })}\n`);
    gw = await startGateway({ env: { GATEWAY_CONFIG: configFile } });
    docsId = encodeId('docs');
    realId = encodeId('docs/real.txt');
  });

  afterAll(async () => {
    await gw?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Names and paths that try to leave the root (or reach the connector's
   * hidden metadata), as a client would type them; each reaches the gateway
   * exactly as written (the query string encodes it once).
   */
  const ESCAPING = [
    '..',
    '../..',
    '../../../etc/passwd',
    '../outside/secret.txt',
    '../secret.txt',
    'docs/../../outside/secret.txt',
    '....//....//outside',
    '%2e%2e%2f',
    '%2e%2e%2foutside%2fsecret.txt',
    '%252e%252e%252f',
    '%252e%252e%252foutside',
    '..%5c',
    '..%5c..%5csecret.txt',
    '\\..\\',
    '..\\..\\secret.txt',
    '..%00',
    'real.txt\u0000.png',
    '\u0000',
    '/../outside/secret.txt',
    '/docs/../../outside',
    '/link-out/secret.txt',
    'link-out/secret.txt',
    '/link-out',
    'link-out',
    'docs/file-link',
    '/.gateway',
    '.gateway',
    '.gateway/format.json',
  ];

  /** Ids built the driver's way (fs- + base64url of a path) around hostile paths, plus malformed encodings. */
  function hostileIds(): string[] {
    const targets = ['..', '../outside/secret.txt', '../../../etc/passwd', '/etc/passwd', 'link-out/secret.txt', 'link-out', 'docs/file-link', 'docs/../../outside', '%2e%2e/outside', '..\\secret.txt', 'docs/real.txt\u0000', '.gateway', '.gateway/format.json'];
    const ids = targets.flatMap((t) => [`fs-${b64url(t)}`, `fs-${b64(t)}`, b64url(t), b64(t)]);
    ids.push(`fs-${b64url(path.join(outside, 'secret.txt'))}`, `${realId};../../secret`, `${realId};1/..`, `${realId}%00`, `${docsId}/../..`, 'fs-Li4', 'fs-Li4=', 'fs-%2e%2e');
    return ids.concat(ESCAPING);
  }

  /**
   * Absolute paths: repository paths start at the root, so as a path they name
   * something inside it (and may be created there); as an id or a single name
   * they are invalid.
   */
  const rooted = () => ['/etc/passwd', path.join(outside, 'secret.txt'), outside];

  type Kind = 'id' | 'name' | 'path';

  interface Attempt {
    label: string;
    kind: Kind;
    method: 'get' | 'post' | 'put' | 'delete';
    route: string;
    query: Record<string, string>;
    body?: 'multipart' | 'raw';
  }

  function attemptsFor(value: string, rootId: string): Attempt[] {
    const a = (kind: Kind, method: Attempt['method'], route: string, param: string, query: Record<string, string>, body?: Attempt['body']): Attempt => ({
      label: `${method.toUpperCase()} ${route} ${param}=${JSON.stringify(value)}`,
      kind,
      method,
      route,
      query,
      body,
    });
    // Names are tried in the root folder, where the metadata folder's name is reserved too.
    return [
      a('id', 'get', 'file', 'id', { id: value }),
      a('name', 'get', 'idbypath', 'fileName', { fileName: value, folderPath: '/' }),
      a('path', 'get', 'idbypath', 'folderPath', { fileName: 'secret.txt', folderPath: value }),
      a('name', 'post', 'file', 'fileName', { fileName: value, folderId: rootId }, 'multipart'),
      a('id', 'post', 'file', 'folderId', { fileName: 'dropped.txt', folderId: value }, 'multipart'),
      a('id', 'put', 'update', 'fileId', { fileId: value }, 'raw'),
      a('id', 'put', 'update', 'fileId (properties)', { fileId: value, tag: 'pwned' }),
      a('name', 'put', 'update', 'fileName', { fileName: value, folderId: rootId }, 'raw'),
      a('id', 'put', 'update', 'folderId', { fileName: 'secret.txt', folderId: value }, 'raw'),
      a('id', 'put', 'updateContent', 'fileId', { fileId: value }, 'raw'),
      a('id', 'put', 'updateProperties', 'fileId', { fileId: value, tag: 'pwned' }),
      a('id', 'post', 'checkin', 'id', { id: value, comment: 'pwned' }),
      a('id', 'post', 'checkout', 'id', { id: value }),
      a('id', 'get', 'listversions', 'id', { id: value }),
      a('id', 'delete', 'delete', 'id', { id: value }),
      a('path', 'delete', 'delete', 'path', { path: value }),
      a('id', 'get', 'folderitems', 'id', { id: value }),
      a('path', 'post', 'folder', 'path', { path: value }),
      a('id', 'get', 'properties', 'id', { id: value }),
    ];
  }

  async function run(attempt: Attempt): Promise<{ status: number; text: string }> {
    let req = gw.http()[attempt.method](`${gw.api}/repo/fs/${attempt.route}`).query(attempt.query).set('Authorization', adminAuth());
    if (attempt.body === 'multipart') req = req.attach('file', Buffer.from('pwned'), 'dropped.txt');
    if (attempt.body === 'raw') req = req.set('Content-Type', 'application/octet-stream').send(Buffer.from('pwned'));
    const res = await req.buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    return { status: res.status, text: (res.body as Buffer).toString('utf8') };
  }

  /**
   * Refusal is 400, or 404 for a well-formed value that names nothing
   * reachable. 409 is accepted only where a create met a name taken by a link:
   * the request was refused without following it.
   */
  function refused(attempt: Attempt, status: number): boolean {
    if (status === 400 || status === 404) return true;
    return status === 409 && (attempt.route === 'folder' || (attempt.route === 'file' && attempt.method === 'post'));
  }

  async function walk(values: string[], kinds: Kind[], accept: (attempt: Attempt, status: number) => boolean): Promise<number> {
    const before = snapshotOutsideRoot();
    const failures: string[] = [];
    let attempts = 0;
    for (const value of values) {
      for (const attempt of attemptsFor(value, encodeId('')).filter((x) => kinds.includes(x.kind))) {
        attempts++;
        const { status, text } = await run(attempt);
        if (!accept(attempt, status)) failures.push(`${attempt.label} -> ${status} ${text.slice(0, 200)}`);
        if (text.includes(SECRET)) failures.push(`${attempt.label} leaked the sentinel`);
      }
    }
    expect(failures).toEqual([]);
    expect(snapshotOutsideRoot()).toEqual(before);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
    expect(sha(fs.readFileSync('/etc/passwd'))).toBe(passwdBefore);
    // The legitimate document is untouched by all of it.
    expect(fs.readFileSync(path.join(root, 'docs', 'real.txt'), 'utf8')).toBe('legitimate');
    return attempts;
  }

  it('refuses escaping names and paths on every name and path parameter', async () => {
    const attempts = await walk(ESCAPING, ['name', 'path'], refused);
    expect(attempts).toBe(ESCAPING.length * 6);
  });

  it('refuses hostile and malformed ids on every id parameter', async () => {
    const ids = hostileIds();
    const attempts = await walk(ids, ['id'], refused);
    expect(attempts).toBe(ids.length * 13);
  });

  it('refuses absolute paths as ids and names, and confines them to the root as paths', async () => {
    await walk(rooted(), ['id', 'name'], refused);
    // As a path, an absolute path is a repository path: whatever the calls do, they do it under the root (the walk checks outside).
    await walk(rooted(), ['path'], (attempt, status) => refused(attempt, status) || status === 200 || status === 201);
    const target = path.join(outside, 'made-here');
    await gw.http().post(`${gw.api}/repo/fs/folder`).query({ path: target }).set('Authorization', adminAuth()).expect(201);
    expect(fs.statSync(path.join(root, target)).isDirectory()).toBe(true);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('keeps links out of listings, lookups and downloads', async () => {
    const root = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: encodeId('') }).set('Authorization', adminAuth()).expect(200);
    expect(Object.keys(root.body.results)).toContain('/docs');
    expect(Object.keys(root.body.results)).not.toContain('/link-out');
    const docs = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: docsId }).set('Authorization', adminAuth()).expect(200);
    expect(Object.keys(docs.body.results)).toEqual(['/docs/real.txt']);
    await gw.http().get(`${gw.api}/repo/fs/idbypath`).query({ folderPath: '/docs', fileName: 'file-link' }).set('Authorization', adminAuth()).expect(404);
    await gw.http().get(`${gw.api}/repo/fs/file`).query({ id: encodeId('docs/file-link') }).set('Authorization', adminAuth()).expect(404);
    await gw.http().get(`${gw.api}/repo/fs/file`).query({ id: encodeId('link-out/secret.txt') }).set('Authorization', adminAuth()).expect(404);
    // The legitimate document next to them is served.
    const real = await gw.http().get(`${gw.api}/repo/fs/file`).query({ id: realId }).set('Authorization', adminAuth()).expect(200);
    expect(real.text ?? real.body.toString()).toBe('legitimate');
  });

  it("ignores directories in a multipart part's filename (only the last name is kept)", async () => {
    const before = snapshotOutsideRoot();
    for (const [filename, kept] of [
      ['../../outside/planted.txt', 'planted.txt'],
      ['..\\..\\outside\\planted2.txt', 'planted2.txt'],
      [`${outside}/planted3.txt`, 'planted3.txt'],
    ]) {
      const res = await gw.http().post(`${gw.api}/repo/fs/file`).query({ folderId: docsId }).set('Authorization', adminAuth()).attach('file', Buffer.from('planted'), filename);
      expect({ filename, status: res.status }).toEqual({ filename, status: 201 });
      const item = await gw.http().get(`${gw.api}/repo/fs/properties`).query({ id: res.body.results.id }).set('Authorization', adminAuth()).expect(200);
      expect(item.body.results.svc_filename.DisplayName).toBe(`[${kept}]`); // spec 2.5: the value in brackets
      expect(fs.readFileSync(path.join(root, 'docs', kept), 'utf8')).toBe('planted');
    }
    expect(snapshotOutsideRoot()).toEqual(before);
  });
});
