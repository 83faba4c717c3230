/**
 * Fault switches and the request log of a simulator, set by tests over HTTP:
 *
 *   POST   /_simulator/faults    JSON, merged into the current switches:
 *            {"throttle":{"count":N,"status":429|503,"retryAfterSeconds":S,"pathContains":"..."}}
 *                                 the next N API calls (matching pathContains when given) answer
 *                                 status + Retry-After with the service's throttling body
 *            {"delay":{"ms":M,"count":N}}   the next N calls (all, when count is absent) wait M ms first
 *            {"dropDownload":{"afterBytes":B,"count":N}}   the next N content downloads send B bytes of
 *                                 the body and then destroy the connection
 *            {"expireTokens":true}  every token issued so far becomes invalid (the next call gets 401)
 *   GET    /_simulator/faults    the switches still pending
 *   DELETE /_simulator/faults    clears every switch
 *   GET    /_simulator/requests  {"requests":[{"method","path","status","at"}]} in arrival order
 *                                 (`path` includes the query string); ?since=<index> for the tail only
 *   DELETE /_simulator/requests  empties the log
 *   GET    /_simulator/health    200 once the server listens (the harness's ready probe)
 *
 * Identity routes (token, keys, metadata) are never throttled or delayed unless a switch names them
 * with pathContains: throttling is what the APIs do, and the tests aim at the connectors' retries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';

export interface ThrottleSwitch {
  count: number;
  status?: 429 | 503;
  retryAfterSeconds?: number;
  pathContains?: string;
}

export interface DelaySwitch {
  ms: number;
  count?: number;
}

export interface DropSwitch {
  afterBytes: number;
  count?: number;
}

export interface FaultSwitches {
  throttle?: ThrottleSwitch;
  delay?: DelaySwitch;
  dropDownload?: DropSwitch;
  expireTokens?: boolean;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
  at: string;
  /** Whether the request carried an Authorization header (download/upload URLs must not get one). */
  authorization: boolean;
  /** The request's Range header, when it had one. */
  range?: string;
}

/** What the service answers when a throttle switch fires: its own error body. */
export type ThrottleBody = (status: 429 | 503, retryAfterSeconds: number) => unknown;

const LOG_LIMIT = 50_000;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | number> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? {} : JSON.parse(text);
}

function positiveInt(value: unknown, name: string, allowZero = false): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new Error(`${name} must be a${allowZero ? ' non-negative' : ' positive'} integer`);
  }
  return value;
}

export class Faults {
  private throttle?: Required<Omit<ThrottleSwitch, 'pathContains'>> & { pathContains?: string };
  private delay?: DelaySwitch;
  private drop?: Required<DropSwitch>;
  private readonly log: LoggedRequest[] = [];
  private logOffset = 0;

  /** @param onExpireTokens called for {"expireTokens":true} (the identity provider's expireAll). */
  constructor(private readonly onExpireTokens: () => void) {}

  /** Parses and applies a switch object (the body of POST /_simulator/faults). */
  set(input: unknown): void {
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw new Error('faults: a JSON object expected');
    const body = input as Record<string, unknown>;
    const known = new Set(['throttle', 'delay', 'dropDownload', 'expireTokens']);
    for (const key of Object.keys(body)) if (!known.has(key)) throw new Error(`faults: unknown switch "${key}"`);
    if (body.throttle !== undefined) {
      const t = body.throttle as Record<string, unknown>;
      const status = t.status ?? 429;
      if (status !== 429 && status !== 503) throw new Error('throttle.status must be 429 or 503');
      if (t.pathContains !== undefined && typeof t.pathContains !== 'string') throw new Error('throttle.pathContains must be a string');
      this.throttle = {
        count: positiveInt(t.count, 'throttle.count'),
        status,
        retryAfterSeconds: t.retryAfterSeconds === undefined ? 1 : positiveInt(t.retryAfterSeconds, 'throttle.retryAfterSeconds', true),
        pathContains: t.pathContains,
      };
    }
    if (body.delay !== undefined) {
      const d = body.delay as Record<string, unknown>;
      this.delay = { ms: positiveInt(d.ms, 'delay.ms', true), count: d.count === undefined ? undefined : positiveInt(d.count, 'delay.count') };
    }
    if (body.dropDownload !== undefined) {
      const d = body.dropDownload as Record<string, unknown>;
      this.drop = { afterBytes: positiveInt(d.afterBytes, 'dropDownload.afterBytes', true), count: d.count === undefined ? 1 : positiveInt(d.count, 'dropDownload.count') };
    }
    if (body.expireTokens === true) this.onExpireTokens();
  }

  clear(): void {
    this.throttle = undefined;
    this.delay = undefined;
    this.drop = undefined;
  }

  pending(): FaultSwitches {
    return { throttle: this.throttle, delay: this.delay, dropDownload: this.drop };
  }

  /** Starts logging a request; the entry gets its status when the response finishes (or is cut). */
  record(req: IncomingMessage, res: ServerResponse): void {
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      status: 0,
      at: new Date().toISOString(),
      authorization: req.headers.authorization !== undefined,
      ...(req.headers.range ? { range: req.headers.range } : {}),
    };
    if ((req.url ?? '').startsWith('/_simulator/')) return;
    this.log.push(entry);
    if (this.log.length > LOG_LIMIT) {
      this.log.shift();
      this.logOffset++;
    }
    const done = () => {
      if (entry.status === 0) entry.status = res.headersSent ? res.statusCode : 0;
    };
    res.once('finish', done);
    res.once('close', done);
  }

  /**
   * Applies the throttle and delay switches to an API request. Resolves true when it answered the
   * request (throttled), false when the service should handle it.
   */
  async beforeApi(req: IncomingMessage, res: ServerResponse, throttleBody: ThrottleBody): Promise<boolean> {
    const url = req.url ?? '/';
    if (this.delay) {
      const ms = this.delay.ms;
      if (this.delay.count !== undefined && --this.delay.count <= 0) this.delay = undefined;
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    }
    const t = this.throttle;
    if (t && (t.pathContains === undefined || url.includes(t.pathContains))) {
      if (--t.count <= 0) this.throttle = undefined;
      sendJson(res, t.status, throttleBody(t.status, t.retryAfterSeconds), { 'retry-after': String(t.retryAfterSeconds) });
      return true;
    }
    return false;
  }

  /** Whether an identity request is to be throttled (only when a switch names its path). */
  async beforeIdentity(req: IncomingMessage, res: ServerResponse, throttleBody: ThrottleBody): Promise<boolean> {
    const t = this.throttle;
    if (t?.pathContains === undefined || !(req.url ?? '').includes(t.pathContains)) return false;
    return this.beforeApi(req, res, throttleBody);
  }

  /**
   * A pass-through for a download body: when a dropDownload switch is pending it lets `afterBytes`
   * through and then destroys the response's socket, as a connection lost mid-transfer.
   */
  downloadStream(res: ServerResponse): Transform | undefined {
    const drop = this.drop;
    if (!drop) return undefined;
    if (--drop.count <= 0) this.drop = undefined;
    let left = drop.afterBytes;
    // Taken now: once the response ends (short of its Content-Length) Node detaches the socket.
    const socket = res.socket;
    return new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        if (left <= 0) return callback();
        const part = chunk.length <= left ? chunk : chunk.subarray(0, left);
        left -= part.length;
        this.push(part);
        if (left <= 0) {
          // end() after the queued writes flush them first; the destroy is the backstop.
          setImmediate(() => {
            socket?.end();
            setTimeout(() => socket?.destroy(), 1000).unref();
          });
        }
        callback();
      },
    });
  }

  /** Serves the common /_simulator/* routes; false for any other path. */
  async handleControl(req: IncomingMessage, res: ServerResponse, pathname: string, query: URLSearchParams): Promise<boolean> {
    if (!pathname.startsWith('/_simulator/')) return false;
    try {
      if (pathname === '/_simulator/health') {
        sendJson(res, 200, { status: 'ok' });
      } else if (pathname === '/_simulator/faults' && req.method === 'POST') {
        this.set(await readJson(req));
        sendJson(res, 200, this.pending());
      } else if (pathname === '/_simulator/faults' && req.method === 'GET') {
        sendJson(res, 200, this.pending());
      } else if (pathname === '/_simulator/faults' && req.method === 'DELETE') {
        this.clear();
        sendJson(res, 200, this.pending());
      } else if (pathname === '/_simulator/requests' && req.method === 'GET') {
        const since = Number(query.get('since') ?? '0');
        const from = Math.max(0, (Number.isInteger(since) ? since : 0) - this.logOffset);
        sendJson(res, 200, { next: this.logOffset + this.log.length, requests: this.log.slice(from) });
      } else if (pathname === '/_simulator/requests' && req.method === 'DELETE') {
        this.logOffset += this.log.length;
        this.log.length = 0;
        sendJson(res, 200, { next: this.logOffset });
      } else {
        return false; // the simulator's own control routes (e.g. Graph's /_simulator/violations)
      }
    } catch (error) {
      sendJson(res, 400, { error: error instanceof Error ? error.message : String(error) });
    }
    return true;
  }
}
