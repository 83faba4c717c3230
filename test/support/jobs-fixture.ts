import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector } from '@gateway/connector-api';
import type { JobRunRecord } from '@gateway/persistence';
import type { GatewayConfig } from '../../apps/api/src/config/gateway-config';
import type { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { startConnectorRegistry } from './connector-registry';
import { InMemoryJobStore } from './in-memory-job-store';
import type { JobDefinition } from '../../apps/api/src/config/job-definition.dto';
import { isActive } from '../../apps/api/src/jobs/job-states';
import type { TaskHandler, TaskQueue, TaskRef } from '../../apps/api/src/jobs/task-queue';

export const admin: Actor = { username: 'admin' };

/** Shared by the jobs unit specs: two real filesystem connectors (src, dst) on a temporary folder, and an in-memory store. */
export interface JobsFixture {
  dir: string;
  registry: ConnectorRegistry;
  src: ContentConnector;
  dst: ContentConnector;
  store: InMemoryJobStore;
  config: GatewayConfig;
  definition(options?: Partial<JobDefinition['options']>, source?: Partial<JobDefinition['source']>): JobDefinition;
  /** Writes files into src: { 'in/a.txt': 'text' }. */
  writeSource(files: Record<string, string>): Promise<void>;
  readTarget(folder: string, name: string): Promise<string>;
  /** Waits until the job's latest run is no longer active; returns it. */
  settled(jobId: number): Promise<JobRunRecord>;
  cleanup(): Promise<void>;
}

export async function jobsFixture(jobs: Partial<GatewayConfig['jobs']> = {}): Promise<JobsFixture> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'jobs-unit-')));
  const config = {
    dataDir: dir,
    connectors: ['src', 'dst'].map((id) => ({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } })),
    jobs: { definitions: [], concurrency: 4, localConcurrency: 4, auditRetentionDays: 0, ...jobs },
  } as unknown as GatewayConfig;
  const registry = await startConnectorRegistry(config);
  const src = registry.get('src');
  const dst = registry.get('dst');
  const store = new InMemoryJobStore();
  return {
    dir,
    registry,
    src,
    dst,
    store,
    config,
    definition: (options = {}, source = {}) => ({
      jobName: 'copy',
      jobGroup: 'nightly',
      source: { connectorId: 'src', folderPath: '/in', recursive: true, ...source },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], ...options },
    }),
    async writeSource(files) {
      for (const [rel, text] of Object.entries(files)) {
        const folder = `/${path.posix.dirname(rel)}`;
        const folderId = await src.folders!.createFolder(folder, admin);
        await src.createFile({ folderId, fileName: path.posix.basename(rel), mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, admin);
      }
    },
    async readTarget(folder, name) {
      const chunks: Buffer[] = [];
      for await (const c of await dst.openContent(await dst.idByPath(folder, name))) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    async settled(jobId) {
      for (;;) {
        const run = await store.latestRun(jobId);
        if (run && !isActive(run.status)) return run;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    cleanup: async () => {
      await registry.onApplicationShutdown();
      await fsp.rm(dir, { recursive: true, force: true });
    },
  };
}

/** A task queue that records what is queued and runs nothing (for the control service alone). */
export class RecordingQueue implements TaskQueue {
  readonly queued: TaskRef[] = [];
  /** The keys of those queued in the listing lane. */
  readonly listing: string[] = [];
  drained = false;
  constructor(readonly mode: 'embedded' | 'redis' = 'embedded') {}
  setHandler(_handler: TaskHandler): void {}
  async enqueue(refs: TaskRef[], options?: { listing?: boolean }): Promise<void> {
    this.queued.push(...refs);
    if (options?.listing === true) this.listing.push(...refs.map((r) => r.key));
  }
  async drain(): Promise<void> {
    this.drained = true;
  }
}
