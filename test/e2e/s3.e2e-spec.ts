import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { connectorParams, createBucket, directClient, useS3Engine, type S3Engine, type S3EngineName } from '../contract/fixtures/s3-engine';
import { rawBody } from '../contract/support';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { createUser, listen, startBatch, StreamGate, connector, waitFor, waitForExport, type TestUser } from '../support/files';
import { call, defineJob, waitStatus } from './jobs-helpers';

/**
 * What the contract suite cannot say about S3: keys no filesystem would take, multipart uploads that
 * must not be left behind, a large object through the gateway with flat memory, jobs between the
 * filesystem and S3, and user files (exports) on S3. Against every S3 engine of the harness
 * (GATEWAY_S3_E2E_ENGINES, default both: they differ in ways users meet). The large-object size is
 * GATEWAY_S3_BIG_BYTES (default 256 MiB in CI; the issue's 5 GiB case is `GATEWAY_S3_BIG_BYTES=5368709120`).
 */
const ENGINES = (process.env.GATEWAY_S3_E2E_ENGINES ?? 's3proxy,minio').split(',').map((s) => s.trim()).filter(Boolean) as S3EngineName[];
const BIG_BYTES = Number(process.env.GATEWAY_S3_BIG_BYTES ?? 256 * 1024 * 1024);
const MiB = 1024 * 1024;

jest.setTimeout(Math.max(300_000, (BIG_BYTES / MiB) * 1000));

/** Deterministic bytes of any length, produced lazily; the hash is computed on the way. */
function patternStream(size: number, seed: number, hash: ReturnType<typeof createHash>): Readable {
  const block = Buffer.alloc(MiB);
  for (let i = 0; i < block.length; i++) block[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(block.length, size - sent);
      const chunk = Buffer.from(block.subarray(0, n));
      chunk.writeUInt32BE(sent / MiB, 0); // every MiB differs, so a reordered part cannot pass
      sent += n;
      hash.update(chunk);
      this.push(chunk);
    },
  });
}

/** A multipart/form-data upload of a stream to POST file, written by hand (chunked). */
function uploadStream(base: string, api: string, connectorId: string, folderId: string, fileName: string, body: Readable): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const boundary = `----s3e2e${randomBytes(6).toString('hex')}`;
    const url = `${base}${api}/repo/${connectorId}/file?folderId=${encodeURIComponent(folderId)}&fileName=${encodeURIComponent(fileName)}`;
    const req = http.request(url, { method: 'POST', headers: { Authorization: adminAuth(), 'Content-Type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    body.pipe(req, { end: false });
    body.on('end', () => req.end(`\r\n--${boundary}--\r\n`));
  });
}

describe.each(ENGINES)('S3 on %s', (engineName) => {
  let engine: S3Engine;
  let s3: S3Client;
  let gw: TestGateway;
  let base: string;
  let bucket: string;
  let exportsBucket: string;
  let rootId: string;
  let alice: TestUser;
  let configDir: string;

  const api = (method: 'get' | 'post' | 'put' | 'delete', route: string, query: Record<string, string> = {}, connectorId = 's3') =>
    gw.http()[method](`${gw.api}/repo/${connectorId}/${route}`).query(query).set('Authorization', adminAuth());
  const uploads = async (b: string, prefix: string) => (await s3.send(new ListMultipartUploadsCommand({ Bucket: b, Prefix: prefix }))).Uploads ?? [];

  beforeAll(async () => {
    engine = await useS3Engine(engineName);
    s3 = directClient(engine.info);
    bucket = await createBucket(s3, 'e2e');
    exportsBucket = await createBucket(s3, 'exports');
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-e2e-'));
    const config = path.join(configDir, 'gateway.yaml');
    const repo = path.join(configDir, 'repository');
    fs.mkdirSync(repo);
    fs.writeFileSync(
      config,
      `connectors:\n  - ${JSON.stringify({ id: 'fs', typeId: 'filesystem', description: 'local', params: { root: repo } })}\n` +
        `  - ${JSON.stringify({ id: 's3', typeId: 's3', description: `S3 on ${engineName}`, params: connectorParams(engine.info, bucket, { multipartThresholdBytes: 5 * MiB }) })}\n`,
    );
    gw = await startGateway({
      env: {
        GATEWAY_CONFIG: config,
        S3_TEST_SECRET: engine.info.secretAccessKey,
        GATEWAY_USER_FILES_STORE: `s3://${exportsBucket}/user-files`,
        GATEWAY_USER_FILES_S3_CONNECTOR: 's3',
        GATEWAY_USER_FILES_S3_PART_BYTES: String(5 * MiB),
      },
    });
    base = await listen(gw);
    rootId = (await api('get', 'rootfolderid').expect(200)).body.results.folderId;
    alice = await createUser(gw, 'alice');
  });

  afterAll(async () => {
    await gw?.close();
    s3?.destroy();
    await engine?.release();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  it('lists, finds and serves keys with spaces, +, %, Unicode and very deep prefixes, and writes such names as exact keys', async () => {
    const deep = Array.from({ length: 60 }, (_, i) => `level ${i}`).join('/');
    const keys = ['odd/with space.txt', 'odd/plus+sign.txt', 'odd/percent%20literal.txt', 'odd/été ✓ 日本.txt', `odd/${deep}/leaf+%.txt`];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `content of ${key}` }));
    const odd = (await api('get', 'idbypath', { folderPath: '/', fileName: 'odd' }).expect(200)).body.results.id;
    const listed = (await api('get', 'folderitems', { id: odd }).expect(200)).body.results as Record<string, Record<string, string>>;
    expect(Object.values(listed).map((e) => e.Name).sort()).toEqual(['level 0', 'percent%20literal.txt', 'plus+sign.txt', 'with space.txt', 'été ✓ 日本.txt'].sort());
    for (const key of keys) {
      const folderPath = `/${path.posix.dirname(key)}`;
      const fileName = path.posix.basename(key);
      const id = (await api('get', 'idbypath', { folderPath, fileName }).expect(200)).body.results.id;
      const res = await api('get', 'file', { id }).buffer(true).parse(rawBody).expect(200);
      expect({ key, body: (res.body as Buffer).toString('utf8') }).toEqual({ key, body: `content of ${key}` });
    }
    // Written through the gateway: the key is the name, byte for byte (no encoding leaks into S3).
    const name = 'a+b %41 ü#?.txt';
    await api('post', 'file', { folderId: odd, fileName: name }).attach('file', Buffer.from('through the gateway'), 'x.bin').expect(201);
    const direct = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `odd/${name}` }));
    expect(await direct.Body!.transformToString()).toBe('through the gateway');
  });

  it('keeps properties as x-amz-meta (non-ASCII as RFC 2047), updated by a copy of the object onto itself', async () => {
    const id = (await api('post', 'file', { folderId: rootId, fileName: `props-${randomBytes(3).toString('hex')}.txt` }).attach('file', Buffer.from('props'), 'x.txt').expect(201)).body.results.id;
    await api('put', 'updateProperties', { fileId: id, reviewer: 'Zoë', status: 'draft' }).expect(200);
    const key = Buffer.from(id.slice(3), 'base64url').toString('utf8');
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head.Metadata).toMatchObject({ status: 'draft', reviewer: `=?UTF-8?B?${Buffer.from('Zoë').toString('base64')}?=`, 'gateway-created-by': 'admin' });
    const props = (await api('get', 'properties', { id }).expect(200)).body.results;
    expect(props.reviewer).toEqual({ DisplayName: '[Zoë]', QueryName: 'reviewer' });
    expect((await api('get', 'file', { id }).buffer(true).parse(rawBody).expect(200)).body.toString()).toBe('props');
  });

  it('offers updates and versions only on a versioned bucket: here 501 naming them', async () => {
    const caps = (await api('get', 'repositoryInfo').expect(200)).body.results.capabilities;
    expect({ updateFile: caps.updateFile, listVersions: caps.listVersions, checkOut: caps.checkOut }).toEqual({ updateFile: false, listVersions: false, checkOut: false });
    const id = (await api('post', 'file', { folderId: rootId, fileName: `v-${randomBytes(3).toString('hex')}` }).attach('file', Buffer.from('v1'), 'x').expect(201)).body.results.id;
    const res = await api('put', 'updateContent', { fileId: id }).set('Content-Type', 'text/plain').send('v2').expect(501);
    expect(res.body.error).toMatchObject({ code: 'NOT_SUPPORTED', capability: 'updateFile' });
  });

  it('aborts the multipart upload of a client that disconnects mid-upload: no parts are left (ListMultipartUploads)', async () => {
    const fileName = `interrupted-${randomBytes(3).toString('hex')}.bin`;
    const boundary = 'INTERRUPTED';
    const req = http.request(`${base}${gw.api}/repo/s3/file?folderId=${encodeURIComponent(rootId)}&fileName=${encodeURIComponent(fileName)}`, {
      method: 'POST',
      headers: { Authorization: adminAuth(), 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(1024 * MiB) },
    });
    req.on('error', () => undefined);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const chunk = randomBytes(MiB);
    // Keep sending until S3 has the multipart upload under way, so the abort has something to abort.
    await waitFor(async () => {
      await new Promise<void>((resolve) => req.write(chunk, () => resolve()));
      return (await uploads(bucket, fileName)).length > 0 ? true : undefined;
    }, 'the multipart upload to start', 120_000);
    req.destroy();
    await waitFor(async () => ((await uploads(bucket, fileName)).length === 0 ? true : undefined), 'the multipart upload to be aborted');
    expect((await api('get', 'idbypath', { folderPath: '/', fileName })).status).toBe(404);
  });

  it(`uploads and downloads ${Math.round(BIG_BYTES / MiB)} MiB through the gateway, streamed, with flat memory`, async () => {
    const fileName = `big-${randomBytes(3).toString('hex')}.bin`;
    const sent = createHash('sha256');
    let peak = 0;
    const baseline = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - baseline)), 100);
    try {
      const up = await uploadStream(base, gw.api, 's3', rootId, fileName, patternStream(BIG_BYTES, 1, sent));
      expect(up.status).toBe(201);
      const id = JSON.parse(up.body).results.id;
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${base}${gw.api}/repo/s3/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: adminAuth() } }, resolve).on('error', reject),
      );
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-length']).toBe(String(BIG_BYTES));
      const received = createHash('sha256');
      let bytes = 0;
      for await (const c of res) {
        received.update(c as Buffer);
        bytes += (c as Buffer).length;
      }
      expect(bytes).toBe(BIG_BYTES);
      expect(received.digest('hex')).toBe(sent.digest('hex'));
    } finally {
      clearInterval(sampler);
    }
    // Parts of 5 MiB, 4 in flight, plus socket and stream buffers, in one process with the test's own
    // reading and writing: far below the object whatever its size. A run of minutes (5 GiB) lets V8's
    // heap settle higher before it collects (measured: 187 MiB over 5 GiB, under 160 MiB over 256 MiB),
    // hence the second bound; it is still under 5 % of that object.
    expect(peak).toBeLessThan(BIG_BYTES > 1024 * MiB ? 256 * MiB : 160 * MiB);
  });

  it('copies fs → S3 and S3 → fs with a job, byte for byte', async () => {
    const tree: Record<string, Buffer> = { 'a.txt': Buffer.from('alpha'), 'sub/b b+.bin': randomBytes(7 * MiB), 'sub/deeper/ü.txt': Buffer.from('ü') };
    const repo = path.join(configDir, 'repository');
    for (const [rel, bytes] of Object.entries(tree)) {
      fs.mkdirSync(path.dirname(path.join(repo, 'in', rel)), { recursive: true });
      fs.writeFileSync(path.join(repo, 'in', rel), bytes);
    }
    const there = await defineJob(gw, { jobName: 'fs-to-s3', source: { connectorId: 'fs', folderPath: '/in', recursive: true }, target: { connectorId: 's3', folderPath: '/jobs/out' } });
    await call(gw, there, 'start');
    expect((await waitStatus(gw, there, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).status).toBe('COMPLETED');
    for (const [rel, bytes] of Object.entries(tree)) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `jobs/out/${rel}` }));
      expect({ rel, sha: sha(Buffer.from(await object.Body!.transformToByteArray())) }).toEqual({ rel, sha: sha(bytes) });
    }
    const back = await defineJob(gw, { jobName: 's3-to-fs', source: { connectorId: 's3', folderPath: '/jobs/out', recursive: true }, target: { connectorId: 'fs', folderPath: '/back' } });
    await call(gw, back, 'start');
    expect((await waitStatus(gw, back, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).status).toBe('COMPLETED');
    for (const [rel, bytes] of Object.entries(tree)) expect({ rel, sha: sha(fs.readFileSync(path.join(repo, 'back', rel))) }).toEqual({ rel, sha: sha(bytes) });
  });

  describe('user files on S3', () => {
    const seed = async (name: string, bytes: Buffer) => {
      fs.writeFileSync(path.join(configDir, 'repository', name), bytes);
      return (await api('get', 'idbypath', { folderPath: '/', fileName: name }, 'fs').expect(200)).body.results.id as string;
    };
    const download = (id: string, headers: Record<string, string> = {}) => {
      let req = gw.http().get(`${gw.api}/files/user/download`).query({ id }).set('Authorization', alice.auth);
      for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
      return req.buffer(true).parse(rawBody);
    };

    it('writes an export as an object of the bucket, serves it whole and by Range, and deletes it', async () => {
      const a = await seed('export-a.txt', Buffer.from('first entry'));
      const b = await seed('export-b.bin', randomBytes(6 * MiB));
      const link = await startBatch(gw, alice, [{ connId: 'fs', id: a }, { connId: 'fs', id: b }]);
      const file = await waitForExport(gw, alice, link.docId);
      expect(file).toMatchObject({ state: 'ready', ready: true });
      const head = await s3.send(new HeadObjectCommand({ Bucket: exportsBucket, Key: `user-files/${link.docId}` }));
      expect(head.ContentLength).toBe(file.size);
      expect(fs.existsSync(path.join(gw.dataDir, 'user-files', link.docId))).toBe(false);

      const whole = (await download(link.docId).expect(200)).body as Buffer;
      const direct = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: exportsBucket, Key: `user-files/${link.docId}` }))).Body!.transformToByteArray());
      expect(sha(whole)).toBe(sha(direct));
      expect(whole.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
      const part = await download(link.docId, { Range: 'bytes=100-5242979' }).expect(206);
      expect(part.headers['content-range']).toBe(`bytes 100-5242979/${file.size}`);
      expect(sha(part.body as Buffer)).toBe(sha(whole.subarray(100, 5242980)));

      await gw.http().delete(`${gw.api}/files/user/delete`).query({ id: link.docId }).set('Authorization', alice.auth).expect(200);
      const gone = await s3.send(new HeadObjectCommand({ Bucket: exportsBucket, Key: `user-files/${link.docId}` })).then(
        () => 'present',
        (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
      );
      expect(gone).toBe(404);
    });

    it('aborts the multipart upload of a stopped export: neither object nor parts remain', async () => {
      const big = await seed('export-big.bin', randomBytes(12 * MiB));
      const held = await seed('export-held.txt', Buffer.from('held back'));
      const gate = new StreamGate(connector(gw, 'fs'), [held]);
      try {
        const link = await startBatch(gw, alice, [{ connId: 'fs', id: big }, { connId: 'fs', id: held }]);
        const key = `user-files/${link.docId}`;
        await waitFor(async () => ((await uploads(exportsBucket, key)).length > 0 && gate.count > 0 ? true : undefined), 'the export to be uploading', 60_000);
        await gw.http().delete(`${gw.api}/files/user/stop`).query({ id: link.docId }).set('Authorization', alice.auth).expect(200);
        expect(await uploads(exportsBucket, key)).toEqual([]);
        const head = await s3.send(new HeadObjectCommand({ Bucket: exportsBucket, Key: key })).then(
          () => 'present',
          (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
        );
        expect(head).toBe(404);
      } finally {
        gate.restore();
      }
    });
  });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

