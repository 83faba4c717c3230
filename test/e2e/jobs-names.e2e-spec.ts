import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nameKey, nameViolations, type ContentConnector, type ItemInfo } from '@gateway/connector-api';
import { FILESYSTEM_NAMING_RULES } from '@gateway/connector-filesystem';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { nameProblems, sanitizeName } from '../../apps/api/src/jobs/target-names';
import { CONNECTOR_FIXTURES, type ContractEnvironment } from '../contract/fixtures';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/**
 * Copy jobs give every document a name its target takes (the `names` option, target-names.ts): hostile
 * names copied from a filesystem into every content connector of the contract fixtures (filesystem, S3
 * on MinIO, CMIS on OpenCMIS InMemory, the SharePoint and Graph simulators), then copied back into a new
 * filesystem folder. No document fails, no two sources share one target name, and the copy back
 * restores every name (and every byte) exactly. One table of names, no code per connector.
 */

const long = (unit: string, bytes: number, tail = '') => unit.repeat(Math.floor((bytes - Buffer.byteLength(tail)) / Buffer.byteLength(unit))) + tail;

/**
 * Names a filesystem holds (its source) that some target refuses or compares as another's: every
 * forbidden character of every target, reserved names, refused first and last characters, 255-byte
 * UTF-8 names, names equal but for case or Unicode normalization, emoji, a name that another's
 * sanitized form is, and a path too long for SharePoint. Folder names are the target's own
 * (target-names.ts: a folder keeps no source_name), so the folders here are names every target takes.
 */
const LISTED_NAMES = [
  ...[...'"*:<>?|#%~'].map((c) => `mid${c}dle.txt`),
  'all "*:<>?|#% in one.txt',
  '~lead.txt',
  '~$temp.docx',
  'trail.',
  'trail..',
  'trail ',
  ' lead.txt',
  'nbsp\u00a0',
  '\u3000ideographic.txt',
  'CON',
  'con.txt',
  'PRN',
  'AUX.log',
  'NUL',
  'COM0',
  'COM9.dat',
  'LPT1',
  'lpt9',
  '.lock',
  'desktop.ini',
  'Desktop.INI',
  'a_vti_b.txt',
  '_VTI_.txt',
  long('é', 255),
  long('日', 255),
  long('😀', 255, 'abc'),
  long('a', 255, '.txt'),
  long('👩‍👩‍👧', 255),
  'Case.txt',
  'case.txt',
  'CASE.txt',
  'caf\u00e9.txt',
  'cafe\u0301.txt',
  'Caf\u00e9.txt',
  '😀 smile.txt',
  '👩‍👩‍👧 family.txt',
  '🏳️‍🌈.txt',
  'a:b.txt',
  'a\uff1ab.txt',
  'A:B.txt',
  '100%.txt',
  '%41.txt',
  'semi;colon.txt',
  "quote'single.txt",
  'amp&ersand.txt',
  'brace{}.txt',
  'tab-like\u2409.txt',
  'rtl\u202eevil.txt',
  'zero\u200bwidth.txt',
  `${'d'.repeat(200)}/${long('n', 240, '.txt')}`,
  'sub/inner?.txt',
  'sub/Inner?.txt',
];

const RESERVED = ['CON', 'PRN', 'AUX', 'NUL', ...Array.from({ length: 10 }, (_, i) => `COM${i}`), ...Array.from({ length: 10 }, (_, i) => `LPT${i}`)];

/** The listed names, and the same kinds generated: each refused character first, last and alone, each device name in three forms, case triples, NFC/NFD pairs. */
const HOSTILE_NAMES = [
  ...new Set([
    ...LISTED_NAMES,
    ...[...'"*:<>?|#~'].flatMap((c) => [`${c}first.txt`, `last${c}`, `${c}.txt`]),
    ...RESERVED.flatMap((r) => [r.toLowerCase(), `${r}.txt`, `${r.toLowerCase()}.tar.gz`]),
    ...['report', 'notes', 'plan', 'x'].flatMap((s) => [`${s}.`, `${s} `, `${s}. `, `${s} .`]),
    ...['alpha', 'Beta', 'gamma'].flatMap((s) => [`${s}.md`, `${s.toUpperCase()}.md`, `${s[0].toUpperCase()}${s.slice(1).toLowerCase()}.MD`]),
    ...['résumé', 'naïve', 'Ångström', 'über', 'crème brûlée'].flatMap((s) => [`${s.normalize('NFC')}.txt`, `${s.normalize('NFD')}.txt`]),
    ...['🎉', '🇫🇷', '👍🏽', '🧑‍💻', '❤️'].map((e) => `${e} party.txt`),
  ]),
];

interface ReportRow {
  relPath: string;
  outcome: string;
  message: string | null;
}

/** Every regular file below `dir` (relative path → bytes), the connector's metadata folder left out. */
function filesBelow(dir: string, rel = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.gateway') continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) for (const [k, v] of filesBelow(path.join(dir, e.name), r)) out.set(k, v);
    else if (e.isFile()) out.set(r, fs.readFileSync(path.join(dir, e.name)));
  }
  return out;
}

/** Every document below a folder of `connector`, by folder path. */
async function documentsBelow(connector: ContentConnector, folderPath: string): Promise<Map<string, ItemInfo[]>> {
  const byFolder = new Map<string, ItemInfo[]>();
  const walk = async (folderId: string, at: string) => {
    let cursor: string | undefined;
    do {
      const page = await connector.listFolder(folderId, { limit: 200, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        if (item.baseType === 'folder') await walk(item.id, item.path);
        else byFolder.set(at, [...(byFolder.get(at) ?? []), item]);
      }
      cursor = page.nextCursor;
    } while (cursor);
  };
  await walk(await connector.idByPath(path.posix.dirname(folderPath), path.posix.basename(folderPath)), folderPath);
  return byFolder;
}

describe.each(Object.values(CONNECTOR_FIXTURES))(`Copy jobs give every target a name it takes: filesystem → $typeId → filesystem, ${MODE} mode`, (fixture) => {
  let env: ContractEnvironment;
  let gw: JobsGateway;
  let target: ContentConnector;

  beforeAll(async () => {
    env = await fixture.setup();
    gw = await startJobsGateway({ extraYaml: `  - ${env.connectorYaml}\n`, env: env.env });
    target = gw.app.get(ConnectorRegistry).get(env.connectorId);
  });
  afterAll(async () => {
    await gw?.close();
    await env?.teardown();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  async function run(jobId: number) {
    await call(gw, jobId, 'start');
    return waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
  }

  async function rows(jobId: number): Promise<ReportRow[]> {
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).query({ limit: '500' }).set('Authorization', adminAuth()).expect(200);
    return res.body.results.rows as ReportRow[];
  }

  it(`copies ${HOSTILE_NAMES.length} hostile names without a failure or a shared name, and a copy back restores each name byte for byte`, async () => {
    const name = `names-${randomBytes(3).toString('hex')}`;
    const files = Object.fromEntries(HOSTILE_NAMES.map((n) => [`${name}/${n}`, Buffer.from(`content of ${n}\n`, 'utf8')]));
    writeTree(gw.srcRoot, files);
    const sourceFiles = filesBelow(path.join(gw.srcRoot, name));
    expect(sourceFiles.size).toBe(HOSTILE_NAMES.length);

    const targetFolder = `${env.testFolderPath}/${name}`;
    const there = await defineJob(gw, { jobName: `${name}-there`, source: { connectorId: 'src', folderPath: `/${name}` }, target: { connectorId: env.connectorId, folderPath: targetFolder } });
    const outcome = await run(there);
    const thereRows = await rows(there);
    expect(thereRows.filter((r) => r.outcome !== 'p')).toEqual([]);
    expect(outcome).toMatchObject({ status: 'COMPLETED', written: HOSTILE_NAMES.length, failed: 0 });
    // Every rename is in its document's outcome: at least each name the target's rules refuse.
    for (const r of thereRows) {
      const refused = target.namingRules !== undefined && nameViolations(path.posix.basename(r.relPath), target.namingRules).length > 0;
      if (refused) expect(r.message).toMatch(/^renamed: /);
      if (r.message?.startsWith('renamed: ')) expect(r.message).toContain(`/${name}/${r.relPath} → ${targetFolder}/`);
    }

    // No two sources on one target name, as the target compares names.
    const written = await documentsBelow(target, targetFolder);
    expect([...written.values()].flat()).toHaveLength(HOSTILE_NAMES.length);
    for (const items of written.values()) expect(new Set(items.map((i) => nameKey(i.name, target.namingRules))).size).toBe(items.length);

    const back = await defineJob(gw, { jobName: `${name}-back`, source: { connectorId: env.connectorId, folderPath: targetFolder }, target: { connectorId: 'dst', folderPath: `/${name}` } });
    const backOutcome = await run(back);
    expect((await rows(back)).filter((r) => r.outcome !== 'p')).toEqual([]);
    expect(backOutcome).toMatchObject({ status: 'COMPLETED', written: HOSTILE_NAMES.length, failed: 0 });
    // A target that keeps no source_name (CMIS: its types define no such property) says so in the note;
    // those documents come back under their target name (made to fit the filesystem), every other one
    // under its source name, byte for byte.
    const notKept = thereRows.filter((r) => r.message?.includes('source_name not kept') || r.message?.includes('keeps no properties'));
    const notKeptRels = new Set(notKept.map((r) => r.relPath));
    const expected = new Map([...sourceFiles].filter(([rel]) => !notKeptRels.has(rel)));
    for (const r of notKept) {
      const targetName = /→ [^;]*\/([^/;]*)(;|$)/.exec(r.message!)![1];
      const back = nameProblems(targetName, '/', FILESYSTEM_NAMING_RULES).length > 0 ? sanitizeName(targetName, '/', FILESYSTEM_NAMING_RULES) : targetName;
      expected.set(path.posix.join(path.posix.dirname(r.relPath), back).replace(/^\.\//, ''), sourceFiles.get(r.relPath)!);
    }
    const restored = filesBelow(path.join(gw.dstRoot, name));
    const bytesOf = (m: Map<string, Buffer>) => [...m.keys()].map((k) => Buffer.from(k, 'utf8').toString('hex')).sort();
    expect(bytesOf(restored)).toEqual(bytesOf(expected));
    for (const [rel, bytes] of expected) expect(restored.get(rel)?.equals(bytes)).toBe(true);
  });
});

describe(`Copy jobs into a filesystem that takes Windows names only (windowsNames), ${MODE} mode`, () => {
  let gw: JobsGateway;
  let winRoot: string;
  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-jobs-names-'));
    winRoot = path.join(root, 'win');
    gw = await startJobsGateway({ root, extraYaml: `  - {id: win, typeId: filesystem, params: {root: ${JSON.stringify(winRoot)}, windowsNames: true}}\n` });
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  async function copy(folder: string, names: 'sanitize' | 'refuse'): Promise<{ status: unknown; rows: ReportRow[] }> {
    const jobId = await defineJob(gw, { jobName: `win-${folder}`, source: { connectorId: 'src', folderPath: `/${folder}` }, target: { connectorId: 'win', folderPath: `/${folder}` }, options: { names } });
    await call(gw, jobId, 'start');
    const status = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200);
    return { status, rows: res.body.results.rows as ReportRow[] };
  }

  it('sanitize: Windows device names get a suffix, forbidden characters their look-alikes, a trailing dot its full-width form', async () => {
    writeTree(gw.srcRoot, { 'w1/CON.txt': 'c', 'w1/a:b.txt': 'a', 'w1/end.': 'e', 'w1/plain.txt': 'p' });
    const { status, rows } = await copy('w1', 'sanitize');
    expect(status).toMatchObject({ status: 'COMPLETED', written: 4, failed: 0 });
    expect(fs.readdirSync(path.join(winRoot, 'w1')).sort()).toEqual(['CON_.txt', 'a\uff1ab.txt', 'end\uff0e', 'plain.txt'].sort());
    expect(rows.find((r) => r.relPath === 'CON.txt')?.message).toBe('renamed: /w1/CON.txt → /w1/CON_.txt');
  });

  it('refuse: each such name is an error of its document naming the rule, the others are written', async () => {
    writeTree(gw.srcRoot, { 'w2/COM1': 'c', 'w2/a|b.txt': 'a', 'w2/plain.txt': 'p' });
    const { status, rows } = await copy('w2', 'refuse');
    expect(status).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', written: 1, failed: 2 });
    const byRel = Object.fromEntries(rows.map((r) => [r.relPath, r]));
    expect(byRel['COM1']).toMatchObject({ outcome: 'e', message: "NAME_REFUSED: the target refuses the name 'COM1' ('COM1' is a reserved name)" });
    expect(byRel['a|b.txt']).toMatchObject({ outcome: 'e', message: "NAME_REFUSED: the target refuses the name 'a|b.txt' (contains '|')" });
    expect(fs.readdirSync(path.join(winRoot, 'w2'))).toEqual(['plain.txt']);
  });

  it('the connector itself refuses such a name on upload, naming fileName', async () => {
    const folderId = (await gw.http().get(`${gw.api}/repo/win/idbypath`).query({ folderPath: '/', fileName: 'w2' }).set('Authorization', adminAuth()).expect(200)).body.results.id;
    const res = await gw.http().post(`${gw.api}/repo/win/file`).query({ folderId, fileName: 'AUX.txt' }).set('Authorization', adminAuth()).attach('file', Buffer.from('x'), { filename: 'part.bin', contentType: 'text/plain' }).expect(400);
    expect(JSON.stringify(res.body)).toContain('fileName');
  });
});

describe(`Copy job definitions: names, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway();
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  it('an unknown value is refused with 400 naming the option; a known one is stored and shown', async () => {
    const body = (names: string) => ({ jobName: `names-${names}`, source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/out' }, options: { names } });
    const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body('rename')).expect(400);
    expect(JSON.stringify(res.body)).toContain('names');
    const ok = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body('refuse')).expect(201);
    expect(ok.body.results.options).toMatchObject({ names: 'refuse' });
  });
});

describe(`Filesystem entries the gateway cannot address are documents of the run, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway();
  });
  afterAll(async () => {
    await gw?.close();
    if (gw) fs.rmSync(gw.root, { recursive: true, force: true });
  });

  it('a name with a backslash, a control character or a percent-encoded separator is skipped with its reason, and counted', async () => {
    writeTree(gw.srcRoot, { 'u/back\\slash.txt': 'b', 'u/bell\u0007.txt': 'c', 'u/a%2Fb.txt': 'p', 'u/ok.txt': 'o', 'u/bad\\dir/inside.txt': 'i' });
    const jobId = await defineJob(gw, { jobName: 'unaddressable', source: { connectorId: 'src', folderPath: '/u' }, target: { connectorId: 'dst', folderPath: '/u' } });
    await call(gw, jobId, 'start');
    expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', written: 1, failed: 0, skipped: 4 });
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(200);
    const byRel = Object.fromEntries((res.body.results.rows as ReportRow[]).map((r) => [r.relPath, r]));
    expect(byRel['back\\slash.txt']).toMatchObject({ outcome: 's', message: 'UNADDRESSABLE: the name contains a path separator inside a name' });
    expect(byRel['bell\u0007.txt']).toMatchObject({ outcome: 's', message: 'UNADDRESSABLE: the name contains a control character' });
    expect(byRel['a%2Fb.txt']).toMatchObject({ outcome: 's', message: 'UNADDRESSABLE: the name contains a path separator inside a name' });
    expect(byRel['bad\\dir']).toMatchObject({ outcome: 's', message: 'UNADDRESSABLE: the name contains a path separator inside a name (a folder: nothing in it is listed)' });
    expect(byRel['ok.txt']).toMatchObject({ outcome: 'p' });
  });
});
