import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { UpstreamError, type ByteRange } from '@gateway/connector-api';
import { binary, connector, createUser, listen, rawGet, seedDocument, sha256, startBatch, StreamGate, waitFor, waitForExport, type TestUser } from '../support/files';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { readZip, type ZipEntry } from '../support/zip';
import { BatchHaltedError, BatchZip } from '../../apps/api/src/files/batch-zip';

/** Spec 4.2, the two batch forms: POST /api/repo/batch (background export) and GET /api/repo/__BATCH__/file (streamed). */

const MAX_ENTRIES = 20;

/** No entry may leave the folder it is extracted to, on any platform. */
function expectSafeNames(entries: ZipEntry[]): void {
  for (const { name } of entries) {
    expect(name).not.toMatch(/^[/\\]/);
    expect(name).not.toMatch(/\\|:|\u0000/);
    expect(name.split('/')).not.toContain('..');
    expect(name.split('/')).not.toContain('.');
    expect(name.split('/')).not.toContain('');
  }
  const lower = entries.map((e) => e.name.toLowerCase());
  expect(new Set(lower).size).toBe(lower.length);
}

describe('Batch', () => {
  let gw: TestGateway;
  let alice: TestUser;
  const contents: Record<string, Buffer> = {
    'a.bin': randomBytes(300_000),
    'b.txt': Buffer.from('bravo\n'),
    'c.txt': Buffer.from('charlie\n'),
    'docs/d.txt': Buffer.from('delta\n'),
    'flaky.bin': randomBytes(50_000),
    'broken.bin': randomBytes(50_000),
  };
  const ids: Record<string, string> = {};
  let folderId: string;

  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_BATCH_MAX_ENTRIES: String(MAX_ENTRIES) } });
    alice = await createUser(gw, 'alice');
    for (const [p, c] of Object.entries(contents)) ids[p] = await seedDocument(gw, p, c);
    folderId = (await gw.http().get(`${gw.api}/repo/fs/idbypath`).query({ folderPath: '/', fileName: 'docs' }).set('Authorization', adminAuth()).expect(200)).body.results.id;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => gw.close());

  const downloadFile = async (id: string): Promise<ZipEntry[]> => {
    const res = await gw.http().get(`${gw.api}/files/user/download`).query({ id }).set('Authorization', alice.auth).buffer(true).parse(binary).expect(200);
    return readZip(res.body);
  };

  /** 'flaky.bin' fails when opened (an upstream error); 'broken.bin' breaks after 1000 bytes. */
  const breakSomeDocuments = () => {
    const fsConnector = connector(gw);
    const open = fsConnector.openContent.bind(fsConnector);
    jest.spyOn(fsConnector, 'openContent').mockImplementation(async (id: string, range?: ByteRange) => {
      if (id === ids['flaky.bin']) throw new UpstreamError('the repository answered 500');
      if (id === ids['broken.bin']) {
        let sent = false;
        return new Readable({
          read() {
            if (sent) return;
            sent = true;
            this.push(contents['broken.bin'].subarray(0, 1000));
            setImmediate(() => this.destroy(new Error('connection reset by the repository')));
          },
        });
      }
      return open(id, range);
    });
  };

  it('zips every entry in order, with safe unique names, and reports failing entries in errors.txt', async () => {
    breakSomeDocuments();
    const batch = [
      { fileName: 'report.bin', connId: 'fs', id: ids['a.bin'] }, // 0
      { fileName: 'report.bin', connId: 'fs', id: ids['b.txt'] }, // 1 duplicate
      { fileName: 'REPORT.BIN', connId: 'fs', id: ids['c.txt'] }, // 2 duplicate but for case
      { fileName: '../../etc/passwd', connId: 'fs', id: ids['b.txt'] }, // 3
      { fileName: '/abs/x.txt', connId: 'fs', id: ids['c.txt'] }, // 4
      { fileName: 'C:\\Windows\\evil.txt', connId: 'fs', id: ids['docs/d.txt'] }, // 5
      { fileName: 'sub/../../up.txt', connId: 'fs', id: ids['b.txt'] }, // 6
      { fileName: 'été/naïve ü.txt', connId: 'fs', id: ids['c.txt'] }, // 7
      { fileName: 'errors.txt', connId: 'fs', id: ids['docs/d.txt'] }, // 8 reserved name
      { fileName: '', connId: 'fs', id: ids['docs/d.txt'] }, // 9 the document's own name
      { fileName: '..', connId: 'fs', id: ids['b.txt'] }, // 10 nothing usable: the document's name
      { fileName: 'x.txt', connId: 'nope', id: ids['b.txt'] }, // 11 unknown connector
      { fileName: 'y.txt', connId: 'fs', id: 'fs-bm8tc3VjaC1maWxl' }, // 12 missing document
      { fileName: 'z.txt', connId: 'fs', id: ids['flaky.bin'] }, // 13 upstream error
      { fileName: 'broken.bin', connId: 'fs', id: ids['broken.bin'] }, // 14 breaks midway
      { fileName: 'folder', connId: 'fs', id: folderId }, // 15 a folder
      { connId: 'fs', id: ids['c.txt'] }, // 16 no fileName at all
    ];
    const link = await startBatch(gw, alice, batch);
    const file = await waitForExport(gw, alice, link.docId);
    expect(file).toMatchObject({ state: 'ready', ready: true, progress: { entriesTotal: batch.length, entriesDone: batch.length, errors: 5 } });

    const entries = await downloadFile(link.docId);
    expectSafeNames(entries);
    expect(entries.map((e) => e.name)).toEqual([
      'report.bin',
      'report (1).bin',
      'REPORT (2).BIN',
      'etc/passwd',
      'abs/x.txt',
      'C_/Windows/evil.txt',
      'sub/up.txt',
      'été/naïve ü.txt',
      'errors (1).txt',
      'd.txt',
      'b.txt',
      'broken.bin',
      'c.txt',
      'errors.txt',
    ]);
    const expected: Record<string, Buffer> = {
      'report.bin': contents['a.bin'],
      'report (1).bin': contents['b.txt'],
      'REPORT (2).BIN': contents['c.txt'],
      'etc/passwd': contents['b.txt'],
      'abs/x.txt': contents['c.txt'],
      'C_/Windows/evil.txt': contents['docs/d.txt'],
      'sub/up.txt': contents['b.txt'],
      'été/naïve ü.txt': contents['c.txt'],
      'errors (1).txt': contents['docs/d.txt'],
      'd.txt': contents['docs/d.txt'],
      'b.txt': contents['b.txt'],
      'broken.bin': contents['broken.bin'].subarray(0, 1000),
      'c.txt': contents['c.txt'],
    };
    for (const entry of entries.filter((e) => e.name !== 'errors.txt')) {
      expect({ name: entry.name, sha: sha256(entry.data) }).toEqual({ name: entry.name, sha: sha256(expected[entry.name]) });
      expect(entry.method).toBe(0); // stored: the default level 0
    }

    const errors = entries.find((e) => e.name === 'errors.txt')!.data.toString('utf8').trimEnd().split('\n');
    expect(errors).toHaveLength(5);
    expect(errors[0]).toMatch(/^\[11\] connId="nope" id=".+" fileName="x\.txt": CONNECTOR_NOT_FOUND: Connector 'nope' not found$/);
    expect(errors[1]).toMatch(/^\[12\] connId="fs" id="fs-bm8tc3VjaC1maWxl" fileName="y\.txt": ITEM_NOT_FOUND: /);
    expect(errors[2]).toMatch(/^\[13\] .*: UPSTREAM_ERROR: the repository answered 500$/);
    expect(errors[3]).toMatch(/^\[14\] .*: ERROR: the entry 'broken\.bin' in this zip is incomplete \(1000 bytes written\): connection reset by the repository$/);
    expect(errors[4]).toMatch(/^\[15\] .*: NOT_A_DOCUMENT: /);
  });

  it('reports a document that fails while it waits its turn (opened ahead) as an empty, incomplete entry', async () => {
    // a.bin is held after its first chunk until the next document, opened ahead meanwhile, has failed.
    const fsConnector = connector(gw);
    const open = fsConnector.openContent.bind(fsConnector);
    let failedEarly!: () => void;
    const failed = new Promise<void>((r) => (failedEarly = r));
    jest.spyOn(fsConnector, 'openContent').mockImplementation(async (id: string, range?: ByteRange) => {
      if (id === ids['b.txt']) {
        const early = new Readable({ read() {} });
        setImmediate(() => {
          early.destroy(new Error('reset while waiting'));
          failedEarly();
        });
        return early;
      }
      const source = await open(id, range);
      if (id !== ids['a.bin']) return source;
      const held = new PassThrough();
      let first = true;
      source.on('data', (chunk: Buffer) => {
        held.write(chunk);
        if (first) {
          first = false;
          source.pause();
          void failed.then(() => setTimeout(() => source.resume(), 50));
        }
      });
      source.on('end', () => held.end());
      return held;
    });
    const link = await startBatch(gw, alice, [
      { fileName: 'first.bin', connId: 'fs', id: ids['a.bin'] },
      { fileName: 'early.txt', connId: 'fs', id: ids['b.txt'] },
      { fileName: 'last.txt', connId: 'fs', id: ids['c.txt'] },
    ]);
    const file = await waitForExport(gw, alice, link.docId);
    expect(file).toMatchObject({ state: 'ready', progress: { entriesDone: 3, errors: 1 } });
    const entries = await downloadFile(link.docId);
    expect(entries.map((e) => [e.name, e.size])).toEqual([
      ['first.bin', contents['a.bin'].length],
      ['early.txt', 0],
      ['last.txt', contents['c.txt'].length],
      ['errors.txt', expect.any(Number)],
    ]);
    expect(sha256(entries[0].data)).toBe(sha256(contents['a.bin']));
    expect(sha256(entries[2].data)).toBe(sha256(contents['c.txt']));
    expect(entries[3].data.toString('utf8').trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^\[1\] .*: ERROR: the entry 'early\.txt' in this zip is incomplete \(0 bytes written\): reset while waiting$/),
    ]);
  });

  it('writes no errors.txt when every entry succeeds', async () => {
    const link = await startBatch(gw, alice, [{ fileName: 'one.txt', connId: 'fs', id: ids['b.txt'] }]);
    await waitForExport(gw, alice, link.docId);
    const entries = await downloadFile(link.docId);
    expect(entries.map((e) => e.name)).toEqual(['one.txt']);
  });

  it('still completes a batch in which every entry fails, with only errors.txt inside', async () => {
    const link = await startBatch(gw, alice, [
      { fileName: 'a', connId: 'nope', id: 'x' },
      { fileName: 'b', connId: 'fs', id: 'fs-bWlzc2luZw' },
    ]);
    const file = await waitForExport(gw, alice, link.docId);
    expect(file).toMatchObject({ state: 'ready', progress: { errors: 2 } });
    const entries = await downloadFile(link.docId);
    expect(entries.map((e) => e.name)).toEqual(['errors.txt']);
    expect(entries[0].data.toString().trimEnd().split('\n')).toHaveLength(2);
  });

  it.each([
    ['no body', undefined, 'batch'],
    ['a batch that is not an array', { batch: 'a.txt' }, 'batch'],
    ['an empty batch', { batch: [] }, 'batch'],
    ['an entry without connId', { batch: [{ fileName: 'a', id: 'x' }] }, 'batch[0].connId'],
    ['an entry without id', { batch: [{ fileName: 'a', connId: 'fs' }] }, 'batch[0].id'],
    ['a non-string fileName', { batch: [{ connId: 'fs', id: 'y', fileName: 3 }] }, 'batch[0].fileName'],
    ['too many entries', { batch: Array.from({ length: MAX_ENTRIES + 1 }, () => ({ connId: 'fs', id: 'x' })) }, 'batch'],
  ])('refuses %s with 400 naming the parameter', async (_what, body, parameter) => {
    const req = gw.http().post(`${gw.api}/repo/batch`).set('Authorization', alice.auth);
    const res = await (body === undefined ? req : req.send(body)).expect(400);
    expect(res.body.error.parameter).toBe(parameter);
  });

  it('needs credentials for both forms', async () => {
    await gw.http().post(`${gw.api}/repo/batch`).send({ batch: [{ connId: 'fs', id: 'x' }] }).expect(401);
    await gw.http().get(`${gw.api}/repo/__BATCH__/file`).query({ id0: 'x', conn0: 'fs' }).expect(401);
  });

  describe('older form (GET /api/repo/__BATCH__/file)', () => {
    const legacy = (query: string) => gw.http().get(`${gw.api}/repo/__BATCH__/file?${query}`).set('Authorization', alice.auth).buffer(true).parse(binary);

    it('streams a zip in index order, with id<x> and id[x] forms mixed, and errors.txt for failing entries', async () => {
      const q = [
        `id10=${ids['docs/d.txt']}`,
        'conn10=fs',
        `fname10=${encodeURIComponent('../ten.txt')}`,
        `id2=${ids['a.bin']}`,
        'conn2=fs',
        'fname2=two.bin',
        `${encodeURIComponent('id[0]')}=${ids['b.txt']}`,
        `${encodeURIComponent('conn[0]')}=fs`,
        'id5=fs-bWlzc2luZw',
        'conn5=fs',
        'fname5=five.txt',
      ].join('&');
      const res = await legacy(q).expect(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename=batch-\d{8}-\d{6}\.zip$/);
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['transfer-encoding']).toBe('chunked');
      const entries = readZip(res.body);
      expectSafeNames(entries);
      expect(entries.map((e) => e.name)).toEqual(['b.txt', 'two.bin', 'ten.txt', 'errors.txt']);
      expect(sha256(entries[0].data)).toBe(sha256(contents['b.txt']));
      expect(sha256(entries[1].data)).toBe(sha256(contents['a.bin']));
      expect(sha256(entries[2].data)).toBe(sha256(contents['docs/d.txt']));
      const errors = entries[3].data.toString().trimEnd().split('\n');
      expect(errors).toEqual([expect.stringMatching(/^\[5\] connId="fs" id="fs-bWlzc2luZw" fileName="five\.txt": ITEM_NOT_FOUND: /)]);
    });

    it('is not shadowed by the content service routes (repo/:connectorId/file)', async () => {
      const res = await legacy(`id0=${ids['b.txt']}&conn0=fs`).expect(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(readZip(res.body).map((e) => e.name)).toEqual(['b.txt']);
      // ...while the content service still answers its own file route.
      const file = await gw.http().get(`${gw.api}/repo/fs/file`).query({ id: ids['b.txt'] }).set('Authorization', alice.auth).expect(200);
      expect(file.text ?? file.body.toString()).toBe('bravo\n');
    });

    it.each([
      ['no entries', '', 'id0'],
      ['an unknown parameter (issue 35: never ignored)', 'id0=x&conn0=fs&unrelated=1', 'unrelated'],
      ['an id without conn', 'id1=x', 'conn1'],
      ['a conn without id', 'conn3=fs', 'id3'],
      ['an fname alone', 'fname4=a.txt', 'id4'],
      ['a repeated parameter', 'id1=a&id1=b&conn1=fs', 'id1'],
      ['id1 and id[1] disagreeing', `id1=a&${encodeURIComponent('id[1]')}=b&conn1=fs`, 'id[1]'],
      ['too many entries', Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => `id${i}=x&conn${i}=fs`).join('&'), 'id0'],
    ])('refuses %s with 400 before sending anything', async (_what, query, parameter) => {
      const res = await legacy(query).expect(400);
      expect(res.headers['content-type']).toMatch(/json/);
      expect(res.body.error.parameter).toBe(parameter);
    });

    it('stops building when the reader goes away, closing the document opened ahead too', async () => {
      const gate = new StreamGate(connector(gw));
      // The streamed form's build: its run() settling is the event that says the build is over.
      const builds: Promise<unknown>[] = [];
      const run = BatchZip.prototype.run;
      const watch = jest.spyOn(BatchZip.prototype, 'run').mockImplementation(function (this: BatchZip) {
        const built = run.call(this);
        builds.push(built);
        return built;
      });
      try {
        const base = await listen(gw);
        const query = `id0=${ids['a.bin']}&conn0=fs&id1=${ids['b.txt']}&conn1=fs&id2=${ids['c.txt']}&conn2=fs`;
        const res = await rawGet(`${base}${gw.api}/repo/__BATCH__/file?${query}`, { Authorization: alice.auth });
        expect(res.statusCode).toBe(200);
        // The first document is held after its first chunk; the second is opened ahead meanwhile.
        await waitFor(async () => (gate.count === 2 ? true : undefined), 'the first document and the next one to be opened');
        res.destroy();
        await waitFor(async () => (gate.streams.every((s) => s.destroyed) ? true : undefined), 'both open documents to be closed');
        gate.release(); // a build that went on regardless would now open the third document
        await expect(builds[0]).rejects.toBeInstanceOf(BatchHaltedError);
        expect(builds).toHaveLength(1);
        expect(gate.count).toBe(2); // the build has ended: the third document was never opened
      } finally {
        gate.restore();
        watch.mockRestore();
      }
    });
  });

  it('opens the next document only near the end of a large one', async () => {
    const big = randomBytes(24 * 1024 * 1024);
    const bigId = await seedDocument(gw, 'big-ahead.bin', big);
    const gate = new StreamGate(connector(gw));
    gate.release(); // no hold: the gate only records how far the large document had got when the next was opened
    try {
      const link = await startBatch(gw, alice, [
        { fileName: 'big.bin', connId: 'fs', id: bigId },
        { fileName: 'small.txt', connId: 'fs', id: ids['c.txt'] },
      ]);
      const file = await waitForExport(gw, alice, link.docId);
      expect(file).toMatchObject({ state: 'ready', progress: { entriesDone: 2, errors: 0 } });
      expect(gate.count).toBe(2);
      // The next document is opened once at most 4 MiB of the current one are left, not at the start.
      expect(gate.passedAtOpen[0]).toBe(0);
      expect(gate.passedAtOpen[1]).toBeGreaterThanOrEqual(big.length - 4 * 1024 * 1024);
      const entries = await downloadFile(link.docId);
      expect(entries.map((e) => e.name)).toEqual(['big.bin', 'small.txt']);
      expect(sha256(entries[0].data)).toBe(sha256(big));
      expect(sha256(entries[1].data)).toBe(sha256(contents['c.txt']));
    } finally {
      gate.restore();
      fs.rmSync(path.join(gw.dataDir, 'repository', 'big-ahead.bin'));
    }
  });

  it('copies large documents through intact', async () => {
    const big = randomBytes(24 * 1024 * 1024);
    const bigId = await seedDocument(gw, 'big.bin', big);
    try {
      const link = await startBatch(gw, alice, [
        { fileName: 'big.bin', connId: 'fs', id: bigId },
        { fileName: 'again/big.bin', connId: 'fs', id: bigId },
      ]);
      const file = await waitForExport(gw, alice, link.docId);
      expect(file.progress.bytesDone).toBe(2 * big.length);
      const entries = await downloadFile(link.docId);
      expect(entries.map((e) => [e.name, e.size])).toEqual([
        ['big.bin', big.length],
        ['again/big.bin', big.length],
      ]);
      for (const e of entries) expect(sha256(e.data)).toBe(sha256(big));
    } finally {
      fs.rmSync(path.join(gw.dataDir, 'repository', 'big.bin'));
    }
  });
});

describe('Batch with deflate (GATEWAY_BATCH_ZIP_LEVEL=6)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_BATCH_ZIP_LEVEL: '6' } });
  });
  afterAll(() => gw.close());

  it('deflates the entries, byte-exact after inflating', async () => {
    const alice = await createUser(gw, 'alice');
    const text = Buffer.from('compressible line of text\n'.repeat(10_000));
    const id = await seedDocument(gw, 'text.txt', text);
    const link = await startBatch(gw, alice, [{ connId: 'fs', id }]);
    const file = await waitForExport(gw, alice, link.docId);
    expect(file.size).toBeLessThan(text.length / 10);
    const res = await gw.http().get(`${gw.api}/files/user/download`).query({ id: link.docId }).set('Authorization', alice.auth).buffer(true).parse(binary).expect(200);
    const [entry] = readZip(res.body);
    expect(entry.method).toBe(8);
    expect(sha256(entry.data)).toBe(sha256(text));
  });
});
