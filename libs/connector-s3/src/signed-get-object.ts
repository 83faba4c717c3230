import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { ContentTransport, readSmall, type ContentAnswer, type LentTarget } from '@gateway/content-transport';
import { SignatureV4 } from '@smithy/signature-v4';
import type { S3ConnectionParams } from './client';

/**
 * GetObject without the SDK, for content over plain HTTP: a GET signed here with the SDK's own signer
 * (Signature V4 with the client's credentials and region, unsigned payload) and sent by
 * @gateway/content-transport, whose reads are lent to the response writer (the SDK's handler reads
 * into a fresh buffer each time: README, figures). Errors come back as the S3ServiceException the SDK
 * would have thrown (name = S3's `<Code>`, the HTTP status), so `mapS3Error` maps both paths alike;
 * transient failures are retried as the SDK's standard strategy does (3 attempts).
 *
 * Only for `http://` endpoints; HTTPS endpoints (AWS itself) keep the SDK's GetObject (README).
 */
export class SignedGetObject {
  private readonly signer: SignatureV4;
  private readonly endpoint: URL;
  private readonly transport: ContentTransport;

  constructor(
    client: S3Client,
    private readonly params: Pick<S3ConnectionParams, 'endpoint' | 'forcePathStyle' | 'timeoutMs' | 'connectTimeoutMs'>,
    private readonly attempts = MAX_ATTEMPTS,
  ) {
    if (!SignedGetObject.applies(params)) throw new Error('SignedGetObject is for http:// endpoints only');
    this.endpoint = new URL(params.endpoint as string);
    // HTTP/1.0 as for CMIS: the answer is the bytes until the close (its Content-Length checked).
    this.transport = new ContentTransport({ idleTimeoutMs: params.timeoutMs, idleTimeout: (ms) => new S3ReadTimeout(ms), connectTimeoutMs: params.connectTimeoutMs, http10: true });
    // The client's own providers and hash: static keys, or the default chain the client resolved (refreshed as it refreshes them).
    this.signer = new SignatureV4({ service: 's3', region: client.config.region, credentials: client.config.credentials, sha256: client.config.sha256, uriEscapePath: false, applyChecksum: false });
  }

  /** Whether content GETs of this connection go through here: plain HTTP endpoints only. */
  static applies(params: Pick<S3ConnectionParams, 'endpoint'>): boolean {
    return params.endpoint !== undefined && new URL(params.endpoint).protocol === 'http:';
  }

  /** The object's bytes (a range of them: 206), as the SDK's GetObject would give them, or its error. */
  async open(bucket: string, key: string, options: { versionId?: string; range?: { start: number; end: number } } = {}): Promise<Readable> {
    for (let attempt = 1; ; attempt++) {
      let answer: ContentAnswer;
      try {
        answer = await this.send(bucket, key, options);
      } catch (e) {
        if (attempt < this.attempts && TRANSIENT_CODES.has((e as { code?: string }).code ?? '')) {
          await backOff(attempt);
          continue;
        }
        throw e;
      }
      if (answer.status === 200 || answer.status === 206) {
        if (options.range && answer.status !== 206) {
          answer.body.destroy();
          throw serviceException(502, 'RangeIgnored', 'The server answered the whole object to a Range request');
        }
        return answer.body;
      }
      const text = await readSmall(answer.body).catch(() => '');
      const error = errorOfAnswer(answer.status, text, answer.headers);
      if (attempt < this.attempts && RETRIED_STATUSES.has(answer.status)) {
        await backOff(attempt);
        continue;
      }
      throw error;
    }
  }

  /** Where the GET goes and what is signed, as the SDK addresses the object (path style or virtual host). */
  target(bucket: string, key: string, versionId?: string): { target: LentTarget; path: string; query: Record<string, string> } {
    const base = this.endpoint.pathname.replace(/\/+$/, '');
    const virtualHost = !this.params.forcePathStyle && virtualHostable(bucket, this.endpoint);
    const host = virtualHost ? `${bucket}.${this.endpoint.host}` : this.endpoint.host;
    const hostname = virtualHost ? `${bucket}.${this.endpoint.hostname}` : this.endpoint.hostname.replace(/^\[(.*)\]$/, '$1');
    const path = `${base}${virtualHost ? '' : `/${escapeUri(bucket)}`}/${keyPath(key)}`;
    const query: Record<string, string> = versionId !== undefined ? { versionId } : {};
    const search = Object.entries(query).map(([k, v]) => `${escapeUri(k)}=${escapeUri(v)}`).join('&');
    return { target: { secure: false, hostname, port: Number(this.endpoint.port || 80), host, path: search ? `${path}?${search}` : path }, path, query };
  }

  private async send(bucket: string, key: string, options: { versionId?: string; range?: { start: number; end: number } }): Promise<ContentAnswer> {
    const { target, path, query } = this.target(bucket, key, options.versionId);
    const headers: Record<string, string> = { host: target.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
    if (options.range) headers.range = `bytes=${options.range.start}-${options.range.end}`;
    const signed = await this.signer.sign({ method: 'GET', protocol: 'http:', hostname: target.hostname, port: target.port, path, query, headers });
    const { host: _host, ...sent } = signed.headers as Record<string, string>;
    return this.transport.get(target, sent);
  }
}

const MAX_ATTEMPTS = 3;
/** What the SDK's standard retry strategy retries: throttling and server errors, and connections that failed before an answer. */
const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/** The idle time-out, named and coded as the SDK's time-outs (mapS3Error: UpstreamTimeoutError). */
export class S3ReadTimeout extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'ETIMEDOUT';
  constructor(readonly ms: number) {
    super(`S3 sent nothing for ${ms} ms`);
  }
}

/** The SDK's back-off: a random delay up to 100 ms × 2^attempt. */
function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** attempt));
}

/** S3's URI encoding (the SDK's extendedEncodeURIComponent): every byte but A-Z a-z 0-9 - . _ ~ escaped. */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A key as a path: each '/'-separated segment escaped, the slashes kept (as the SDK's `{Key+}`). */
export function keyPath(key: string): string {
  return key.split('/').map(escapeUri).join('/');
}

/** As the SDK's endpoint rules: a DNS-compatible bucket on a named (not IP) host is addressed as a virtual host. */
function virtualHostable(bucket: string, endpoint: URL): boolean {
  if (isIP(endpoint.hostname.replace(/^\[(.*)\]$/, '$1')) !== 0) return false;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return false;
  return bucket.split('.').every((label) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(label));
}

/** An error answer as the exception the SDK would have thrown: `<Code>` as its name, `<Message>` as its message. */
export function errorOfAnswer(status: number, body: string, headers: Record<string, string> = {}): S3ServiceException {
  const code = xmlField(body, 'Code') ?? (status === 404 ? 'NotFound' : 'UnknownError');
  const message = xmlField(body, 'Message') ?? code;
  const error = serviceException(status, code, message);
  const requestId = headers['x-amz-request-id'];
  if (requestId) error.$metadata.requestId = requestId;
  return error;
}

function serviceException(status: number, name: string, message: string): S3ServiceException {
  return new S3ServiceException({ name, message, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}

function xmlField(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!m) return undefined;
  return m[1].replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] as string);
}
