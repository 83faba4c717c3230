import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { ByteRange, ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { adminAuth, basic, type TestGateway } from './gateway';

/** Helpers for the file service, batch and link e2e tests. */

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export interface TestUser {
  username: string;
  auth: string;
}

export async function createUser(gw: TestGateway, username: string): Promise<TestUser> {
  const password = `${username}-password-1`;
  await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username, password, roles: ['user'] }).expect(201);
  return { username, auth: basic(username, password) };
}

/** Writes a file straight into the default repository and returns its id (content API idbypath). */
export async function seedDocument(gw: TestGateway, relativePath: string, content: Buffer | string): Promise<string> {
  const target = path.join(gw.dataDir, 'repository', relativePath);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, content);
  const folderPath = '/' + path.posix.dirname(relativePath).replace(/^\.$/, '');
  const res = await gw
    .http()
    .get(`${gw.api}/repo/fs/idbypath`)
    .query({ folderPath, fileName: path.posix.basename(relativePath) })
    .set('Authorization', adminAuth())
    .expect(200);
  return res.body.results.id as string;
}

/** Polls `probe` until it returns something other than undefined. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function listFiles(gw: TestGateway, user: TestUser) {
  const res = await gw.http().get(`${gw.api}/files/user`).set('Authorization', user.auth).expect(200);
  return res.body.results as { files: any[]; links: any[] };
}

export async function fileHandle(gw: TestGateway, user: TestUser, id: string): Promise<any> {
  return (await listFiles(gw, user)).files.find((f) => f.id === id);
}

/** Waits until the export `id` leaves the running state; returns its handle. */
export function waitForExport(gw: TestGateway, user: TestUser, id: string): Promise<any> {
  return waitFor(async () => {
    const f = await fileHandle(gw, user, id);
    return f && f.state !== 'running' ? f : undefined;
  }, `export ${id} to end`);
}

/** Starts a batch export and returns the link the call answered. */
export async function startBatch(gw: TestGateway, user: TestUser, batch: Array<{ fileName?: string; connId: string; id: string }>) {
  const res = await gw.http().post(`${gw.api}/repo/batch`).set('Authorization', user.auth).send({ batch }).expect(202);
  return res.body.results as { id: string; docId: string; fileName: string; internal: boolean; connectorId: string; [k: string]: unknown };
}

/** supertest parser: the body as a Buffer, or the parsed JSON of an error answer. */
export function binary(res: any, cb: (err: Error | null, body: unknown) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const body = Buffer.concat(chunks);
    if (!/json/.test(String(res.headers['content-type']))) return cb(null, body);
    try {
      cb(null, JSON.parse(body.toString('utf8')));
    } catch (e) {
      cb(e as Error, body);
    }
  });
  res.on('error', cb);
}

/** Makes the app's HTTP server listen (once), so many requests can run at the same time; returns its base URL. */
export async function listen(gw: TestGateway): Promise<string> {
  const server = gw.app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The driver of a configured connector, to wrap its methods in tests. */
export function connector(gw: TestGateway, id = 'fs'): ContentConnector {
  return gw.app.get(ConnectorRegistry).get(id);
}

/**
 * Holds document streams of a connector: the first chunk of each passes,
 * the rest (and the end) wait until release(). Lets a test catch an export
 * in the middle of an entry. restore() undoes the wrapping.
 */
export class StreamGate {
  private open = false;
  private resolveOpen!: () => void;
  private readonly opened = new Promise<void>((r) => (this.resolveOpen = r));
  readonly streams: Readable[] = [];
  /** Bytes each gated stream has handed on so far. */
  private readonly passed: number[] = [];
  /**
   * For each openContent call through the gate, in order: how many bytes the streams opened before it
   * had handed on when it was called (so a test can say when a document was opened, without a clock).
   */
  readonly passedAtOpen: number[] = [];
  private readonly spy: jest.SpyInstance;

  constructor(target: ContentConnector, onlyIds?: string[]) {
    const original = target.openContent.bind(target);
    this.spy = jest.spyOn(target, 'openContent').mockImplementation(async (id: string, range?: ByteRange) => {
      if (!onlyIds || onlyIds.includes(id)) this.passedAtOpen.push(this.passed.reduce((sum, n) => sum + n, 0));
      const source = await original(id, range);
      if (onlyIds && !onlyIds.includes(id)) return source;
      const gated = this.hold(source);
      this.streams.push(gated);
      return gated;
    });
  }

  /** How many streams have been opened through the gate. */
  get count(): number {
    return this.streams.length;
  }

  release(): void {
    this.open = true;
    this.resolveOpen();
  }

  restore(): void {
    this.release();
    this.spy.mockRestore();
  }

  private hold(source: Readable): Readable {
    const out = new PassThrough();
    const index = this.passed.push(0) - 1;
    let first = true;
    source.on('data', (chunk: Buffer) => {
      this.passed[index] += chunk.length;
      out.write(chunk);
      if (first && !this.open) {
        first = false;
        source.pause();
        void this.opened.then(() => source.resume());
      }
    });
    source.on('end', () => void this.opened.then(() => out.end()));
    source.on('error', (e) => out.destroy(e));
    out.on('close', () => source.destroy());
    return out;
  }
}

/** GET with node:http, handing back the response unread (for tests that read part of a body, then act). */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, resolve);
    req.on('error', reject);
  });
}

export function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
