/**
 * Building and starting the engines: engines.ts holds the parts every engine module shares (processes,
 * ports, builds, runs), the engine modules start one engine each, and this file puts them together.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  aptInstall,
  buildFerretDb,
  buildJava,
  cleanupStaleRuns,
  defaultLog,
  findPostgresBin,
  findRedisServer,
  installHandlers,
  recordOwner,
  requireJava,
  RUN_PREFIX,
  runs,
  seconds,
  startCmis,
  startElasticsearch,
  startFerretDb,
  startPostgres,
  startRedis,
  startSolr,
  stopProcess,
  stopRun,
  type EngineHandle,
  type EngineHandles,
  type EngineInfo,
  type EngineName,
  type Prepared,
  type Run,
  type StartOptions,
  type Started,
} from './engines';
import { startGraph } from './graph';
import { buildMinio, startMinio } from './minio';
import { startOpenSearch } from './opensearch';
import { buildS3Proxy, startS3Proxy } from './s3proxy';
import { startSharePoint } from './sharepoint';
import { buildTika, startTika } from './tika';
import { buildToxiproxy, startToxiproxy } from './toxiproxy';

/** Builds (or finds cached) everything the named engines need, without starting them. */
export async function buildEngines(names: readonly EngineName[], options: StartOptions = {}): Promise<void> {
  const log = options.log ?? defaultLog;
  await Promise.all(names.map((name) => prepareEngine(name, log)));
}


/** Debian packages that the selected engines miss, installed in one apt-get run. */
let pendingApt: Promise<void> | undefined;
let pendingAptFor = '';

function ensureDebianPackages(names: readonly EngineName[], log: (line: string) => void): Promise<void> {
  const missing: string[] = [];
  if (names.includes('postgres') && !findPostgresBin()) missing.push('postgresql');
  if (names.includes('redis') && !findRedisServer()) missing.push('redis-server');
  const key = missing.join(' ');
  if (!key) return Promise.resolve();
  if (pendingApt && pendingAptFor === key) return pendingApt;
  pendingAptFor = key;
  pendingApt = aptInstall(missing, log);
  return pendingApt;
}

async function prepareEngine(name: EngineName, log: (line: string) => void): Promise<Prepared> {
  switch (name) {
    case 'cmis':
    case 'solr':
    case 'elasticsearch':
    case 'opensearch': {
      const java = requireJava();
      return { kind: 'java', build: await buildJava(name, log), java };
    }
    case 'ferretdb':
      return { kind: 'ferretdb', binary: await buildFerretDb(log) };
    case 'postgres': {
      await ensureDebianPackages([name], log);
      const bins = findPostgresBin();
      if (!bins) throw new Error("PostgreSQL binaries (initdb, postgres) not found even after installing Debian's 'postgresql'");
      return { kind: 'postgres', bins };
    }
    case 'redis': {
      await ensureDebianPackages([name], log);
      const binary = findRedisServer();
      if (!binary) throw new Error("redis-server not found even after installing Debian's 'redis-server'");
      return { kind: 'redis', binary };
    }
    case 's3proxy':
      return { kind: 's3proxy', jar: await buildS3Proxy(log), java: requireJava() };
    case 'minio':
      return { kind: 'minio', binary: await buildMinio(log) };
    case 'tika':
      return { kind: 'tika', jar: await buildTika(log), java: requireJava() };
    case 'toxiproxy':
      return { kind: 'toxiproxy', binary: await buildToxiproxy(log) };
    case 'graph':
    case 'sharepoint':
      return { kind: 'simulator' };
  }
}

const starters: { [N in EngineName]: (prepared: Prepared, dir: string, run: Run) => Promise<Started<N>> } = {
  cmis: startCmis,
  solr: startSolr,
  elasticsearch: startElasticsearch,
  opensearch: startOpenSearch,
  ferretdb: startFerretDb,
  postgres: startPostgres,
  redis: startRedis,
  s3proxy: (p, dir, run) => (p.kind === 's3proxy' ? startS3Proxy(p.jar, p.java, dir, run) : Promise.reject(new Error('s3proxy: not prepared'))),
  minio: (p, dir, run) => (p.kind === 'minio' ? startMinio(p.binary, dir, run) : Promise.reject(new Error('minio: not prepared'))),
  graph: (_prepared, dir, run) => startGraph(dir, run),
  sharepoint: (_prepared, dir, run) => startSharePoint(dir, run),
  tika: (p, dir, run) => (p.kind === 'tika' ? startTika(p.jar, p.java, dir, run) : Promise.reject(new Error('tika: not prepared'))),
  toxiproxy: (p, dir, run) => (p.kind === 'toxiproxy' ? startToxiproxy(p.binary, dir, run) : Promise.reject(new Error('toxiproxy: not prepared'))),
};

/**
 * Builds (when needed) and starts the named engines, in parallel, each on a free port of 127.0.0.1,
 * and resolves when every one answers. On any failure, stops the ones that started and rejects with
 * every engine's error (including the tail of its log).
 */
export async function startEngines<N extends EngineName>(names: readonly N[], options: StartOptions = {}): Promise<EngineHandles<N>> {
  const log = options.log ?? defaultLog;
  const tmpDir = options.tmpDir ?? os.tmpdir();
  cleanupStaleRuns(tmpDir);
  const rootDir = fs.mkdtempSync(path.join(tmpDir, RUN_PREFIX));
  fs.chmodSync(rootDir, 0o755); // engines running as another user must reach their folder
  const run: Run = { rootDir, tag: crypto.randomBytes(8).toString('hex'), processes: new Map() };
  runs.add(run);
  installHandlers();
  recordOwner(run);

  const unique = [...new Set(names)];
  // One apt-get run for all missing Debian packages.
  const apt = ensureDebianPackages(unique, log);
  const results = await Promise.allSettled(
    unique.map(async (name) => {
      const started = Date.now();
      if (name === 'postgres' || name === 'redis') await apt;
      const prepared = await prepareEngine(name, log);
      const dir = path.join(rootDir, name);
      fs.mkdirSync(dir, { recursive: true });
      const readyStarted = Date.now();
      const result = await (starters[name] as (p: Prepared, d: string, r: Run) => Promise<Started<EngineName>>)(prepared, dir, run);
      log(`${name}: ready in ${seconds(Date.now() - readyStarted)} (total ${seconds(Date.now() - started)}) ${describe(result.info)}`);
      return result;
    }),
  );

  const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [{ name: unique[i], error: r.reason as unknown }] : []));
  if (failures.length > 0) {
    await stopRun(run, { keepDir: true });
    const detail = failures
      .map(({ name, error }) => {
        const message = error instanceof Error ? error.message : String(error);
        return message.startsWith(`${name}:`) ? message : `${name}: ${message}`;
      })
      .join('\n\n');
    throw new Error(`Could not start test engine(s) ${failures.map((f) => f.name).join(', ')} (logs in ${rootDir}):\n${detail}`);
  }

  const handles = {} as Record<EngineName, EngineHandle>;
  results.forEach((result, i) => {
    if (result.status !== 'fulfilled') return;
    const name = unique[i];
    const { info, proc } = result.value;
    handles[name] = {
      ...info,
      stop: async () => {
        await stopProcess(proc);
        run.processes.delete(name);
        recordOwner(run);
      },
    };
  });
  return handles as unknown as EngineHandles<N>;
}

function describe(info: EngineInfo): string {
  switch (info.name) {
    case 'cmis':
      return info.browserUrl;
    case 'solr':
      return info.coreUrl;
    case 'elasticsearch':
    case 'opensearch':
      return `${info.url} (${info.version})`;
    case 'ferretdb':
      return info.uri;
    case 'postgres':
    case 'redis':
      return info.url;
    case 's3proxy':
    case 'minio':
      return info.endpoint;
    case 'graph':
      return info.graphUrl;
    case 'sharepoint':
      return info.siteUrl;
    case 'tika':
      return `${info.url} (${info.version})`;
    case 'toxiproxy':
      return info.apiUrl;
  }
}
