import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { MultipartWriter } from '@gateway/connector-s3';
import { createBucket, directClient, useS3Engine, type S3Engine, type S3EngineName } from '../contract/fixtures/s3-engine';

/**
 * The writer behind the S3 connector's uploads and the S3 user-file store's exports, against the real
 * engines: the bytes S3 ends up with, one PUT versus a multipart upload, and what a failure leaves
 * behind (nothing). Through the gateway, test/e2e/s3.e2e-spec.ts covers the same from the outside.
 */
const ENGINES = (process.env.GATEWAY_S3_E2E_ENGINES ?? 's3proxy,minio').split(',').map((s) => s.trim()).filter(Boolean) as S3EngineName[];
const MiB = 1024 * 1024;
const PART = 5 * MiB;

jest.setTimeout(120_000);

/** `size` deterministic bytes in chunks of `chunk` bytes (not a divisor of the part size), every MiB numbered. */
function content(size: number, chunk = 333 * 1024, failAfter?: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && sent >= failAfter) return void this.destroy(new Error('the source broke'));
      if (sent >= size) return void this.push(null);
      const n = Math.min(chunk, size - sent);
      const bytes = Buffer.alloc(n);
      for (let i = 0; i < n; i++) bytes[i] = ((sent + i) * 31 + ((sent + i) >> 20)) & 0xff;
      sent += n;
      this.push(bytes);
    },
  });
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const closed = (w: MultipartWriter) => (w.closed ? Promise.resolve() : new Promise((resolve) => w.once('close', resolve)));

describe.each(ENGINES)('MultipartWriter on %s', (engineName) => {
  let engine: S3Engine;
  let s3: S3Client;
  let bucket: string;
  let n = 0;

  const writer = (key: string, concurrency = 2) => new MultipartWriter(s3, { Bucket: bucket, Key: key, ContentType: 'application/x-test' }, { partBytes: PART, concurrency });
  const object = async (key: string) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());
  const status = (key: string) =>
    s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => 200,
      (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
    );
  const uploads = async (key: string) => ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))).Uploads ?? []).filter((u) => u.Key === key);
  const expected = async (size: number) => {
    const chunks: Buffer[] = [];
    for await (const c of content(size)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };

  beforeAll(async () => {
    engine = await useS3Engine(engineName);
    s3 = directClient(engine.info);
    bucket = await createBucket(s3, 'writer');
  });

  afterAll(async () => {
    s3?.destroy();
    await engine?.release();
  });

  it.each([
    ['nothing', 0],
    ['less than a part', 100_000],
    ['exactly one part', PART],
    ['one byte more than a part', PART + 1],
    ['several parts and a short last one', 3 * PART + 12_345],
  ])('stores %s byte for byte, with the content type', async (_what, size) => {
    const key = `objects/${++n}-${size}.bin`;
    await pipeline(content(size), writer(key));
    const stored = await object(key);
    expect(stored.length).toBe(size);
    expect(sha(stored)).toBe(sha(await expected(size)));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentType).toBe('application/x-test');
    expect(await uploads(key)).toEqual([]);
  });

  it('sends up to one part in a single PUT and more as a multipart upload of part-sized parts', async () => {
    const single = `shape/${++n}-single.bin`;
    const multi = `shape/${++n}-multi.bin`;
    await pipeline(content(PART), writer(single));
    await pipeline(content(2 * PART + 1), writer(multi));
    // A multipart object's ETag ends in -<parts> (on both engines); a PUT's does not.
    const shape = async (key: string) => {
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { multipartParts: Number(/-(\d+)"?$/.exec(head.ETag ?? '')?.[1] ?? 0) };
    };
    expect(await shape(single)).toEqual({ multipartParts: 0 });
    expect(await shape(multi)).toEqual({ multipartParts: 3 });
  });

  it('leaves neither object nor parts when its source breaks after parts were sent', async () => {
    const key = `broken/${++n}.bin`;
    const w = writer(key);
    await expect(pipeline(content(40 * MiB, 333 * 1024, 3 * PART), w)).rejects.toThrow('the source broke');
    await closed(w);
    expect(await uploads(key)).toEqual([]);
    expect(await status(key)).toBe(404);
  });

  it('aborts its multipart upload when destroyed mid-way, and finishes closing only after that', async () => {
    const key = `destroyed/${++n}.bin`;
    const w = writer(key);
    const source = content(200 * MiB);
    source.pipe(w);
    for (let deadline = Date.now() + 60_000; (await uploads(key)).length === 0; ) {
      if (Date.now() > deadline) throw new Error('the multipart upload did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    source.unpipe(w);
    source.destroy();
    w.destroy();
    await closed(w);
    expect(await uploads(key)).toEqual([]);
    expect(await status(key)).toBe(404);
  });

  it('fails, rather than completing a short object, when S3 refuses a part', async () => {
    const key = `refused/${++n}.bin`;
    // The source holds after two parts and a bit, until someone else has aborted the upload; then every
    // later part is refused (NoSuchUpload). The abort is sent only once S3 has answered both parts, as
    // S3Proxy answers 500 to an abort that races a part it is still writing (and has no ListParts).
    let partsStored = 0;
    const observed = {
      send: async (command: Parameters<S3Client['send']>[0]) => {
        const answer = await s3.send(command);
        if (command instanceof UploadPartCommand) partsStored++;
        return answer;
      },
    } as unknown as S3Client;
    const w = new MultipartWriter(observed, { Bucket: bucket, Key: key }, { partBytes: PART, concurrency: 1 });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    async function* gated() {
      yield* content(2 * PART + MiB);
      await released;
      yield* content(20 * MiB);
    }
    const done = pipeline(Readable.from(gated()), w);
    done.catch(() => undefined); // awaited below; a failure before that must not leave it unobserved
    for (let deadline = Date.now() + 60_000; partsStored < 2; await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > deadline) throw new Error('the first two parts were not stored');
    }
    const [upload] = await uploads(key);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId }));
    release();
    await expect(done).rejects.toThrow();
    await closed(w);
    expect(await status(key)).toBe(404);
    expect(await uploads(key)).toEqual([]);
  });
});
