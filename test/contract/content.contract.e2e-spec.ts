import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { parse as parseDisposition } from 'content-disposition';
import type { Response } from 'supertest';
import { CAPABILITY_NAMES, EXTENSION_CAPABILITY_NAMES } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { GATEWAY_CONNECTOR_MODULES } from '../../apps/api/src/connectors/connectors.module';
import { nameProblems } from '../../apps/api/src/jobs/target-names';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { SEARCH_FIXTURES } from './search-fixtures';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from './fixtures';
import { abortedUpload, chunkedRequest, errorOf, patterned, rawBody, sha256 } from './support';

/**
 * The content service (spec 4.2) through HTTP against the real bootstrap, once
 * per connector fixture. Operations the connector declares in repositoryInfo
 * are exercised; for each one it does not declare, the suite asserts 501
 * naming the capability instead. Test titles say "(or 501)" where that applies.
 */

const ALICE = { username: 'contract-alice', password: 'alice-password-1' };
const BOB = { username: 'contract-bob', password: 'bob-password-12' };
const alice = () => basic(ALICE.username, ALICE.password);
const bob = () => basic(BOB.username, BOB.password);

// Non-ASCII in every way a name can be: accents, a symbol outside Latin-1, CJK, a space.
const UNICODE_NAME = 'rapport été ✓ 日本.txt';
/** Parts of names some repository refuses or treats apart; a connector must take those its naming rules allow. */
const HOSTILE_STEMS = [...'"*:<>?|#%~;&{}[]\'', '100%', '%41', 'a_vti_b', 'CON', 'café', 'cafe\u0301', '😀', '👩‍👩‍👧', '\u202eevil', 'zero\u200bwidth', '\u3000wide', '.hidden'];

type Entry = Record<string, string | null>;

describe('Contract fixtures', () => {
  it('cover every connector kind the gateway knows (content kinds here, search kinds in search-fixtures)', () => {
    const covered = [...Object.keys(CONNECTOR_FIXTURES), ...SEARCH_FIXTURES.map((f) => f.typeId)];
    expect(covered.sort()).toEqual(Object.keys(GATEWAY_CONNECTOR_MODULES).sort());
  });
});

describe.each(Object.values(CONNECTOR_FIXTURES))('Content service contract: $typeId connector', (fixture) => {
  let env: ContractEnvironment;
  let gw: TestGateway;
  let configDir: string;
  let base: string;
  // What the capability-guarded cases go by: the fixture's pinned set, never the connector's own report,
  // so a connector that stops reporting a capability fails those cases instead of skipping their checks.
  const caps: Record<string, boolean> = Object.fromEntries(fixture.capabilities.map((name) => [name, true]));
  let reportedCapabilities: Record<string, boolean>;
  let folderId: string;
  let seq = 0;
  const unique = (stem: string, ext = '.bin') => `${stem}-${++seq}-${randomBytes(3).toString('hex')}${ext}`;

  beforeAll(async () => {
    env = await fixture.setup();
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-config-'));
    const configFile = path.join(configDir, 'gateway.yaml');
    fs.writeFileSync(configFile, `connectors:\n  - ${env.connectorYaml}\n`);
    gw = await startGateway({ env: { GATEWAY_CONFIG: configFile, ...env.env } });
    base = `${gw.api}/repo/${env.connectorId}`;
    for (const u of [ALICE, BOB]) {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...u, roles: ['user'] }).expect(201);
    }
    reportedCapabilities = (await gw.http().get(`${base}/repositoryInfo`).set('Authorization', adminAuth()).expect(200)).body.results.capabilities;
    const parent = path.posix.dirname(env.testFolderPath);
    const name = path.posix.basename(env.testFolderPath);
    folderId = (await api('get', 'idbypath', { folderPath: parent, fileName: name }).expect(200)).body.results.id;
  });

  afterAll(async () => {
    await gw?.close();
    await env?.teardown();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  // ---- helpers --------------------------------------------------------------

  function api(method: 'get' | 'post' | 'put' | 'delete' | 'head', route: string, query: Record<string, string> = {}, auth = adminAuth()) {
    return gw.http()[method](`${base}/${route}`).query(query).set('Authorization', auth);
  }

  async function upload(bytes: Buffer, fileName: string, options: { folder?: string; auth?: string; contentType?: string } = {}): Promise<string> {
    const res = await api('post', 'file', { fileName, folderId: options.folder ?? folderId }, options.auth)
      .attach('file', bytes, { filename: 'ignored-part-name.bin', contentType: options.contentType ?? 'application/octet-stream' })
      .expect(201);
    expect(typeof res.body.results.id).toBe('string');
    return res.body.results.id;
  }

  function download(id: string, headers: Record<string, string> = {}, method: 'get' | 'head' = 'get') {
    let req = api(method, 'file', { id });
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return method === 'head' ? req : req.buffer(true).parse(rawBody);
  }

  async function listing(id = folderId, query: Record<string, string> = {}): Promise<Record<string, Entry>> {
    return (await api('get', 'folderitems', { id, ...query }).expect(200)).body.results;
  }

  async function entryOf(id: string, inFolder = folderId): Promise<Entry> {
    const entry = Object.values(await listing(inFolder)).find((e) => e.Id === id);
    expect(entry).toBeDefined();
    return entry!;
  }

  function expect501(res: Response, capability: string): void {
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_SUPPORTED', capability } });
  }

  function expect400(res: Response, parameter: string): void {
    expect(res.status).toBe(400);
    const body = Buffer.isBuffer(res.body) ? errorOf(res) : res.body;
    expect(body).toMatchObject({ success: false, error: { parameter } });
  }

  // ---- repository info ------------------------------------------------------

  it('reports exactly the capabilities its fixture pins (every name of the list, true for those, false for the rest)', () => {
    const names = [...CAPABILITY_NAMES, ...EXTENSION_CAPABILITY_NAMES];
    const pinned = Object.fromEntries(names.map((name) => [name, caps[name] === true]));
    expect(reportedCapabilities).toEqual(pinned);
  });

  it('declares every core operation the content service relies on', () => {
    for (const name of ['getContent', 'getFileContent', 'getFileItem', 'getObjectIDByPath', 'listFolderItems', 'createFile', 'deleteObjectByID', 'getObjectProperties', 'getTypes']) {
      expect({ name, declared: reportedCapabilities[name] }).toEqual({ name, declared: true });
    }
  });

  it('answers 501 naming the capability exactly for the optional operations it does not declare', async () => {
    const id = await upload(Buffer.from('probe'), unique('capability-probe'));
    const probes: Record<string, () => Promise<Response>> = {
      updateFile: () => api('put', 'updateContent', { fileId: id }).set('Content-Type', 'text/plain').send('probe v2'),
      updateProperties: () => api('put', 'updateProperties', { fileId: id, status: 'probed' }),
      listVersions: () => api('get', 'listversions', { id }),
      checkOut: () => api('post', 'checkout', { id }),
      checkIn: () => api('post', 'checkin', { id }),
      createFolder: () => api('post', 'folder', { path: `${env.testFolderPath}/${unique('probe-folder', '')}` }),
      deleteFolder: () => api('delete', 'delete', { path: `${env.testFolderPath}/${unique('no-such-folder', '')}` }),
    };
    const seen: Record<string, string> = {};
    const expected: Record<string, string> = {};
    for (const [capability, probe] of Object.entries(probes)) {
      const res = await probe();
      seen[capability] = res.status === 501 ? `501 ${res.body.error?.capability}` : 'supported';
      expected[capability] = caps[capability] ? 'supported' : `501 ${capability}`;
    }
    expect(seen).toEqual(expected);
  });

  // ---- upload and download -------------------------------------------------

  it('stores a multipart upload byte for byte and serves it with its headers', async () => {
    const bytes = patterned(300_000, 1);
    const id = await upload(bytes, UNICODE_NAME, { contentType: 'text/plain' });
    const res = await download(id).expect(200);
    expect(sha256(res.body)).toBe(sha256(bytes));
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers.etag).toMatch(/^"[\x21\x23-\x7e]+"$/);
    expect(Number.isNaN(Date.parse(res.headers['last-modified']))).toBe(false);
    const disposition = res.headers['content-disposition'];
    expect(disposition).toMatch(/^attachment;/);
    // The RFC 8187 form carries the real name; the plain filename is an ASCII fallback.
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent(UNICODE_NAME).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())}`);
    expect(disposition).toMatch(/filename="[\x20-\x7e]+"/);
    expect(parseDisposition(disposition).parameters.filename).toBe(UNICODE_NAME);
  });

  it("names the document after the part's filename, decoded as UTF-8, when fileName is absent", async () => {
    const partName = unique('partie-nommée ✓', '.txt');
    const res = await api('post', 'file', { folderId }).attach('file', Buffer.from('named by the part'), { filename: partName, contentType: 'text/plain' }).expect(201);
    const entry = await entryOf(res.body.results.id);
    expect(entry.Name).toBe(partName);
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: partName }).expect(200)).body.results.id).toBe(res.body.results.id);
  });

  it('serves an empty document', async () => {
    const id = await upload(Buffer.alloc(0), unique('empty'));
    const res = await download(id).expect(200);
    expect(res.body.length).toBe(0);
    expect(res.headers['content-length']).toBe('0');
  });

  it('creates a document from a stream whose chunks include empty ones (a copy job\'s source may hand those over)', async () => {
    const connector = gw.app.get(ConnectorRegistry).get(env.connectorId);
    const actor = { username: 'admin' };
    // CMIS on its real server waited for the idle time-out on a stream of one empty Buffer (multipart.ts).
    const empty = await connector.createFile({ folderId, fileName: unique('empty-chunk'), content: Readable.from([Buffer.alloc(0)]) }, actor);
    expect((await download(empty).expect(200)).body.length).toBe(0);
    const mixed = await connector.createFile({ folderId, fileName: unique('empty-chunks'), content: Readable.from([Buffer.alloc(0), Buffer.from('ab'), Buffer.alloc(0), Buffer.from('c')]) }, actor);
    expect((await download(mixed).expect(200)).body.toString()).toBe('abc');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const bytes = patterned(1234, 2);
    const id = await upload(bytes, unique('head'));
    const get = await download(id).expect(200);
    const head = await download(id, {}, 'head').expect(200);
    for (const h of ['content-length', 'content-type', 'etag', 'last-modified', 'content-disposition']) expect(head.headers[h]).toBe(get.headers[h]);
    expect(head.text ?? '').toBe('');
  });

  it('answers conditional GETs with 304 when the validators match, and 200 when they do not', async () => {
    const id = await upload(patterned(5000, 3), unique('conditional'));
    const first = await download(id).expect(200);
    const { etag, 'last-modified': lastModified } = first.headers;

    const byEtag = await download(id, { 'If-None-Match': etag }).expect(304);
    expect(byEtag.headers.etag).toBe(etag);
    expect(byEtag.body.length).toBe(0);
    await download(id, { 'If-None-Match': `"nope", W/${etag}` }).expect(304); // weak comparison, lists
    await download(id, { 'If-None-Match': '*' }).expect(304);
    await download(id, { 'If-None-Match': '"something-else"' }).expect(200);

    await download(id, { 'If-Modified-Since': lastModified }).expect(304);
    await download(id, { 'If-Modified-Since': new Date(Date.parse(lastModified) + 3600_000).toUTCString() }).expect(304);
    await download(id, { 'If-Modified-Since': new Date(Date.parse(lastModified) - 3600_000).toUTCString() }).expect(200);
    // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
    await download(id, { 'If-None-Match': '"something-else"', 'If-Modified-Since': lastModified }).expect(200);
  });

  it('serves single byte ranges with 206 and refuses unsatisfiable ones with 416', async () => {
    const bytes = patterned(10_000, 4);
    const id = await upload(bytes, unique('ranges'));
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=-500', 9500, 9999],
      ['bytes=9000-', 9000, 9999],
      ['bytes=5000-5000', 5000, 5000],
      ['bytes=9990-20000', 9990, 9999],
    ];
    for (const [range, start, end] of cases) {
      const res = await download(id, { Range: range }).expect(206);
      expect({ range, contentRange: res.headers['content-range'] }).toEqual({ range, contentRange: `bytes ${start}-${end}/10000` });
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(sha256(res.body)).toBe(sha256(bytes.subarray(start, end + 1)));
    }

    const unsatisfiable = await download(id, { Range: 'bytes=10000-10010' }).expect(416);
    expect(unsatisfiable.headers['content-range']).toBe('bytes */10000');
    expect(errorOf(unsatisfiable)).toMatchObject({ success: false, error: { code: 'RANGE_NOT_SATISFIABLE' } });

    // Several ranges, malformed ranges and other units: the whole content.
    for (const range of ['bytes=0-10,20-30', 'bytes=abc', 'items=0-1']) {
      const res = await download(id, { Range: range }).expect(200);
      expect(sha256(res.body)).toBe(sha256(bytes));
    }
  });

  it('honours If-Range: the range when the validator matches, the whole content otherwise', async () => {
    const bytes = patterned(2000, 5);
    const id = await upload(bytes, unique('if-range'));
    const { etag, 'last-modified': lastModified } = (await download(id).expect(200)).headers;
    await download(id, { Range: 'bytes=0-9', 'If-Range': etag }).expect(206);
    await download(id, { Range: 'bytes=0-9', 'If-Range': lastModified }).expect(206);
    const stale = await download(id, { Range: 'bytes=0-9', 'If-Range': '"stale"' }).expect(200);
    expect(stale.body.length).toBe(2000);
    await download(id, { Range: 'bytes=0-9', 'If-Range': `W/${etag}` }).expect(200);
  });

  // ---- lookup and listing --------------------------------------------------

  it('finds an id by folder path and name', async () => {
    const name = unique('lookup', '.txt');
    const id = await upload(Buffer.from('x'), name);
    const res = await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name }).expect(200);
    expect(res.body).toEqual({ success: true, results: { id } });
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: unique('absent') })).status).toBe(404);
  });

  it('lists a folder in the spec 2.3 format: keys are item paths, every value a string or null', async () => {
    const name = unique('listed', '.txt');
    const id = await upload(Buffer.from('listed content'), name, { contentType: 'text/plain' });
    const items = await listing();
    const fields = ['BaseType', 'CheckedOut', 'CheckinComment', 'ContentLength', 'CreatedBy', 'CreatedDate', 'Description', 'Id', 'ItemPath', 'MimeType', 'ModifiedBy', 'ModifiedDate', 'Name', 'SitePath', 'SvcType', 'Type', 'VersionCount', 'VersionLabel', 'VersionSeriesId'];
    expect(Object.keys(items).length).toBeGreaterThan(0);
    for (const [key, entry] of Object.entries(items)) {
      expect(Object.keys(entry).sort()).toEqual([...fields].sort());
      for (const value of Object.values(entry)) expect(value === null || typeof value === 'string').toBe(true);
      expect(entry.ItemPath).toBe(key);
      expect(['true', 'false']).toContain(entry.CheckedOut);
      expect(entry.VersionCount).toMatch(/^(-1|\d+)$/);
      for (const date of [entry.CreatedDate, entry.ModifiedDate]) if (date !== null) expect(date).toMatch(/^\d+$/);
    }
    const entry = items[`${env.testFolderPath}/${name}`];
    expect(entry).toMatchObject({ Id: id, Name: name, BaseType: 'document', ContentLength: '14', CheckedOut: 'false', CreatedBy: 'admin' });
    expect(entry.MimeType).toMatch(/^text\/plain/);
    expect(Math.abs(Number(entry.ModifiedDate) - Date.now())).toBeLessThan(5 * 60_000);
  });

  it('pages a listing with limit and cursor, every item exactly once, the cursor in X-Next-Cursor', async () => {
    for (let i = 0; i < 5; i++) await upload(Buffer.from(`page ${i}`), unique('paged'));
    const all = Object.keys(await listing());
    expect(all.length).toBeGreaterThanOrEqual(5);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api('get', 'folderitems', { id: folderId, limit: '2', ...(cursor ? { cursor } : {}) }).expect(200);
      const keys = Object.keys(res.body.results);
      expect(keys.length).toBeLessThanOrEqual(2);
      seen.push(...keys);
      cursor = res.headers['x-next-cursor'];
      if (cursor) {
        expect(keys.length).toBe(2);
        expect(res.headers.link).toBe(`<${base}/folderitems?id=${encodeURIComponent(folderId)}&limit=2&cursor=${encodeURIComponent(cursor)}>; rel="next"`);
      } else {
        expect(res.headers.link).toBeUndefined();
      }
      expect(++pages).toBeLessThan(all.length + 2);
    } while (cursor);
    expect([...seen].sort()).toEqual([...all].sort());
    expect(new Set(seen).size).toBe(seen.length);

    // A limit covering everything answers one page without a cursor.
    const whole = await api('get', 'folderitems', { id: folderId, limit: '10000' }).expect(200);
    expect(whole.headers['x-next-cursor']).toBeUndefined();
    expect(Object.keys(whole.body.results).sort()).toEqual([...all].sort());
  });

  it.each([
    ['0', 'limit'],
    ['10001', 'limit'],
    ['two', 'limit'],
    ['1.5', 'limit'],
  ])('refuses limit=%s with 400 naming the parameter', async (limit, parameter) => {
    expect400(await api('get', 'folderitems', { id: folderId, limit }), parameter);
  });

  it('refuses a cursor it did not issue with 400 naming cursor', async () => {
    expect400(await api('get', 'folderitems', { id: folderId, limit: '1', cursor: '!!not-a-cursor!!' }), 'cursor');
  });

  it('answers the spec 2.5 property map, the value inside the brackets of DisplayName', async () => {
    const name = unique('props', '.txt');
    const id = await upload(Buffer.from('0123456789'), name, { contentType: 'text/plain' });
    const props = (await api('get', 'properties', { id }).expect(200)).body.results;
    expect(props).toMatchObject({
      svc_filename: { DisplayName: `[${name}]`, QueryName: 'File Name' },
      svc_length: { DisplayName: '[10]', QueryName: 'Content Length' },
      svc_created: { QueryName: 'Created' },
      svc_last_modified: { QueryName: 'Last Modified' },
      svc_content_type: { QueryName: 'Mime Type' },
    });
    expect(props.svc_content_type.DisplayName).toMatch(/^\[text\/plain/);
    expect(props.svc_created.DisplayName).toMatch(/^\[\d+\]$/);
    for (const value of Object.values<Record<string, unknown>>(props)) {
      expect(Object.keys(value).sort()).toEqual(['DisplayName', 'QueryName']);
      expect(value.DisplayName).toMatch(/^\[.*\]$/s);
    }
  });

  // ---- updates and versions --------------------------------------------------

  it('updates content through update (body) and updateContent; versions grow and old ones stay readable (or 501)', async () => {
    const v1 = patterned(4000, 6);
    const v2 = patterned(3000, 7);
    const v3 = Buffer.from('{"third": "version", "raw": true}');
    const id = await upload(v1, unique('versions'));
    const viaUpdate = await api('put', 'update', { fileId: id }).set('Content-Type', 'application/octet-stream').send(v2);
    if (!caps.updateFile) {
      expect501(viaUpdate, 'updateFile');
      expect501(await api('put', 'updateContent', { fileId: id }).set('Content-Type', 'application/octet-stream').send(v2), 'updateFile');
      return;
    }
    expect(viaUpdate.status).toBe(200);
    expect(viaUpdate.body.results.id).toBe(id);
    expect(sha256((await download(id).expect(200)).body)).toBe(sha256(v2));

    // A JSON document is content like any other: stored as sent, not parsed by the JSON body parser.
    await api('put', 'updateContent', { fileId: id }).set('Content-Type', 'application/json').send(v3.toString()).expect(200);
    const current = await download(id).expect(200);
    expect(sha256(current.body)).toBe(sha256(v3));

    const versions = await api('get', 'listversions', { id });
    if (!caps.listVersions) return expect501(versions, 'listVersions');
    expect(versions.status).toBe(200);
    const list = versions.body.results as Array<Record<string, unknown>>;
    expect(list).toHaveLength(3);
    for (const v of list) {
      expect(Object.keys(v).sort()).toEqual(['docId', 'lastModified', 'name', 'versionLabel', 'versionLength', 'versionSeriesId']);
      expect(Number.isInteger(v.lastModified)).toBe(true);
      expect(typeof v.versionLabel).toBe('string');
    }
    // Newest first, in the order written (the three were written within a second or so: not a sort by date).
    expect(list.map((v) => v.versionLength)).toEqual([v3.length, v2.length, v1.length]);
    const byLength = new Map(list.map((v) => [v.versionLength, v.docId as string]));
    const oldest = await download(byLength.get(v1.length)!).expect(200);
    expect(sha256(oldest.body)).toBe(sha256(v1));
    expect(sha256((await download(byLength.get(v2.length)!).expect(200)).body)).toBe(sha256(v2));
    // Spec 2.3: VersionCount is -1 where versions are not counted (a CMIS listing would need a request per item); a count must be exact.
    const versionCount = (await entryOf(id)).VersionCount;
    expect(['-1', '3']).toContain(versionCount);
  });

  it('treats an empty body on update as a properties update, Content-Length: 0 or chunked (or 501)', async () => {
    const bytes = Buffer.from('unchanged content');
    const id = await upload(bytes, unique('empty-update'));
    const res = await api('put', 'update', { fileId: id, department: 'finance' }).set('Content-Type', 'application/octet-stream').send(Buffer.alloc(0));
    if (!caps.updateProperties) return expect501(res, 'updateProperties');
    expect(res.status).toBe(200);
    const chunked = await chunkedRequest(gw, 'PUT', `${base}/update?fileId=${encodeURIComponent(id)}&status=final`, { Authorization: adminAuth(), 'Content-Type': 'application/octet-stream' }, []);
    expect(chunked.status).toBe(200);
    const props = (await api('get', 'properties', { id }).expect(200)).body.results;
    expect(props.department).toEqual({ DisplayName: '[finance]', QueryName: 'department' });
    expect(props.status).toEqual({ DisplayName: '[final]', QueryName: 'status' });
    expect(sha256((await download(id).expect(200)).body)).toBe(sha256(bytes));
  });

  it('takes a chunked body on update as new content (or 501)', async () => {
    const id = await upload(Buffer.from('before'), unique('chunked-update'));
    const res = await chunkedRequest(gw, 'PUT', `${base}/update?fileId=${encodeURIComponent(id)}`, { Authorization: adminAuth(), 'Content-Type': 'application/octet-stream' }, [Buffer.from('after, '), Buffer.from('in two chunks')]);
    if (!caps.updateFile) return expect(JSON.parse(res.body)).toMatchObject({ error: { capability: 'updateFile' } });
    expect(res.status).toBe(200);
    expect((await download(id).expect(200)).body.toString()).toBe('after, in two chunks');
  });

  it('updates a document named by fileName and folderId (or 501)', async () => {
    const name = unique('by-name', '.txt');
    const id = await upload(Buffer.from('v1'), name);
    const res = await api('put', 'update', { fileName: name, folderId }).set('Content-Type', 'text/plain').send('v2 by name');
    if (!caps.updateFile) return expect501(res, 'updateFile');
    expect(res.status).toBe(200);
    expect(res.body.results.id).toBe(id);
    expect((await download(id).expect(200)).body.toString()).toBe('v2 by name');
    expect400(await api('put', 'update', { fileName: name }).send('x'), 'folderId');
    expect400(await api('put', 'update', { fileId: id, fileName: name, folderId }).send('x'), 'fileId');
  });

  it('updates properties through updateProperties and update (or 501)', async () => {
    const id = await upload(Buffer.from('props'), unique('update-props'));
    const res = await api('put', 'updateProperties', { fileId: id, reviewer: 'Zoë', 'ref.code': 'A-1' });
    if (!caps.updateProperties) return expect501(res, 'updateProperties');
    expect(res.status).toBe(200);
    expect(res.body.results.id).toBe(id);
    const props = (await api('get', 'properties', { id }).expect(200)).body.results;
    expect(props.reviewer).toEqual({ DisplayName: '[Zoë]', QueryName: 'reviewer' });
    expect(props['ref.code']).toEqual({ DisplayName: '[A-1]', QueryName: 'ref.code' });

    expect400(await api('put', 'updateProperties', { fileId: id }), 'properties');
    expect400(await api('put', 'updateProperties', { fileId: id, svc_filename: 'x' }), 'svc_filename');
    expect400(await api('put', 'updateProperties', { fileId: id, '1bad': 'x' }), '1bad');
    expect400(await gw.http().put(`${base}/updateProperties?fileId=${encodeURIComponent(id)}&twice=a&twice=b`).set('Authorization', adminAuth()), 'twice');
  });

  it('writes the properties given to createFile with the content where its propertyUpdate declares propertiesOnCreate, refusing a bad one by name with nothing written', async () => {
    const connector = gw.app.get(ConnectorRegistry).get(env.connectorId);
    // Copy jobs give `properties` to createFile only where this is declared (apps/api/src/jobs/mapping/mapped-properties.ts).
    if (!connector.propertyUpdate?.propertiesOnCreate) return expect(connector.propertyUpdate?.propertiesOnCreate).toBeFalsy();
    const actor = { username: 'admin' };
    const create = (fileName: string, properties: Record<string, string>) => connector.createFile({ folderId, fileName, content: Readable.from([Buffer.from('props')]), properties }, actor);
    const id = await create(unique('create-props'), { reviewer: 'Zoë', 'ref.code': 'A-1' });
    expect((await connector.getItem(id)).properties).toMatchObject({ reviewer: 'Zoë', 'ref.code': 'A-1' });
    const refused = unique('create-props-refused');
    await expect(create(refused, { reviewer: 'x', svc_filename: 'y' })).rejects.toMatchObject({ parameter: 'svc_filename' });
    await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: refused }).expect(404);
  });

  it('refuses an update with neither content nor properties, and a type the connector does not list', async () => {
    const id = await upload(Buffer.from('x'), unique('nothing'));
    expect400(await api('put', 'update', { fileId: id }), 'body');
    expect400(await api('put', 'update', { fileId: id, type: 'no-such-type' }).send('x'), 'type');
    expect400(await api('post', 'file', { folderId, fileName: unique('typed'), type: 'no-such-type' }).attach('file', Buffer.from('x'), 'x.bin'), 'type');
  });

  it('accepts a type key from the types call on upload', async () => {
    const types = (await gw.http().get(`${base}/types`).set('Authorization', adminAuth()).expect(200)).body.results;
    const type = Object.keys(types)[0];
    await api('post', 'file', { folderId, fileName: unique('typed'), type }).attach('file', Buffer.from('typed'), 'x.bin').expect(201);
  });

  // ---- check-out and check-in ------------------------------------------------

  it('reserves a checked-out document for its holder; check-in makes a version with the comment (or 501)', async () => {
    const id = await upload(Buffer.from('shared v1'), unique('checkout'), { auth: alice() });
    const out = await api('post', 'checkout', { id }, alice());
    if (!caps.checkOut) {
      expect501(out, 'checkOut');
      expect501(await api('post', 'checkin', { id }, alice()), 'checkIn');
      return;
    }
    expect(out.status).toBe(200);
    expect(out.body.results.id).toBe(id);
    expect((await entryOf(id)).CheckedOut).toBe('true');

    for (const attempt of [
      api('put', 'updateContent', { fileId: id }, bob()).set('Content-Type', 'text/plain').send('bob was here'),
      api('put', 'updateProperties', { fileId: id, owner: 'bob' }, bob()),
      api('post', 'checkout', { id }, bob()),
      api('delete', 'delete', { id }, bob()),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(409);
      expect(res.body.message).toContain(ALICE.username);
    }
    expect((await download(id).expect(200)).body.toString()).toBe('shared v1');

    // The holder may change it while it is checked out.
    if (caps.updateFile) await api('put', 'updateContent', { fileId: id }, alice()).set('Content-Type', 'text/plain').send('shared v2').expect(200);
    const versionsBefore = caps.listVersions ? (await api('get', 'listversions', { id }).expect(200)).body.results.length : 0;
    expect((await api('post', 'checkin', { id }, bob())).status).toBe(409);
    const comment = 'Relu et corrigé ✓';
    const checkIn = await api('post', 'checkin', { id, comment }, alice()).expect(200);
    expect(checkIn.body.results.id).toBe(id);
    const entry = await entryOf(id);
    expect(entry.CheckedOut).toBe('false');
    expect(entry.CheckinComment).toBe(comment);
    if (caps.listVersions) expect((await api('get', 'listversions', { id }).expect(200)).body.results.length).toBe(versionsBefore + 1);
    // Released: Bob can work on it now.
    await api('post', 'checkout', { id }, bob()).expect(200);
    await api('post', 'checkin', { id }, bob()).expect(200);
  });

  // ---- deletion ----------------------------------------------------------------

  it('deletes only the latest version with allversions=false, restoring the previous one (or 501)', async () => {
    const v1 = Buffer.from('version one');
    const id = await upload(v1, unique('delete-latest'));
    if (!caps.updateFile) return expect501(await api('put', 'updateContent', { fileId: id }).send('v2'), 'updateFile');
    await api('put', 'updateContent', { fileId: id }).set('Content-Type', 'text/plain').send('version two').expect(200);
    const res = await api('delete', 'delete', { id, allversions: 'false' }).expect(200);
    expect(res.body.results.id).toBe(id);
    expect(sha256((await download(id).expect(200)).body)).toBe(sha256(v1));
    if (caps.listVersions) expect((await api('get', 'listversions', { id }).expect(200)).body.results).toHaveLength(1);
  });

  it('deletes a document and all its versions by default', async () => {
    const name = unique('delete-all');
    const id = await upload(Buffer.from('doomed'), name);
    if (caps.updateFile) await api('put', 'updateContent', { fileId: id }).send('doomed v2').expect(200);
    const res = await api('delete', 'delete', { id }).expect(200);
    expect(res.body).toEqual({ success: true, results: { id } });
    expect((await download(id)).status).toBe(404);
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name })).status).toBe(404);
    expect(Object.values(await listing()).some((e) => e.Id === id)).toBe(false);
    expect400(await api('delete', 'delete', { id, allversions: 'maybe' }), 'allversions');
  });

  // ---- folders ---------------------------------------------------------------------

  it('creates a folder with its missing parents (or 501)', async () => {
    const top = unique('tree', '');
    const folderPath = `${env.testFolderPath}/${top}/a/b`;
    const res = await api('post', 'folder', { path: folderPath });
    if (!caps.createFolder) return expect501(res, 'createFolder');
    expect(res.status).toBe(201);
    const id = res.body.results.id;
    expect((await api('get', 'idbypath', { folderPath: `${env.testFolderPath}/${top}/a`, fileName: 'b' }).expect(200)).body.results.id).toBe(id);
    const parent = (await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: top }).expect(200)).body.results.id;
    const entry = Object.values(await listing(parent))[0];
    expect(entry).toMatchObject({ Name: 'a', BaseType: 'folder', ItemPath: `${env.testFolderPath}/${top}/a` });
    // Creating an existing folder again is not an error.
    expect((await api('post', 'folder', { path: folderPath }).expect(201)).body.results.id).toBe(id);
    // A document uploaded into the new folder is listed there.
    const doc = await upload(Buffer.from('nested'), 'nested.txt', { folder: id });
    expect(Object.keys(await listing(id))).toEqual([`${folderPath}/nested.txt`]);
    expect((await download(doc).expect(200)).body.toString()).toBe('nested');
  });

  it('deletes a folder by path with its content (or 501 naming deleteFolder)', async () => {
    const top = unique('doomed-folder', '');
    const folderPath = `${env.testFolderPath}/${top}`;
    if (caps.createFolder) await api('post', 'folder', { path: `${folderPath}/inner` }).expect(201);
    const res = await api('delete', 'delete', { path: folderPath });
    if (!caps.deleteFolder) return expect501(res, 'deleteFolder');
    expect(res.status).toBe(200);
    expect(typeof res.body.results.id).toBe('string');
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: top })).status).toBe(404);
    expect((await api('get', 'folderitems', { id: res.body.results.id })).status).toBe(404);
  });

  it('wants exactly one of id and path on delete', async () => {
    expect400(await api('delete', 'delete'), 'id');
    expect400(await api('delete', 'delete', { id: folderId, path: `${env.testFolderPath}/x` }), 'path');
  });

  // ---- validation and errors ------------------------------------------------------

  it.each([
    ['get', 'file', 'id'],
    ['get', 'listversions', 'id'],
    ['get', 'folderitems', 'id'],
    ['get', 'properties', 'id'],
    ['post', 'checkin', 'id'],
    ['post', 'checkout', 'id'],
    ['put', 'updateContent', 'fileId'],
    ['put', 'updateProperties', 'fileId'],
    ['get', 'idbypath', 'fileName'],
    ['post', 'folder', 'path'],
    ['post', 'file', 'folderId'],
  ] as const)('%s %s without %s answers 400 naming it', async (method, route, parameter) => {
    expect400(await api(method, route), parameter);
  });

  it('update without any way to name the document answers 400 naming fileId', async () => {
    expect400(await api('put', 'update').send('x'), 'fileId');
  });

  it('refuses a multipart body without a part named file, with 400 naming file; nothing is created', async () => {
    const name = unique('no-file-part');
    expect400(await api('post', 'file', { folderId, fileName: name }).field('other', 'value'), 'file');
    expect400(await api('post', 'file', { folderId, fileName: name }).attach('upload', Buffer.from('x'), 'x.bin'), 'file');
    expect400(await api('post', 'file', { folderId, fileName: name }).field('file', 'a text field, not a file'), 'file');
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name })).status).toBe(404);
  });

  it('refuses two files, removing the one already stored', async () => {
    const name = unique('two-files');
    const res = await api('post', 'file', { folderId, fileName: name })
      .attach('file', Buffer.from('first'), 'a.bin')
      .attach('file', Buffer.from('second'), 'b.bin');
    expect400(res, 'file');
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name })).status).toBe(404);
  });

  it('refuses a body that is not multipart/form-data with 415 naming Content-Type', async () => {
    const res = await api('post', 'file', { folderId, fileName: unique('not-multipart') }).set('Content-Type', 'application/octet-stream').send(Buffer.from('raw'));
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE', parameter: 'Content-Type' } });
    const none = await api('post', 'file', { folderId, fileName: unique('no-body') });
    expect(none.status).toBe(415);
  });

  it('refuses multipart/form-data without a boundary with 400 naming boundary', async () => {
    const res = await api('post', 'file', { folderId, fileName: unique('no-boundary') }).set('Content-Type', 'multipart/form-data').send('--x\r\n');
    expect400(res, 'boundary');
  });

  it('refuses a truncated multipart body with 400, storing nothing', async () => {
    const name = unique('truncated');
    const body = '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="t.bin"\r\nContent-Type: application/octet-stream\r\n\r\nhalf a file';
    const res = await api('post', 'file', { folderId, fileName: name }).set('Content-Type', 'multipart/form-data; boundary=XYZ').send(body);
    expect(res.status).toBe(400);
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name })).status).toBe(404);
  });

  it('stores nothing from an upload the client abandons half-way, and leaves content it was replacing intact', async () => {
    const name = unique('abandoned');
    const head = Buffer.from(`--B0UND\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    await abortedUpload(
      gw,
      'POST',
      `${base}/file?folderId=${encodeURIComponent(folderId)}&fileName=${encodeURIComponent(name)}`,
      { Authorization: adminAuth(), 'Content-Type': 'multipart/form-data; boundary=B0UND', 'Content-Length': String(10_000_000) },
      Buffer.concat([head, patterned(200_000, 8)]),
    );
    expect((await api('get', 'idbypath', { folderPath: env.testFolderPath, fileName: name })).status).toBe(404);

    const original = patterned(1000, 9);
    const id = await upload(original, unique('abandoned-update'));
    await abortedUpload(gw, 'PUT', `${base}/updateContent?fileId=${encodeURIComponent(id)}`, { Authorization: adminAuth(), 'Content-Type': 'application/octet-stream', 'Content-Length': String(10_000_000) }, patterned(200_000, 10));
    expect(sha256((await download(id).expect(200)).body)).toBe(sha256(original));
    if (caps.listVersions) expect((await api('get', 'listversions', { id }).expect(200)).body.results).toHaveLength(1);
  });

  it('answers 409 when the name is taken', async () => {
    const name = unique('taken');
    await upload(Buffer.from('first'), name);
    const res = await api('post', 'file', { folderId, fileName: name }).attach('file', Buffer.from('second'), 'x.bin');
    expect(res.status).toBe(409);
  });

  it('answers 404 naming an unknown connector on every route', async () => {
    const routes: Array<[string, string, Record<string, string>]> = [
      ['get', 'file', { id: folderId }],
      ['get', 'idbypath', { folderPath: '/', fileName: 'x' }],
      ['get', 'folderitems', { id: folderId }],
      ['get', 'properties', { id: folderId }],
      ['get', 'listversions', { id: folderId }],
      ['post', 'checkout', { id: folderId }],
      ['post', 'checkin', { id: folderId }],
      ['post', 'folder', { path: '/x' }],
      ['delete', 'delete', { id: folderId }],
      ['put', 'updateProperties', { fileId: folderId, a: 'b' }],
    ];
    for (const [method, route, query] of routes) {
      const res = await gw.http()[method as 'get'](`${gw.api}/repo/no-such-connector/${route}`).query(query).set('Authorization', adminAuth());
      expect({ route, status: res.status, code: res.body.error?.code }).toEqual({ route, status: 404, code: 'CONNECTOR_NOT_FOUND' });
    }
  });

  it('answers 404 for an item that does not exist', async () => {
    const name = unique('ghost');
    const id = await upload(Buffer.from('ghost'), name);
    await api('delete', 'delete', { id }).expect(200);
    for (const [method, route, query] of [
      ['get', 'file', { id }],
      ['get', 'properties', { id }],
      ['get', 'listversions', { id }],
    ] as const) {
      const res = await api(method, route, query);
      expect({ route, status: res.status }).toEqual({ route, status: 404 });
    }
    expect((await api('get', 'folderitems', { id })).status).toBe(404);
  });

  it('declares the naming rules its fixture pins', () => {
    expect(gw.app.get(ConnectorRegistry).get(env.connectorId).namingRules).toEqual(fixture.namingRules);
  });

  it('takes as it is every hostile name its naming rules allow', async () => {
    const stem = unique('nr', '');
    const allowed = HOSTILE_STEMS.map((s) => `${stem} ${s}.txt`).filter((n) => nameProblems(n, env.testFolderPath, fixture.namingRules).length === 0);
    // Every rule set allows most of them: a fixture whose rules refuse nearly everything tests nothing here.
    expect(allowed.length).toBeGreaterThan(HOSTILE_STEMS.length / 2);
    for (const name of allowed) await upload(Buffer.from(name), name);
    const listed = new Set(Object.values(await listing()).map((e) => e.Name));
    expect(allowed.filter((n) => !listed.has(n))).toEqual([]);
  });

  it('needs credentials on every content route', async () => {
    const res = await gw.http().get(`${base}/folderitems`).query({ id: folderId });
    expect(res.status).toBe(401);
  });
});
