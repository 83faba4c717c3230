import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { UpstreamError, type ContentConnector } from '@gateway/connector-api';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { adminAuth, startGateway, type StartOptions, type TestGateway } from '../support/gateway';

/** The job e2e suite runs embedded by default, and on BullMQ when GATEWAY_TEST_REDIS_URL is set. */
export const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;
export const MODE = REDIS_URL ? 'redis' : 'embedded';

export interface JobsGateway extends TestGateway {
  root: string;
  srcRoot: string;
  dstRoot: string;
  /** Source connector 'src' with its content calls held at a gate and faults injectable. */
  src: Faulty;
}

/** Two filesystem connectors, src and dst, declared in a GATEWAY_CONFIG file (plus any extra YAML). */
export async function startJobsGateway(options: { extraYaml?: string; env?: Record<string, string>; root?: string } & StartOptions = {}): Promise<JobsGateway> {
  const root = options.root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-jobs-'));
  const srcRoot = path.join(root, 'src');
  const dstRoot = path.join(root, 'dst');
  const file = path.join(root, 'gateway.yaml');
  fs.writeFileSync(
    file,
    `connectors:
  - {id: src, typeId: filesystem, params: {root: ${srcRoot}}}
  - {id: dst, typeId: filesystem, params: {root: ${dstRoot}}}
${options.extraYaml ?? ''}`,
  );
  const gw = await startGateway({
    ...options,
    env: { GATEWAY_CONFIG: file, GATEWAY_JOB_CONCURRENCY: '2', GATEWAY_JOB_LOCAL_CONCURRENCY: '2', ...(REDIS_URL ? { REDIS_URL } : {}), ...options.env },
  });
  const src = new Faulty(gw.app.get(ConnectorRegistry).get('src'));
  return { ...gw, root, srcRoot, dstRoot, src };
}

/**
 * Wraps a connector's openContent: while the gate is closed, content streams
 * are handed out but their bytes wait (documents are "in flight"); names
 * matching `failing` throw an upstream error. It withdraws the connector's
 * localFiles group, as anything that makes openContent read otherwise must,
 * so a target reads through openContent rather than copying the files directly.
 */
export class Faulty {
  opened = 0;
  /** Documents whose lead bytes (close({ leadBytes })) were handed to the target. */
  leadSent = 0;
  failing?: RegExp;
  private gate?: { promise: Promise<void>; open: () => void; leadBytes: number };
  private readonly localFiles?: PropertyDescriptor;

  constructor(readonly connector: ContentConnector) {
    const original = connector.openContent.bind(connector);
    // The driver's own property, not what a metrics Proxy would hand out for it (restore puts it back).
    this.localFiles = Object.getOwnPropertyDescriptor(connector, 'localFiles');
    Object.assign(connector, { localFiles: undefined });
    connector.openContent = async (id, range) => {
      const item = await connector.getItem(id);
      if (this.failing?.test(item.name)) throw new UpstreamError(`injected failure for ${item.name}`);
      this.opened++;
      const gate = this.gate;
      if (!gate) return original(id, range);
      const out = new PassThrough();
      if (gate.leadBytes > 0) {
        // The first bytes go out at once (the target has started writing), the rest waits at the gate.
        void (async () => {
          const chunks: Buffer[] = [];
          for await (const c of await original(id, range)) chunks.push(c as Buffer);
          const all = Buffer.concat(chunks);
          if (out.destroyed) return;
          out.write(all.subarray(0, Math.min(gate.leadBytes, all.length - 1)));
          this.leadSent++;
          await gate.promise;
          if (!out.destroyed) out.end(all.subarray(Math.min(gate.leadBytes, all.length - 1)));
        })().catch((e: Error) => out.destroy(e));
        return out;
      }
      void gate.promise.then(async () => {
        if (out.destroyed) return;
        const real: Readable = await original(id, range);
        real.on('error', (e) => out.destroy(e));
        out.on('close', () => real.destroy());
        real.pipe(out);
      });
      return out;
    };
  }

  /** Holds content at a gate until open(); with leadBytes, that many bytes of each document pass before the gate. */
  close(options: { leadBytes?: number } = {}): void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.gate = { promise, open, leadBytes: options.leadBytes ?? 0 };
  }

  open(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  /** Undoes the wrapping: the connector's own openContent and localFiles group again. */
  restore(): void {
    this.open();
    delete (this.connector as Partial<ContentConnector>).openContent;
    if (this.localFiles) Object.defineProperty(this.connector, 'localFiles', this.localFiles);
  }

  /** Resolves once `n` content streams have been opened in total. */
  async waitOpened(n: number): Promise<void> {
    while (this.opened < n) await sleep(20);
  }

  /** Resolves once the lead bytes of `n` documents in total have been handed to the target. */
  async waitLeadSent(n: number): Promise<void> {
    while (this.leadSent < n) await sleep(20);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

/** Every regular file under root (relative paths) with its bytes, skipping the connector's metadata folder. */
export function treeBytes(root: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  const walk = (dir: string, rel: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (rel === '' && e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (e.isFile()) out[r] = fs.readFileSync(path.join(dir, e.name));
    }
  };
  walk(root, '');
  return out;
}

/** treeBytes as UTF-8 text. */
export function listTree(root: string): Record<string, string> {
  return Object.fromEntries(Object.entries(treeBytes(root)).map(([rel, bytes]) => [rel, bytes.toString('utf8')]));
}

export interface JobBody {
  jobName: string;
  jobGroup?: string;
  source: { connectorId: string; folderPath: string; recursive?: boolean };
  target: { connectorId: string; folderPath: string };
  options?: Record<string, unknown>;
}

export function jobBody(name: string, extra: Partial<JobBody> = {}): JobBody {
  return { jobName: name, source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/out' }, ...extra };
}

export async function defineJob(gw: TestGateway, body: JobBody): Promise<number> {
  const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body).expect(201);
  return res.body.results.jobId as number;
}

export async function call(gw: TestGateway, jobId: number | string, action: string, expected = 200, method: 'get' | 'post' = 'get') {
  const res = await gw.http()[method](`${gw.api}/job/service/${jobId}/${action}`).set('Authorization', adminAuth());
  if (res.status !== expected) throw new Error(`${method.toUpperCase()} ${action} on job ${jobId}: expected ${expected}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function status(gw: TestGateway, jobId: number) {
  return (await call(gw, jobId, 'status')).results;
}

/** Polls the status until it is one of `wanted` (the jest timeout bounds the wait). */
export async function waitStatus(gw: TestGateway, jobId: number, ...wanted: string[]) {
  for (;;) {
    const s = await status(gw, jobId);
    if (wanted.includes(s.status)) return s;
    await sleep(25);
  }
}

export const FLAG_NAMES = ['canStartJob', 'canRestartJob', 'canPauseJob', 'canAbortJob', 'canResumeJob', 'canKillJob'] as const;

export function flags(record: Record<string, unknown>): string[] {
  return FLAG_NAMES.filter((f) => record[f] === true);
}
