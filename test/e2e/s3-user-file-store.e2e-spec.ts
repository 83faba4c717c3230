import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3UserFileStore } from '../../apps/api/src/files/s3-user-file.store';
import { createBucket, directClient, useS3Engine, type S3Engine, type S3EngineName } from '../contract/fixtures/s3-engine';

/**
 * What S3 does with an abort that comes while a part is still on its way, the reason an export stopped through
 * another node is left to the node building it (apps/api/src/files README, "Exports and restarts, on one node or
 * several"): here the part is half sent when the store removes the file, as a frozen builder's would be.
 */
const ENGINES = (process.env.GATEWAY_S3_E2E_ENGINES ?? 's3proxy,minio').split(',').map((s) => s.trim()).filter(Boolean) as S3EngineName[];
const MiB = 1024 * 1024;
const PREFIX = 'user-files/';

jest.setTimeout(120_000);

describe.each(ENGINES)('S3UserFileStore on %s: an abort while a part is on its way', (engineName) => {
  let engine: S3Engine;
  let s3: S3Client;
  let bucket: string;
  let store: S3UserFileStore;

  const uploadIds = async (key: string) => ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))).Uploads ?? []).filter((u) => u.Key === key).map((u) => u.UploadId);

  beforeAll(async () => {
    engine = await useS3Engine(engineName);
    s3 = directClient(engine.info);
    bucket = await createBucket(s3, 'store');
    const { endpoint, region, accessKeyId, secretAccessKey } = engine.info;
    store = new S3UserFileStore({
      kind: 's3',
      bucket,
      prefix: PREFIX,
      connection: { endpoint, region, accessKeyId, secretAccessKey, forcePathStyle: true, maxSockets: 8, connectTimeoutMs: 5000, timeoutMs: 30_000 },
      partBytes: 5 * MiB,
      partConcurrency: 1,
    });
  });

  afterAll(async () => {
    store?.onApplicationShutdown();
    s3?.destroy();
    await engine?.release();
  });

  it(
    engineName === 'minio'
      ? 'aborts the upload at once; the part, finished after, is refused'
      : 'refuses the abort and keeps the upload listed; the part lands, no abort reaches the upload any more, and the sweep does not count it removed',
    async () => {
      const id = randomUUID();
      const key = PREFIX + id;
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      const body = new PassThrough();
      const drained = body.write(Buffer.alloc(2.5 * MiB, 1)) ? Promise.resolve() : once(body, 'drain');
      const part = s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: body, ContentLength: 5 * MiB })).then(
        () => 'stored',
        (e: { name?: string }) => e.name,
      );
      await drained; // the first half is on the socket
      await new Promise((r) => setTimeout(r, 300)); // and read by the server

      await store.remove(id);
      const afterRemove = await uploadIds(key);
      body.end(Buffer.alloc(2.5 * MiB, 2));
      const partOutcome = await part;

      if (engineName === 'minio') {
        expect([afterRemove, partOutcome]).toEqual([[], 'NoSuchUpload']);
        expect(await uploadIds(key)).toEqual([]);
        return;
      }
      expect([afterRemove, partOutcome]).toEqual([[UploadId], 'stored']);
      await store.remove(id);
      expect(await uploadIds(key)).toEqual([UploadId]);
      expect(await store.removeAllExcept(async () => new Set(), async () => new Set())).toEqual([]);
      expect(await uploadIds(key)).toEqual([UploadId]);
    },
  );
});
