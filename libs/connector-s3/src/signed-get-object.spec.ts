import { createHash, createHmac } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { NotFoundError, UpstreamError, UpstreamUnavailableError } from '@gateway/connector-api';
import { readSmall } from '@gateway/content-transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { createS3Client, parseConnectionParams } from './client';
import { SignedGetObject } from './signed-get-object';
import { mapS3Error } from './s3.connector';

/**
 * The S3 GET without the SDK, against a local HTTP server that checks each request's Signature V4 as
 * S3 does (recomputed from what arrived on the wire, with the secret) and answers as each test needs.
 * The addressing is compared with the request the SDK itself builds for the same object, and the
 * errors with what mapS3Error makes of the SDK's exceptions for the same answers.
 */
const ACCESS_KEY = 'AKIDTEST';
const SECRET = 'test-secret-key';
const REGION = 'eu-west-3';

/** The verifier's own hash on node:crypto, independent of the client's. */
class VerifierSha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', binary(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(binary(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function binary(data: string | ArrayBuffer | ArrayBufferView): string | Buffer {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);
}

const verifier = new SignatureV4({ service: 's3', region: REGION, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, sha256: VerifierSha256, uriEscapePath: false });

/** Whether the request's Authorization is the signature of what arrived, as S3 checks it. */
async function signatureHolds(req: http.IncomingMessage): Promise<boolean> {
  const auth = String(req.headers.authorization ?? '');
  const signedNames = /SignedHeaders=([^,]+)/.exec(auth)?.[1].split(';') ?? [];
  const date = String(req.headers['x-amz-date'] ?? '');
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!m || signedNames.length === 0 || !signedNames.includes('host')) return false;
  const [path, search = ''] = (req.url ?? '').split('?');
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search)) query[k] = v;
  const headers: Record<string, string> = {};
  for (const name of signedNames) headers[name] = String(req.headers[name] ?? '');
  const expected = await verifier.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: String(req.headers.host).split(':')[0], path, query, headers },
    { signingDate: new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) },
  );
  return expected.headers.authorization === auth;
}

const errorXml = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>r1</RequestId></Error>`;

describe('SignedGetObject', () => {
  let server: http.Server;
  let seen: Array<{ url: string; range?: string; signed: boolean }>;
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  let endpoint: string;
  let sdk: S3Client;

  beforeEach(async () => {
    seen = [];
    server = http.createServer((req, res) => {
      void signatureHolds(req).then((signed) => {
        seen.push({ url: req.url ?? '', range: req.headers.range, signed });
        if (!signed) {
          res.writeHead(403, { 'content-type': 'application/xml' });
          return void res.end(errorXml('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.'));
        }
        handle(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sdk = createS3Client(connection(endpoint));
  });

  afterEach(async () => {
    sdk.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const connection = (url: string, extra: Record<string, unknown> = {}) =>
    parseConnectionParams({ endpoint: url, region: REGION, accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, timeoutMs: 5000, ...extra });
  const raw = (attempts?: number) => new SignedGetObject(sdk, connection(endpoint), attempts);

  /** The request the SDK builds for GetObject (signed, not sent). */
  async function sdkRequest(client: S3Client, bucket: string, key: string, versionId?: string): Promise<{ hostname: string; path: string; query: Record<string, string> }> {
    class Captured extends Error {}
    let request: { hostname: string; path: string; query: Record<string, string> } | undefined;
    const command = new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId });
    command.middlewareStack.add(
      (() => async (args: { request: unknown }) => {
        request = args.request as typeof request;
        throw new Captured('captured');
      }) as never,
      { step: 'finalizeRequest', priority: 'low' },
    );
    await client.send(command).catch((e) => {
      if (!(e instanceof Captured)) throw e;
    });
    return request!;
  }

  const ODD_KEYS = ['with space.txt', 'plus+sign.txt', 'percent%20literal.txt', 'été ✓ 日本.txt', "quote's (x)*!~.txt", 'deep/level 1/leaf+%.txt', 'dots/../kept/./as-is', 'a=b&c;d,e@f$g:h[i]#j?k'];

  it('addresses keys with spaces, +, %, Unicode, reserved characters and dot segments as the SDK does, and the server accepts the signature', async () => {
    const body = 'the bytes';
    handle = (_req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    };
    for (const key of ODD_KEYS) {
      const sdkSide = await sdkRequest(sdk, 'bucket-one', key);
      const ours = raw().target('bucket-one', key);
      expect({ key, path: ours.path }).toEqual({ key, path: sdkSide.path });
      expect(await readSmall(await raw().open('bucket-one', key))).toBe(body);
      // What arrived is that path byte for byte, and its signature held.
      expect(seen.at(-1)).toEqual({ url: sdkSide.path, signed: true, range: undefined });
      expect(decodeURIComponent(seen.at(-1)!.url.replace(/^\/bucket-one\//, ''))).toBe(key);
    }
  });

  it('signs the version id as a query parameter, as the SDK sends it', async () => {
    handle = (_req, res) => res.end('v');
    const versionId = 'null+/=v1 é';
    const sdkSide = await sdkRequest(sdk, 'bucket-one', 'k', versionId);
    // (The SDK adds x-id=GetObject, a marker of its own that S3 ignores.)
    expect(raw().target('bucket-one', 'k', versionId).query).toEqual({ versionId: sdkSide.query.versionId });
    expect(await readSmall(await raw().open('bucket-one', 'k', { versionId }))).toBe('v');
    expect(seen[0].signed).toBe(true);
    expect(new URLSearchParams(seen[0].url.split('?')[1]).get('versionId')).toBe(versionId);
  });

  it('uses a virtual host where the SDK does (named endpoint, DNS-compatible bucket, no forcePathStyle) and the path style elsewhere', async () => {
    for (const [url, bucket, forcePathStyle] of [
      ['http://s3.internal:9000', 'plain-bucket', false],
      ['http://s3.internal:9000', 'dotted.bucket', false],
      ['http://s3.internal:9000', 'plain-bucket', true],
      ['http://127.0.0.1:9000', 'plain-bucket', false],
      ['http://s3.internal:9000/base', 'plain-bucket', false],
      ['http://s3.internal:9000/base', 'plain-bucket', true],
    ] as const) {
      const params = connection(url, { forcePathStyle });
      const client = createS3Client(params);
      try {
        const sdkSide = await sdkRequest(client, bucket, 'a b/c+d');
        const { target, path } = new SignedGetObject(client, params).target(bucket, 'a b/c+d');
        expect({ url, bucket, forcePathStyle, hostname: target.hostname, path }).toEqual({ url, bucket, forcePathStyle, hostname: sdkSide.hostname, path: sdkSide.path });
      } finally {
        client.destroy();
      }
    }
  });

  it('asks for a Range and gives exactly its bytes; a server that ignores the Range is an error, not the whole object', async () => {
    const object = Buffer.from('0123456789abcdefghij');
    let honour = true;
    handle = (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (!m || !honour) {
        res.writeHead(200, { 'content-length': String(object.length) });
        return void res.end(object);
      }
      const part = object.subarray(+m[1], +m[2] + 1);
      res.writeHead(206, { 'content-length': String(part.length), 'content-range': `bytes ${m[1]}-${m[2]}/${object.length}` });
      res.end(part);
    };
    expect(await readSmall(await raw().open('b-1', 'k', { range: { start: 5, end: 14 } }))).toBe('56789abcde');
    expect(seen[0]).toMatchObject({ range: 'bytes=5-14', signed: true });
    honour = false;
    const e = await raw().open('b-1', 'k', { range: { start: 5, end: 14 } }).catch((x: unknown) => x);
    expect(mapS3Error(e, 'id-1')).toBeInstanceOf(UpstreamError);
  });

  it('fails the body of an answer cut before its Content-Length instead of ending it short', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-length': '1000000' });
      res.write(Buffer.alloc(4096, 1), () => res.socket?.destroy());
    };
    const body: Readable = await raw().open('b-1', 'k');
    await expect(readSmall(body)).rejects.toThrow(/closed before the answer was complete/);
  });

  it.each([
    [404, 'NoSuchKey', 'The specified key does not exist.', NotFoundError],
    [404, 'NoSuchVersion', 'The specified version does not exist.', NotFoundError],
    [404, 'NoSuchBucket', 'The specified bucket does not exist', NotFoundError],
    [403, 'AccessDenied', 'Access Denied.', UpstreamError],
    [416, 'InvalidRange', 'The requested range is not satisfiable', UpstreamError],
    [400, 'InvalidArgument', 'Invalid version id specified', UpstreamError],
    [503, 'SlowDown', 'Please reduce your request rate.', UpstreamUnavailableError],
    [500, 'InternalError', 'We encountered an internal error, please try again.', UpstreamError],
  ])('maps an answer %i %s to the error the SDK path gives', async (status, code, message, kind) => {
    handle = (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': 'r1' });
      res.end(errorXml(code, message));
    };
    const viaSdk = await sdk.send(new GetObjectCommand({ Bucket: 'b-1', Key: 'k' })).then(
      () => undefined,
      (e: unknown) => mapS3Error(e, 'id-1') as Error,
    );
    const viaRaw = await raw().open('b-1', 'k').then(
      () => undefined,
      (e: unknown) => mapS3Error(e, 'id-1') as Error,
    );
    expect(viaRaw).toBeInstanceOf(kind);
    expect({ type: viaRaw?.constructor, message: viaRaw?.message, details: (viaRaw as UpstreamError).details }).toEqual({
      type: viaSdk?.constructor,
      message: viaSdk?.message,
      details: (viaSdk as UpstreamError).details,
    });
  });

  it('retries server errors and throttling as the SDK does (3 attempts), then gives up', async () => {
    let failures = 2;
    handle = (_req, res) => {
      if (failures-- > 0) {
        res.writeHead(503, { 'content-type': 'application/xml' });
        return void res.end(errorXml('SlowDown', 'Please reduce your request rate.'));
      }
      res.end('at last');
    };
    expect(await readSmall(await raw().open('b-1', 'k'))).toBe('at last');
    expect(seen).toHaveLength(3);
    failures = 3;
    seen = [];
    await expect(raw().open('b-1', 'k').catch((e: unknown) => Promise.reject(mapS3Error(e, 'id-1')))).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(seen).toHaveLength(3);
  });

  it('is for plain-HTTP endpoints only', () => {
    expect(SignedGetObject.applies(connection('http://s3.internal:9000'))).toBe(true);
    expect(SignedGetObject.applies(connection('https://s3.internal'))).toBe(false);
    expect(SignedGetObject.applies(parseConnectionParams({ region: REGION }))).toBe(false);
  });
});
