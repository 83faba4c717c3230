import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ContentTransport } from '@gateway/content-transport';
import { GatewayError, UpstreamError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/errors';
import { createAgents, type ConnectorAgents } from './agent';
import { DEFAULT_RETRY, decideThrottleRetry, isThrottle, retryAfterSeconds, type RetryOptions } from './retry';
import { mapServiceError, parseServiceError, type ServiceErrorContext } from './service-errors';

/** Where bearer tokens come from (MsalTokenProvider); invalidate() forces a fresh one after a 401. */
export interface TokenSource {
  getToken(): Promise<string>;
  invalidate(): void;
}

/**
 * A request body. Buffers (written in WRITE_SLICE_BYTES slices) and strings are replayable, so throttled or 401 answers can be retried;
 * a stream factory is called once per attempt (it must give the same bytes each time). A bare
 * Readable is sent once: a retry is impossible after its bytes went out, so a throttling answer
 * to it surfaces as UpstreamThrottledError at once.
 */
export type RequestBody = Buffer | string | Readable | (() => Readable);

export interface MicrosoftRequest {
  method: string;
  url: string;
  headers?: Record<string, string | number>;
  body?: RequestBody;
  /** Send the bearer token (default true). Off for Graph's pre-authenticated download and upload URLs. */
  auth?: boolean;
  /** Statuses besides 2xx/3xx handed back to the caller instead of thrown (e.g. 404 for an existence check, 416). */
  accept?: number[];
  /** How errors name the item and parameter. */
  errorContext?: Omit<ServiceErrorContext, 'service'>;
  signal?: AbortSignal;
  /** A content download (a GET without body): sent through @gateway/content-transport (README: downloads). */
  content?: boolean;
}

export interface MicrosoftResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body, unread: content is streamed on from here. */
  body: Readable;
}

export interface MicrosoftHttpClientOptions {
  /** Named in error messages: 'SharePoint', 'Microsoft Graph'. */
  service: string;
  connectorType: string;
  tokens?: TokenSource;
  caFile?: string;
  /** Throttling retries (429/503), default 4. */
  maxRetries?: number;
  maxRetryWaitSeconds?: number;
  connectTimeoutMs?: number;
  /** No byte in either direction for this long fails the call (also mid-download). */
  idleTimeoutMs?: number;
  userAgent?: string;
  /** Injected by tests; defaults to a real timer. */
  sleep?: (ms: number) => Promise<void>;
  agents?: ConnectorAgents;
}

/** Metadata answers are small; anything bigger is not an answer we understand. */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
/**
 * Buffer bodies are handed to the socket this much at a time, the next slice only after `drain`. One
 * write of a whole upload chunk (10 MiB) would have TLS encrypt all of it at once into memory of its
 * own, held until the network took it: a second copy of every chunk (README: memory).
 */
export const WRITE_SLICE_BYTES = 256 * 1024;

/**
 * The HTTPS client of the Microsoft connectors, on node:https rather than fetch: bodies stream both
 * ways through a keep-alive agent that trusts a per-connector CA, and the socket's idle timer
 * covers the whole exchange, a download's body included.
 */
export class MicrosoftHttpClient {
  readonly agents: ConnectorAgents;
  private readonly retry: RetryOptions;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly userAgent: string;
  /** Content downloads' transport (its TLS context and sessions), made on the first download. */
  private contentTransport?: ContentTransport;

  constructor(private readonly options: MicrosoftHttpClientOptions) {
    this.agents = options.agents ?? createAgents({ caFile: options.caFile });
    this.retry = {
      ...DEFAULT_RETRY,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.maxRetryWaitSeconds !== undefined ? { maxWaitSeconds: options.maxRetryWaitSeconds } : {}),
    };
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
    this.sleep = options.sleep ?? ((ms) => sleep(ms));
    // Microsoft throttles undecorated traffic first (ISV decoration: NONISV|Company|App/version).
    this.userAgent = options.userAgent ?? 'NONISV|ContentGateway|content-gateway/0.1';
  }

  /** Sends the request with the retry policy; 2xx/3xx (and `accept`) come back unread, the rest is thrown as typed errors. */
  async request(req: MicrosoftRequest): Promise<MicrosoftResponse> {
    const useAuth = req.auth !== false && this.options.tokens !== undefined;
    let refreshedOn401 = false;
    const replayable = !isOneShot(req.body);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string | number> = { 'user-agent': this.userAgent, ...req.headers };
      if (useAuth) headers.authorization = `Bearer ${await this.options.tokens!.getToken()}`;
      const res = await this.send(req, headers);
      const status = res.status;
      if ((status >= 200 && status < 400) || req.accept?.includes(status)) return res;

      if (status === 401 && useAuth && !refreshedOn401 && replayable) {
        await drain(res.body);
        refreshedOn401 = true;
        this.options.tokens!.invalidate();
        attempt--; // the refresh is not a throttling retry
        continue;
      }
      const advised = retryAfterSeconds(res.headers);
      if (isThrottle(status)) {
        const decision = decideThrottleRetry(attempt, advised, this.retry);
        if (decision.retry && replayable) {
          await drain(res.body);
          await this.sleep(decision.waitSeconds * 1000);
          continue;
        }
        const text = await readText(res.body, MAX_ERROR_BYTES).catch(() => '');
        const failure = parseServiceError(status, text, decision.retry ? advised ?? 1 : decision.retryAfterSeconds);
        throw mapServiceError(failure, this.context(req));
      }
      const text = await readText(res.body, MAX_ERROR_BYTES).catch(() => '');
      throw mapServiceError(parseServiceError(status, text, advised), this.context(req));
    }
  }

  /** request() and the JSON body of the answer. */
  async json<T = unknown>(req: MicrosoftRequest): Promise<{ status: number; headers: http.IncomingHttpHeaders; data: T }> {
    const res = await this.request({ ...req, headers: { accept: 'application/json', ...req.headers } });
    const text = await readText(res.body, MAX_JSON_BYTES);
    if (text.trim() === '') return { status: res.status, headers: res.headers, data: undefined as T };
    try {
      return { status: res.status, headers: res.headers, data: JSON.parse(text) as T };
    } catch {
      throw new UpstreamError(`${this.options.service} sent an answer that is not JSON (HTTP ${res.status})`, { upstreamStatus: res.status });
    }
  }

  close(): void {
    this.agents.https.destroy();
    this.agents.http.destroy();
  }

  private context(req: MicrosoftRequest): ServiceErrorContext {
    return { connectorType: this.options.connectorType, ...req.errorContext, service: this.options.service };
  }

  private send(req: MicrosoftRequest, headers: Record<string, string | number>): Promise<MicrosoftResponse> {
    if (req.content && req.body === undefined && req.method.toUpperCase() === 'GET') return this.sendContent(req, headers);
    const url = new URL(req.url);
    const isHttps = url.protocol === 'https:';
    const body = typeof req.body === 'function' ? req.body() : req.body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) headers['content-length'] = Buffer.byteLength(body);
    else if (body === undefined && ['POST', 'PUT', 'PATCH', 'MERGE'].includes(req.method.toUpperCase())) headers['content-length'] = 0;
    return new Promise<MicrosoftResponse>((resolve, reject) => {
      let settled = false;
      const fail = (e: unknown) => {
        if (settled) return;
        settled = true;
        reject(this.networkError(e, url));
      };
      const outgoing = (isHttps ? https : http).request(
        url,
        { method: req.method, headers, agent: isHttps ? this.agents.https : this.agents.http, signal: req.signal },
        (res) => {
          settled = true;
          incoming = res;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
        },
      );
      let incoming: http.IncomingMessage | undefined;
      outgoing.setTimeout(this.idleTimeoutMs, () => {
        const e = new UpstreamTimeoutError(`${this.options.service} sent nothing for ${this.idleTimeoutMs} ms`);
        // Once the answer has begun, its reader must see the time-out rather than a bare ECONNRESET.
        if (incoming) incoming.destroy(e);
        outgoing.destroy(e);
      });
      outgoing.on('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(
          () => outgoing.destroy(new UpstreamTimeoutError(`Could not connect to ${this.options.service} at ${url.host} within ${this.connectTimeoutMs} ms`)),
          this.connectTimeoutMs,
        );
        socket.once(isHttps ? 'secureConnect' : 'connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      outgoing.on('error', fail);
      if (body === undefined) outgoing.end();
      else if (typeof body === 'string') outgoing.end(body);
      else if (Buffer.isBuffer(body)) writeInSlices(outgoing, body);
      else {
        body.on('error', (e) => outgoing.destroy(e));
        body.pipe(outgoing);
      }
    });
  }

  private async sendContent(req: MicrosoftRequest, headers: Record<string, string | number>): Promise<MicrosoftResponse> {
    const url = new URL(req.url);
    this.contentTransport ??= new ContentTransport({
      // The agent's trust: the public roots and the connector's caFile (agent.ts).
      ca: this.agents.ca,
      connectTimeoutMs: this.connectTimeoutMs,
      connectTimeout: () => new UpstreamTimeoutError(`Could not connect to ${this.options.service} within ${this.connectTimeoutMs} ms`),
      idleTimeoutMs: this.idleTimeoutMs,
      idleTimeout: () => new UpstreamTimeoutError(`${this.options.service} sent nothing for ${this.idleTimeoutMs} ms`),
    });
    try {
      const answer = await this.contentTransport.get(url, headers, req.signal);
      return { status: answer.status, headers: answer.headers, body: answer.body };
    } catch (e) {
      throw this.networkError(e, url);
    }
  }

  private networkError(e: unknown, url: URL): GatewayError {
    if (e instanceof GatewayError) return e;
    const err = e as NodeJS.ErrnoException;
    if (err?.name === 'AbortError') return new UpstreamUnavailableError(`The call to ${this.options.service} was aborted`, {}, e);
    return new UpstreamUnavailableError(`${this.options.service} at ${url.host} is unreachable (${err?.code ?? err?.message ?? 'network error'})`, { host: url.host }, e);
  }
}

function isOneShot(body: RequestBody | undefined): boolean {
  return body !== undefined && typeof body !== 'function' && typeof body !== 'string' && !Buffer.isBuffer(body);
}

/** Writes the buffer in slices of at most WRITE_SLICE_BYTES, each after the socket drained the one before, then ends. */
function writeInSlices(outgoing: http.ClientRequest, buffer: Buffer): void {
  let offset = 0;
  const more = (): void => {
    while (offset < buffer.length) {
      if (outgoing.destroyed) return;
      const slice = buffer.subarray(offset, offset + WRITE_SLICE_BYTES);
      offset += slice.length;
      if (!outgoing.write(slice)) return void outgoing.once('drain', more);
    }
    outgoing.end();
  };
  more();
}

/** Reads a small answer (metadata, error bodies) whole; refuses more than `limit` bytes. */
export async function readText(stream: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new UpstreamError(`An answer of more than ${limit} bytes was not expected here`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Consumes an unwanted answer so its keep-alive socket returns to the pool. */
export async function drain(stream: Readable): Promise<void> {
  stream.resume();
  await new Promise<void>((resolve) => {
    if (stream.readableEnded) return resolve();
    stream.once('end', resolve);
    stream.once('error', () => resolve());
    stream.once('close', () => resolve());
  });
}

