/**
 * Real-engine test harness: builds, starts and stops the engines that the gateway's connectors
 * talk to, natively (no Docker), each in its own process on a free port of 127.0.0.1, with its
 * data and log in a temporary folder.
 *
 *   cmis           Apache Chemistry OpenCMIS InMemory 1.1.0 in an embedded Jetty 9.4 (java/cmis)
 *   solr           Solr 9 through JettySolrRunner, core "gateway" (java/solr)
 *   elasticsearch  Elasticsearch 8 single node, server + transport-netty4 (java/elasticsearch)
 *   opensearch     OpenSearch 2.19 single node, server + transport-netty4-client, no security (java/opensearch, opensearch.ts)
 *   ferretdb       FerretDB v1 on SQLite, MongoDB wire protocol (go/ferretdb)
 *   postgres       Debian's PostgreSQL: initdb into the temp folder, run as an unprivileged user
 *   redis          Debian's redis-server, no persistence
 *   graph          Microsoft Graph (drives) simulator over HTTPS with its identity provider (simulators/graph)
 *   sharepoint     SharePoint REST simulator over HTTPS with its identity provider (simulators/sharepoint)
 *   tika           Apache Tika Server (jar from Maven Central, tika.ts): text extraction for indexing jobs
 *   toxiproxy      Shopify Toxiproxy v2 (Go module proxy build): TCP proxies with injected faults (toxiproxy.ts)
 *
 * Java and Go builds are cached in a folder keyed by a hash of their sources (see cacheRoot()); a
 * clean machine builds from scratch. Only Node built-ins are used here.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAuthProxy } from './auth-proxy';
import type { GraphInfo } from './graph';
import type { MinioInfo } from './minio';
import type { OpenSearchInfo } from './opensearch';
import type { S3ProxyInfo } from './s3proxy';
import type { SharePointInfo } from './sharepoint';
import type { TikaInfo } from './tika';
import type { ToxiproxyInfo } from './toxiproxy';

export const ENGINE_NAMES = ['cmis', 'solr', 'elasticsearch', 'opensearch', 'ferretdb', 'postgres', 'redis', 's3proxy', 'minio', 'graph', 'sharepoint', 'tika', 'toxiproxy'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export const HOST = '127.0.0.1';
export const CMIS_REPOSITORY_ID = 'A1';
export const SOLR_CORE = 'gateway';

/** What every engine reports. */
export interface EngineInfoBase {
  name: EngineName;
  host: string;
  port: number;
  /** Process group id of the engine (its leader's pid). */
  pid: number;
  /** The engine's temporary folder (data, configuration, log). */
  dir: string;
  /** The engine's stdout and stderr. */
  logFile: string;
}

export interface CmisInfo extends EngineInfoBase {
  name: 'cmis';
  /** http://127.0.0.1:P/cmis */
  url: string;
  /** Browser binding service URL: http://127.0.0.1:P/cmis/browser */
  browserUrl: string;
  /** AtomPub 1.1 service document: http://127.0.0.1:P/cmis/atom11 */
  atomPubUrl: string;
  repositoryId: string;
  /** http://127.0.0.1:P/cmis/browser/A1/root */
  rootFolderUrl: string;
  /** Basic auth; the InMemory server checks no password, the user name becomes the CMIS user. */
  username: string;
  password: string;
}

export interface SolrInfo extends EngineInfoBase {
  name: 'solr';
  /** http://127.0.0.1:P/solr */
  url: string;
  core: string;
  /** http://127.0.0.1:P/solr/gateway */
  coreUrl: string;
  /** Solr's BasicAuthPlugin refuses every request without them (security.json, blockUnknown). */
  user: string;
  password: string;
  /** `Basic …` of user/password, for the tests' own requests. */
  authorization: string;
}

export interface ElasticsearchInfo extends EngineInfoBase {
  name: 'elasticsearch';
  /**
   * http://127.0.0.1:P of the authenticating proxy in front of the engine (auth-proxy.ts; no TLS): it
   * accepts `ApiKey <apiKey>` or Basic user/password and answers 401 to anything else.
   */
  url: string;
  version: string;
  apiKey: string;
  user: string;
  password: string;
  /** `ApiKey …`, for the tests' own requests. */
  authorization: string;
}

export interface FerretDbInfo extends EngineInfoBase {
  name: 'ferretdb';
  /** mongodb://127.0.0.1:P/ (no authentication) */
  uri: string;
}

export interface PostgresInfo extends EngineInfoBase {
  name: 'postgres';
  /** postgres://gateway@127.0.0.1:P/postgres (trust authentication, superuser) */
  url: string;
  user: string;
  database: string;
  /** Folder of the Unix socket (-k). */
  socketDir: string;
}

export interface RedisInfo extends EngineInfoBase {
  name: 'redis';
  /** redis://127.0.0.1:P (no password, no persistence) */
  url: string;
}

export interface EngineInfoMap {
  cmis: CmisInfo;
  solr: SolrInfo;
  elasticsearch: ElasticsearchInfo;
  opensearch: OpenSearchInfo;
  ferretdb: FerretDbInfo;
  postgres: PostgresInfo;
  redis: RedisInfo;
  s3proxy: S3ProxyInfo;
  minio: MinioInfo;
  graph: GraphInfo;
  sharepoint: SharePointInfo;
  tika: TikaInfo;
  toxiproxy: ToxiproxyInfo;
}

export type EngineInfo<N extends EngineName = EngineName> = EngineInfoMap[N];
export type EngineHandle<N extends EngineName = EngineName> = EngineInfoMap[N] & { stop(): Promise<void> };
export type EngineHandles<N extends EngineName = EngineName> = { [K in N]: EngineHandle<K> };

/** The JSON file that global-setup writes for the test files (see index.ts, readEngines()). */
export interface EnginesFile {
  version: 1;
  rootDir: string;
  startedAt: string;
  engines: Partial<EngineInfoMap>;
}

export interface StartOptions {
  /** Parent of the run's temporary folder; default os.tmpdir(). */
  tmpDir?: string;
  /** Progress lines; default: to stderr. */
  log?: (line: string) => void;
}

/** Env var naming the engines JSON file that global-setup writes. */
export const ENGINES_FILE_ENV = 'GATEWAY_ENGINES_FILE';
/** Env var selecting the engines global-setup starts: comma list, "all" (default) or "none". */
export const ENGINES_SELECT_ENV = 'GATEWAY_TEST_ENGINES';

const ENGINES_DIR = __dirname;
export const RUN_PREFIX = 'content-gateway-engines-';
const RUN_TAG_ENV = 'GATEWAY_ENGINE_RUN';
/** Bump to invalidate every cached build. */
const BUILD_FORMAT = '1';

const READY_TIMEOUT_MS: Record<EngineName, number> = {
  cmis: 90_000,
  solr: 120_000,
  elasticsearch: 180_000,
  opensearch: 180_000,
  ferretdb: 60_000,
  postgres: 60_000,
  redis: 30_000,
  s3proxy: 60_000,
  minio: 60_000,
  graph: 60_000,
  sharepoint: 60_000,
  tika: 120_000,
  toxiproxy: 30_000,
};

// ---------------------------------------------------------------------------------------------
// Engine selection

export function parseEngineList(value: string | undefined): EngineName[] {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '' || text === 'all') return [...ENGINE_NAMES];
  if (text === 'none') return [];
  const names: EngineName[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const name = part === 'es' ? 'elasticsearch' : part === 'pg' || part === 'postgresql' ? 'postgres' : part;
    if (!(ENGINE_NAMES as readonly string[]).includes(name)) {
      throw new Error(`${ENGINES_SELECT_ENV}: unknown engine "${part}"; known: ${ENGINE_NAMES.join(', ')}, all, none`);
    }
    if (!names.includes(name as EngineName)) names.push(name as EngineName);
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// Small utilities

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function defaultLog(line: string): void {
  process.stderr.write(`[engines] ${line}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export function tailOfFile(file: string, maxLines = 60, maxBytes = 16_384): string {
  try {
    const size = fs.statSync(file).size;
    const start = Math.max(0, size - maxBytes);
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(size - start);
      fs.readSync(fd, buffer, 0, buffer.length, start);
      const lines = buffer.toString('utf8').split('\n');
      if (start > 0) lines.shift();
      return lines.slice(-maxLines).join('\n').trimEnd();
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '(no log)';
  }
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: () => string;
  json: <T = unknown>() => T;
}

/** One HTTP request on a fresh connection (no keep-alive, so nothing stays open afterwards). */
export function httpRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { connection: 'close', ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const request = http.request(url, { method: options.method ?? 'GET', headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body,
          text: () => body.toString('utf8'),
          json: <T>() => JSON.parse(body.toString('utf8')) as T,
        });
      });
    });
    request.setTimeout(options.timeoutMs ?? 10_000, () => request.destroy(new Error(`timeout: ${url}`)));
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

function tcpConnects(port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Sends one RESP command and resolves with the first reply line. */
function redisCommand(port: number, command: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: HOST, port });
    let data = '';
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error('redis: timeout'));
    });
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('utf8');
      const end = data.indexOf('\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(data.slice(0, end));
      }
    });
    socket.once('error', (error) => reject(error));
  });
}

function hashTree(root: string, entries: string[], extra: string[] = []): string {
  const hash = crypto.createHash('sha256');
  hash.update(`format ${BUILD_FORMAT}\0`);
  for (const value of extra) hash.update(`${value}\0`);
  const files: string[] = [];
  const walk = (relative: string) => {
    const full = path.join(root, relative);
    if (!fs.existsSync(full)) return;
    if (fs.statSync(full).isDirectory()) {
      for (const child of fs.readdirSync(full).sort()) walk(path.join(relative, child));
    } else {
      files.push(relative);
    }
  };
  for (const entry of entries) walk(entry);
  for (const file of files.sort()) {
    hash.update(`${file.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Tools

/** Cached builds: $GATEWAY_ENGINES_CACHE, else $XDG_CACHE_HOME/content-gateway-engines, else ~/.cache/content-gateway-engines. */
export function cacheRoot(): string {
  const explicit = process.env.GATEWAY_ENGINES_CACHE;
  if (explicit) return path.resolve(explicit);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'content-gateway-engines');
}

export function requireJava(): string {
  const fromHome = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : undefined;
  const java = fromHome && fs.existsSync(fromHome) ? fromHome : which('java');
  const advice =
    'The CMIS, Solr and Elasticsearch test engines need a Java 17 (or newer) JDK: install one ' +
    '(Debian: apt-get install openjdk-17-jdk-headless) and put `java` on PATH or set JAVA_HOME.';
  if (!java) throw new Error(`java not found. ${advice}`);
  const result = spawnSync(java, ['-version'], { encoding: 'utf8' });
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  if (result.status !== 0 || !match) throw new Error(`${java} -version failed. ${advice}`);
  const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
  if (major < 17) throw new Error(`${java} is Java ${major}. ${advice}`);
  return java;
}

export function requireMaven(): string {
  const mvn = which('mvn');
  if (!mvn) {
    throw new Error(
      'mvn not found. The CMIS, Solr and Elasticsearch test engines are built with Apache Maven 3.6 or newer: ' +
        'install it (Debian: apt-get install maven) and put `mvn` on PATH.',
    );
  }
  return mvn;
}

export function requireGo(): string {
  const go = which('go') ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find((p) => fs.existsSync(p));
  if (!go) {
    throw new Error(
      'go not found. The FerretDB test engine (test/engines/go/ferretdb) is built with Go 1.24 or newer: ' +
        'install the Go toolchain and put `go` on PATH.',
    );
  }
  return go;
}

/** PostgreSQL server binaries: PATH first, then Debian's /usr/lib/postgresql/<version>/bin (newest first). */
export function findPostgresBin(): { initdb: string; postgres: string } | undefined {
  const candidates: string[] = [];
  const initdbOnPath = which('initdb');
  if (initdbOnPath) candidates.push(path.dirname(fs.realpathSync(initdbOnPath)));
  try {
    const versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    // no Debian PostgreSQL
  }
  for (const dir of candidates) {
    const initdb = path.join(dir, 'initdb');
    const postgres = path.join(dir, 'postgres');
    if (fs.existsSync(initdb) && fs.existsSync(postgres)) return { initdb, postgres };
  }
  return undefined;
}

export function findRedisServer(): string | undefined {
  return which('redis-server') ?? (fs.existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : undefined);
}

let aptDone: Promise<void> | undefined;

/** Installs Debian packages (one apt-get run for all of them). Needs root. */
export function aptInstall(packages: string[], log: (line: string) => void): Promise<void> {
  if (packages.length === 0) return Promise.resolve();
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !which('apt-get')) {
    return Promise.reject(
      new Error(
        `Missing test engine binaries: install Debian's ${packages.map((p) => `'${p}'`).join(' and ')} ` +
          `package${packages.length > 1 ? 's' : ''} (apt-get install ${packages.join(' ')}); ` +
          'the harness installs them itself only when it runs as root on Debian.',
      ),
    );
  }
  const previous = aptDone ?? Promise.resolve();
  const run = previous.then(async () => {
    const started = Date.now();
    log(`installing Debian packages: ${packages.join(' ')}`);
    const logFile = path.join(os.tmpdir(), `gateway-engines-apt-${process.pid}.log`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', ...packages],
    ]) {
      const code = await runToLog('apt-get', args, { env, logFile });
      if (code !== 0) {
        throw new Error(`apt-get ${args.join(' ')} failed (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
      }
    }
    fs.rmSync(logFile, { force: true });
    log(`installed ${packages.join(' ')} in ${seconds(Date.now() - started)}`);
  });
  aptDone = run.catch(() => undefined);
  return run;
}

export function runToLog(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(options.logFile, 'a');
    fs.writeSync(fd, `$ ${command} ${args.join(' ')}\n`);
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', fd, fd] });
    } finally {
      fs.closeSync(fd);
    }
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

// ---------------------------------------------------------------------------------------------
// Builds

interface JavaBuild {
  classpath: string;
}

const javaProjects = {
  cmis: { dir: 'cmis', mainClass: 'gateway.engines.CmisServer' },
  solr: { dir: 'solr', mainClass: 'gateway.engines.SolrServer' },
  elasticsearch: { dir: 'elasticsearch', mainClass: 'gateway.engines.ElasticsearchServer' },
  opensearch: { dir: 'opensearch', mainClass: 'gateway.engines.OpenSearchServer' },
} as const;
export type JavaEngine = keyof typeof javaProjects;

function pruneOldBuilds(prefix: string, keep: string): void {
  const root = cacheRoot();
  for (const entry of fs.readdirSync(root)) {
    if (entry.startsWith(prefix) && entry !== keep && !entry.startsWith('.')) {
      fs.rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
}

function readCachedClasspath(outDir: string): JavaBuild | undefined {
  try {
    if (!fs.existsSync(path.join(outDir, '.complete'))) return undefined;
    const deps = fs.readFileSync(path.join(outDir, 'classpath.txt'), 'utf8').trim();
    const entries = [path.join(outDir, 'classes'), ...deps.split(path.delimiter).filter(Boolean)];
    // The dependency jars live in the local Maven repository: rebuild if it was cleaned.
    if (!entries.every((entry) => fs.existsSync(entry))) return undefined;
    return { classpath: entries.join(path.delimiter) };
  } catch {
    return undefined;
  }
}

/**
 * Runs one build in a fresh work folder of the cache (`.build-<engine>-*`, removed afterwards whatever
 * happens), its tools' output in `<cache>/<engine>-build.log`, with a progress line before and after.
 * `body` moves what it made out of the work folder into the cache.
 */
async function inBuildFolder<T>(
  engine: EngineName,
  log: (line: string) => void,
  what: { starting: string; done: string },
  body: (work: string, logFile: string) => Promise<T>,
): Promise<T> {
  const root = cacheRoot();
  fs.mkdirSync(root, { recursive: true });
  const work = fs.mkdtempSync(path.join(root, `.build-${engine}-`));
  const logFile = path.join(root, `${engine}-build.log`);
  fs.writeFileSync(logFile, '');
  try {
    const started = Date.now();
    log(`${engine}: ${what.starting}`);
    const result = await body(work, logFile);
    log(`${engine}: ${what.done} in ${seconds(Date.now() - started)}`);
    return result;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Serialises Maven runs: concurrent builds sharing ~/.m2 can corrupt it. */
let mavenQueue: Promise<unknown> = Promise.resolve();

export async function buildJava(engine: JavaEngine, log: (line: string) => void): Promise<JavaBuild> {
  const project = path.join(ENGINES_DIR, 'java', javaProjects[engine].dir);
  const key = `${engine}-${hashTree(project, ['pom.xml', 'src'])}`;
  const root = cacheRoot();
  const outDir = path.join(root, key);
  const cached = readCachedClasspath(outDir);
  if (cached) return cached;

  requireJava();
  const mvn = requireMaven();
  const run = mavenQueue.then(async () => {
    const again = readCachedClasspath(outDir);
    if (again) return again;
    await inBuildFolder(engine, log, { starting: 'building with Maven (first run on this machine downloads its dependencies)', done: 'built' }, async (work, logFile) => {
      const projectCopy = path.join(work, 'project');
      fs.mkdirSync(projectCopy);
      fs.copyFileSync(path.join(project, 'pom.xml'), path.join(projectCopy, 'pom.xml'));
      fs.cpSync(path.join(project, 'src'), path.join(projectCopy, 'src'), { recursive: true });
      const classpathFile = path.join(work, 'classpath.txt');
      const code = await runToLog(
        mvn,
        ['-B', '-ntp', '-e', 'compile', 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`],
        { cwd: projectCopy, logFile },
      );
      if (code !== 0 || !fs.existsSync(classpathFile)) {
        throw new Error(`Maven build of the ${engine} engine failed (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
      }
      const out = path.join(work, 'out');
      fs.mkdirSync(out);
      fs.renameSync(path.join(projectCopy, 'target', 'classes'), path.join(out, 'classes'));
      fs.renameSync(classpathFile, path.join(out, 'classpath.txt'));
      fs.writeFileSync(path.join(out, '.complete'), new Date().toISOString());
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.renameSync(out, outDir);
      pruneOldBuilds(`${engine}-`, key);
    });
    const built = readCachedClasspath(outDir);
    if (!built) throw new Error(`${engine}: build finished but its classpath is incomplete (${outDir})`);
    return built;
  });
  mavenQueue = run.catch(() => undefined);
  return run;
}

export async function buildFerretDb(log: (line: string) => void): Promise<string> {
  const project = path.join(ENGINES_DIR, 'go', 'ferretdb');
  const key = `ferretdb-${hashTree(project, ['go.mod', 'go.sum', 'main.go'])}`;
  const root = cacheRoot();
  const binary = path.join(root, key, 'ferretdb-test-engine');
  if (fs.existsSync(binary)) return binary;

  const go = requireGo();
  await inBuildFolder('ferretdb', log, { starting: 'building with Go (first run on this machine downloads its modules)', done: 'built' }, async (work, logFile) => {
    const output = path.join(work, 'out', 'ferretdb-test-engine');
    const code = await runToLog(go, ['build', '-trimpath', '-buildvcs=false', '-mod=readonly', '-o', output, '.'], {
      cwd: project,
      env: { ...process.env, CGO_ENABLED: '0' },
      logFile,
    });
    if (code !== 0 || !fs.existsSync(output)) {
      throw new Error(`Go build of the FerretDB engine failed (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
    }
    fs.rmSync(path.dirname(binary), { recursive: true, force: true });
    fs.renameSync(path.join(work, 'out'), path.dirname(binary));
    pruneOldBuilds('ferretdb-', key);
  });
  return binary;
}

/** Builds of one artifact in flight, by cache folder: concurrent callers share one. */
const artifactBuilds = new Map<string, Promise<string>>();

/**
 * One file built or fetched once into the build cache: `<cache>/<folder>/<file>`. `produce` fills a
 * fresh work folder (its output log in `<cache>/<engine>-build.log`) and returns the path of the
 * file inside it, or throws; the work folder then becomes the cache folder (the file renamed to
 * `file`), so a build cut short never looks finished. Used by the engines that come as one jar
 * from Maven Central or one binary from the Go module proxy.
 */
function cachedArtifact(
  engine: EngineName,
  folder: string,
  file: string,
  log: (line: string) => void,
  what: { starting: string; done: string },
  produce: (work: string, logFile: string) => Promise<string>,
): Promise<string> {
  const outDir = path.join(cacheRoot(), folder);
  const target = path.join(outDir, file);
  if (fs.existsSync(target)) return Promise.resolve(target);
  let building = artifactBuilds.get(outDir);
  if (!building) {
    building = inBuildFolder(engine, log, what, async (work, logFile) => {
      const produced = await produce(work, logFile);
      if (produced !== path.join(work, file)) fs.renameSync(produced, path.join(work, file));
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.renameSync(work, outDir);
      fs.chmodSync(outDir, 0o755); // a mkdtemp folder is the owner's only
      return target;
    }).finally(() => artifactBuilds.delete(outDir));
    artifactBuilds.set(outDir, building);
  }
  return building;
}

/** A jar of Maven Central (`group:artifact:version:jar[:classifier]`), fetched once by `dependency:copy`. */
export function mavenJar(engine: EngineName, artifact: string, jar: string, folder: string, log: (line: string) => void): Promise<string> {
  return cachedArtifact(engine, folder, jar, log, { starting: `fetching ${artifact} with Maven`, done: 'fetched' }, async (work, logFile) => {
    requireJava();
    const mvn = requireMaven();
    const code = await runToLog(mvn, ['-B', '-ntp', 'dependency:copy', `-Dartifact=${artifact}`, `-DoutputDirectory=${work}`], { cwd: work, logFile });
    const fetched = path.join(work, jar);
    if (code !== 0 || !fs.existsSync(fetched)) throw new Error(`Maven could not fetch ${artifact} (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
    return fetched;
  });
}

/**
 * A Go main built once from the Go module proxy (`go install <module>@<version>`, CGO off); `built` is
 * the name go gives the binary (the package folder's), `binary` the name it gets in the cache.
 */
export function goInstall(
  engine: EngineName,
  module: string,
  built: string,
  binary: string,
  folder: string,
  log: (line: string) => void,
  note = '',
): Promise<string> {
  return cachedArtifact(engine, folder, binary, log, { starting: `building with Go${note}`, done: 'built' }, async (work, logFile) => {
    const go = requireGo();
    const bin = path.join(work, 'bin');
    const code = await runToLog(go, ['install', '-trimpath', module], { cwd: work, env: { ...process.env, CGO_ENABLED: '0', GOBIN: bin }, logFile });
    const output = path.join(bin, built);
    if (code !== 0 || !fs.existsSync(output)) throw new Error(`Go build of ${module} failed (exit ${code}); log ${logFile}:\n${tailOfFile(logFile)}`);
    fs.renameSync(output, path.join(work, binary));
    fs.rmSync(bin, { recursive: true, force: true });
    return path.join(work, binary);
  });
}

export type Prepared =
  | { kind: 'java'; build: JavaBuild; java: string }
  | { kind: 'ferretdb'; binary: string }
  | { kind: 'postgres'; bins: { initdb: string; postgres: string } }
  | { kind: 'redis'; binary: string }
  | { kind: 's3proxy'; jar: string; java: string }
  | { kind: 'minio'; binary: string }
  | { kind: 'tika'; jar: string; java: string }
  | { kind: 'toxiproxy'; binary: string }
  | { kind: 'simulator' };

// ---------------------------------------------------------------------------------------------
// Processes

export interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Signal that shuts the engine down cleanly. */
  stopSignal: NodeJS.Signals;
  /**
   * Wrap in a small sh watchdog that stops the engine when our stdin pipe closes (engines of our own
   * build watch their stdin themselves).
   */
  watchdog: boolean;
}

interface RunningProcess {
  child: ChildProcess;
  pid: number;
  logFile: string;
  stopSignal: NodeJS.Signals;
  exit?: string;
}

/**
 * Runs "$@" as a child, forwards TERM/INT/HUP to it as the stop signal ($1), and stops it when the
 * harness's end of the stdin pipe closes (the harness died): fd 3 keeps that pipe.
 */
const WATCHDOG_SCRIPT = [
  'sig=$1; shift',
  'exec 3<&0 </dev/null',
  '"$@" 3<&- &',
  'child=$!',
  'trap \'kill -s "$sig" "$child" 2>/dev/null\' TERM INT HUP',
  '( while read -r _ <&3; do :; done; kill -s "$sig" "$child" 2>/dev/null ) &',
  'watcher=$!',
  'exec 3<&-',
  'status=0',
  'while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

export function launchProcess(name: EngineName, dir: string, run: Run, launch: Launch): RunningProcess {
  const logFile = path.join(dir, `${name}.log`);
  const fd = fs.openSync(logFile, 'a');
  if (launch.uid !== undefined) fs.fchownSync(fd, launch.uid, launch.gid ?? -1);
  fs.writeSync(fd, `\n$ ${launch.command} ${launch.args.join(' ')}\n`);
  const command = launch.watchdog ? '/bin/sh' : launch.command;
  const args = launch.watchdog ? ['-c', WATCHDOG_SCRIPT, 'engine-watchdog', launch.stopSignal.replace(/^SIG/, ''), launch.command, ...launch.args] : launch.args;
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: launch.cwd,
      env: { ...(launch.env ?? process.env), [RUN_TAG_ENV]: run.tag },
      stdio: ['pipe', fd, fd],
      detached: true,
      uid: launch.uid,
      gid: launch.gid,
    });
  } finally {
    fs.closeSync(fd);
  }
  if (child.pid === undefined) throw new Error(`${name}: could not start ${launch.command}`);
  const running: RunningProcess = { child, pid: child.pid, logFile, stopSignal: launch.stopSignal };
  run.processes.set(name, running);
  recordOwner(run);
  child.on('error', (error) => {
    running.exit = `failed: ${error.message}`;
  });
  child.once('exit', (code, signal) => {
    running.exit = signal ? `killed by ${signal}` : `exit code ${code}`;
  });
  // Our end of the stdin pipe: kept open (it is what tells the engine we are alive), but it must not
  // keep Node's event loop running, nor crash us when the engine is gone.
  child.stdin?.on('error', () => undefined);
  (child.stdin as unknown as net.Socket | null)?.unref?.();
  child.unref();
  return running;
}

/** Whether any live (non-zombie) process remains in the process group. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue;
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    }
    return false;
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

export async function stopProcess(proc: RunningProcess, graceMs = 20_000): Promise<void> {
  signalGroup(proc.pid, proc.stopSignal);
  const deadline = Date.now() + graceMs;
  while (groupAlive(proc.pid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(proc.pid)) {
    signalGroup(proc.pid, 'SIGKILL');
    const killDeadline = Date.now() + 5_000;
    while (groupAlive(proc.pid) && Date.now() < killDeadline) await sleep(100);
  }
  proc.child.stdin?.destroy();
}

function engineError(name: EngineName, proc: RunningProcess, message: string): Error {
  return new Error(`${name}: ${message}\n--- last lines of ${proc.logFile} ---\n${tailOfFile(proc.logFile)}\n---`);
}

export async function waitUntilReady(
  name: EngineName,
  proc: RunningProcess,
  probe: () => Promise<boolean>,
  timeoutMs = READY_TIMEOUT_MS[name],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exit) {
      const error = engineError(name, proc, `exited (${proc.exit}) before it was ready`);
      await stopProcess(proc, 5_000); // whatever it left in its process group
      throw error;
    }
    try {
      if (await probe()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      const error = engineError(name, proc, `not ready after ${seconds(timeoutMs)}`);
      await stopProcess(proc, 5_000);
      throw error;
    }
    await sleep(250);
  }
}

const PORT_IN_USE = /address already in use|BindException|bind: address|could not bind|EADDRINUSE/i;

// ---------------------------------------------------------------------------------------------
// Runs: a run is one startEngines() call, with its own temporary folder.

export interface Run {
  rootDir: string;
  tag: string;
  processes: Map<EngineName, RunningProcess>;
}

export const runs = new Set<Run>();
let handlersInstalled = false;

function ownerFile(rootDir: string): string {
  return path.join(rootDir, 'owner.json');
}

export function recordOwner(run: Run): void {
  const pgids = [...run.processes.values()].map((p) => p.pid);
  fs.writeFileSync(ownerFile(run.rootDir), JSON.stringify({ pid: process.pid, tag: run.tag, pgids }));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function processHasTag(pid: number, tag: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${RUN_TAG_ENV}=${tag}`);
  } catch {
    return false;
  }
}

/** Engines and folders left by runs whose Node process died without stopping them. */
export function cleanupStaleRuns(tmpDir: string): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(tmpDir).filter((e) => e.startsWith(RUN_PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const rootDir = path.join(tmpDir, entry);
    let owner: { pid: number; tag: string; pgids: number[] };
    try {
      owner = JSON.parse(fs.readFileSync(ownerFile(rootDir), 'utf8')) as typeof owner;
    } catch {
      continue;
    }
    if (processAlive(owner.pid) || process.env.GATEWAY_ENGINES_KEEP === '1') continue;
    for (const pgid of owner.pgids) {
      if (groupAlive(pgid) && processHasTag(pgid, owner.tag)) signalGroup(pgid, 'SIGKILL');
    }
    fs.rmSync(rootDir, { recursive: true, force: true });
  }
}

/** Last-resort cleanup when the Node process exits or is interrupted without stopEngines(). */
function killAllSync(): void {
  for (const run of runs) {
    for (const proc of run.processes.values()) {
      signalGroup(proc.pid, proc.stopSignal === 'SIGINT' ? 'SIGQUIT' : 'SIGTERM');
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  killAllSync();
  removeHandlers();
  // Re-raise so that the default action (or other listeners) applies.
  process.kill(process.pid, signal);
}

export function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
}

function removeHandlers(): void {
  if (!handlersInstalled) return;
  handlersInstalled = false;
  process.off('exit', killAllSync);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.off('SIGHUP', onSignal);
}

// ---------------------------------------------------------------------------------------------
// Engines

export interface Started<N extends EngineName> {
  info: EngineInfoMap[N];
  proc: RunningProcess;
}

export function javaLaunch(prepared: Extract<Prepared, { kind: 'java' }>, engine: JavaEngine, heap: string[], args: string[], dir: string): Launch {
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return {
    command: prepared.java,
    args: [
      ...heap,
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.awt.headless=true',
      `-Djava.io.tmpdir=${tmp}`,
      '-Dfile.encoding=UTF-8',
      '-cp',
      prepared.build.classpath,
      javaProjects[engine].mainClass,
      ...args,
    ],
    cwd: dir,
    stopSignal: 'SIGTERM',
    watchdog: false,
  };
}

export async function startCmis(prepared: Prepared, dir: string, run: Run): Promise<Started<'cmis'>> {
  if (prepared.kind !== 'java') throw new Error('cmis: not a Java build');
  const properties = path.join(dir, 'repository.properties');
  fs.writeFileSync(
    properties,
    [
      `InMemoryServer.RepositoryId=${CMIS_REPOSITORY_ID}`,
      'InMemoryServer.TypesCreatorClass=org.apache.chemistry.opencmis.inmemory.types.DefaultTypeSystemCreator',
      'InMemoryServer.User=admin',
      'InMemoryServer.EncryptTempFiles=false',
      `InMemoryServer.TempDir=${path.join(dir, 'content')}`,
      'RepositoryFiller.Enable=false',
      '',
    ].join('\n'),
  );
  // Any user name, this password (java/cmis: OpenCMIS InMemory checks none itself); a new one per start.
  const password = `cmis-${crypto.randomBytes(9).toString('base64url')}`;
  return withPortRetry('cmis', async (port) => {
    const proc = launchProcess(
      'cmis',
      dir,
      run,
      javaLaunch(prepared, 'cmis', ['-Xms64m', '-Xmx512m'], [String(port), '/cmis', properties, path.join(dir, 'content'), password], dir),
    );
    const url = `http://${HOST}:${port}/cmis`;
    const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
    await waitUntilReady('cmis', proc, async () => {
      const response = await httpRequest(`${url}/browser`, { headers: { authorization: auth } });
      return response.status === 200 && response.text().includes(`"${CMIS_REPOSITORY_ID}"`);
    });
    const info: CmisInfo = {
      name: 'cmis',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url,
      browserUrl: `${url}/browser`,
      atomPubUrl: `${url}/atom11`,
      repositoryId: CMIS_REPOSITORY_ID,
      rootFolderUrl: `${url}/browser/${CMIS_REPOSITORY_ID}/root`,
      username: 'admin',
      password,
    };
    return { info, proc };
  });
}

export async function startSolr(prepared: Prepared, dir: string, run: Run): Promise<Started<'solr'>> {
  if (prepared.kind !== 'java') throw new Error('solr: not a Java build');
  const home = path.join(dir, 'home');
  fs.cpSync(path.join(ENGINES_DIR, 'java', 'solr', 'home'), home, { recursive: true });
  const user = 'gateway';
  const password = crypto.randomBytes(12).toString('hex');
  fs.writeFileSync(path.join(home, 'security.json'), JSON.stringify(solrSecurity(user, password), null, 2));
  const authorization = basicAuthorization(user, password);
  return withPortRetry('solr', async (port) => {
    const proc = launchProcess(
      'solr',
      dir,
      run,
      javaLaunch(
        prepared,
        'solr',
        // slf4j-simple: Solr logs every request at INFO; keep warnings and errors only.
        ['-Xms128m', '-Xmx512m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
        [String(port), home, path.join(dir, 'logs')],
        dir,
      ),
    );
    const url = `http://${HOST}:${port}/solr`;
    const coreUrl = `${url}/${SOLR_CORE}`;
    await waitUntilReady('solr', proc, async () => {
      const response = await httpRequest(`${coreUrl}/admin/ping?wt=json`, { headers: { authorization } });
      return response.status === 200 && response.json<{ status?: string }>().status === 'OK';
    });
    const info: SolrInfo = { name: 'solr', host: HOST, port, pid: proc.pid, dir, logFile: proc.logFile, url, core: SOLR_CORE, coreUrl, user, password, authorization };
    return { info, proc };
  });
}

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * Solr's documented security.json: BasicAuthPlugin for every request (blockUnknown), one admin user.
 * The credential is "base64(sha256(sha256(salt + password))) base64(salt)", as Sha256AuthenticationProvider checks it.
 */
function solrSecurity(user: string, password: string): unknown {
  const salt = crypto.randomBytes(32);
  const once = crypto.createHash('sha256').update(salt).update(password, 'utf8').digest();
  const hash = crypto.createHash('sha256').update(once).digest('base64');
  return {
    authentication: { class: 'solr.BasicAuthPlugin', blockUnknown: true, forwardCredentials: false, credentials: { [user]: `${hash} ${salt.toString('base64')}` } },
    authorization: { class: 'solr.RuleBasedAuthorizationPlugin', permissions: [{ name: 'all', role: 'admin' }], 'user-role': { [user]: 'admin' } },
  };
}

export async function startElasticsearch(prepared: Prepared, dir: string, run: Run): Promise<Started<'elasticsearch'>> {
  if (prepared.kind !== 'java') throw new Error('elasticsearch: not a Java build');
  return withPortRetry('elasticsearch', async (port) => {
    const home = path.join(dir, 'home');
    fs.rmSync(home, { recursive: true, force: true });
    const proc = launchProcess(
      'elasticsearch',
      dir,
      run,
      javaLaunch(prepared, 'elasticsearch', ['-Xms1g', '-Xmx1g', '-XX:+UseG1GC'], [String(port), home], dir),
    );
    const url = `http://${HOST}:${port}`;
    await waitUntilReady('elasticsearch', proc, async () => {
      const response = await httpRequest(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`);
      const status = response.status === 200 ? response.json<{ status?: string }>().status : undefined;
      return status === 'yellow' || status === 'green';
    });
    const root = await httpRequest(url);
    const version = root.json<{ version?: { number?: string } }>().version?.number ?? 'unknown';
    const apiKey = crypto.randomBytes(16).toString('base64');
    const user = 'gateway';
    const password = crypto.randomBytes(12).toString('hex');
    const authorization = `ApiKey ${apiKey}`;
    const proxy = await startAuthProxy(url, [authorization, basicAuthorization(user, password)], 'elasticsearch');
    proc.child.once('exit', () => void proxy.close());
    const info: ElasticsearchInfo = {
      name: 'elasticsearch',
      host: HOST,
      // The proxy's: whoever reaches the engine (the gateway, Toxiproxy in the fault tests) shows credentials.
      port: Number(new URL(proxy.url).port),
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url: proxy.url,
      version,
      apiKey,
      user,
      password,
      authorization,
    };
    return { info, proc };
  });
}

export async function startFerretDb(prepared: Prepared, dir: string, run: Run): Promise<Started<'ferretdb'>> {
  if (prepared.kind !== 'ferretdb') throw new Error('ferretdb: not a FerretDB build');
  return withPortRetry('ferretdb', async (port) => {
    const proc = launchProcess('ferretdb', dir, run, {
      command: prepared.binary,
      args: ['-listen-addr', `${HOST}:${port}`, '-sqlite-dir', path.join(dir, 'data'), '-log-level', 'error'],
      cwd: dir,
      stopSignal: 'SIGTERM',
      watchdog: false,
    });
    await waitUntilReady('ferretdb', proc, () => tcpConnects(port));
    const info: FerretDbInfo = {
      name: 'ferretdb',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      uri: `mongodb://${HOST}:${port}/`,
    };
    return { info, proc };
  });
}

/** uid/gid of an unprivileged account for engines that refuse to run as root. */
function unprivilegedUser(): { user: string; uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const user of ['postgres', 'nobody']) {
    const line = passwd.find((l) => l.startsWith(`${user}:`));
    if (line) {
      const [, , uid, gid] = line.split(':');
      return { user, uid: Number(uid), gid: Number(gid) };
    }
  }
  throw new Error('running as root, but neither a "postgres" nor a "nobody" account exists to run PostgreSQL');
}

function runAs(
  command: string,
  args: string[],
  options: { uid?: number; gid?: number; cwd: string },
): { status: number | null; output: string } {
  const result = spawnSync(command, args, { cwd: options.cwd, uid: options.uid, gid: options.gid, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

export async function startPostgres(prepared: Prepared, dir: string, run: Run): Promise<Started<'postgres'>> {
  if (prepared.kind !== 'postgres') throw new Error('postgres: not prepared');
  const account = unprivilegedUser();
  const ids = account ? { uid: account.uid, gid: account.gid } : {};
  if (account) fs.chownSync(dir, account.uid, account.gid);
  const data = path.join(dir, 'data');
  const user = 'gateway';
  const initdb = runAs(
    prepared.bins.initdb,
    ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { ...ids, cwd: dir },
  );
  if (initdb.status !== 0) throw new Error(`postgres: initdb failed (exit ${initdb.status}):\n${initdb.output}`);
  return withPortRetry('postgres', async (port) => {
    const proc = launchProcess('postgres', dir, run, {
      command: prepared.bins.postgres,
      args: [
        '-D', data,
        '-p', String(port),
        '-k', dir,
        '-c', `listen_addresses=${HOST}`,
        '-c', 'fsync=off',
        '-c', 'full_page_writes=off',
        '-c', 'synchronous_commit=off',
        '-c', 'max_connections=200',
        '-c', 'shared_buffers=64MB',
      ],
      cwd: dir,
      ...ids,
      stopSignal: 'SIGINT', // fast shutdown: does not wait for clients to disconnect
      watchdog: true,
    });
    await waitUntilReady('postgres', proc, async () => {
      const log = tailOfFile(proc.logFile, 200);
      return /database system is ready to accept connections/.test(log) && (await tcpConnects(port));
    });
    const info: PostgresInfo = {
      name: 'postgres',
      host: HOST,
      port,
      pid: proc.pid,
      dir,
      logFile: proc.logFile,
      url: `postgres://${user}@${HOST}:${port}/postgres`,
      user,
      database: 'postgres',
      socketDir: dir,
    };
    return { info, proc };
  });
}

export async function startRedis(prepared: Prepared, dir: string, run: Run): Promise<Started<'redis'>> {
  if (prepared.kind !== 'redis') throw new Error('redis: not prepared');
  return withPortRetry('redis', async (port) => {
    const proc = launchProcess('redis', dir, run, {
      command: prepared.binary,
      args: [
        '--port', String(port),
        '--bind', HOST,
        '--save', '',
        '--appendonly', 'no',
        '--dir', dir,
        '--daemonize', 'no',
        '--logfile', '',
      ],
      cwd: dir,
      stopSignal: 'SIGTERM',
      watchdog: true,
    });
    await waitUntilReady('redis', proc, async () => (await redisCommand(port, 'PING')) === '+PONG');
    const info: RedisInfo = { name: 'redis', host: HOST, port, pid: proc.pid, dir, logFile: proc.logFile, url: `redis://${HOST}:${port}` };
    return { info, proc };
  });
}

/** Picks a free port and starts; when the port was taken in the meantime, tries again with another. */
export async function withPortRetry<N extends EngineName>(name: N, start: (port: number) => Promise<Started<N>>): Promise<Started<N>> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3 || !PORT_IN_USE.test(message) || !message.includes('exited')) throw error;
    }
  }
}

export async function stopRun(run: Run, options: { keepDir?: boolean } = {}): Promise<void> {
  await Promise.all([...run.processes.values()].map((proc) => stopProcess(proc)));
  run.processes.clear();
  runs.delete(run);
  if (!options.keepDir && process.env.GATEWAY_ENGINES_KEEP !== '1') {
    fs.rmSync(run.rootDir, { recursive: true, force: true });
  } else {
    try {
      recordOwner(run);
    } catch {
      // folder gone
    }
  }
}

/** Stops every engine this process started and removes their folders (kept when GATEWAY_ENGINES_KEEP=1). */
export async function stopEngines(): Promise<void> {
  await Promise.all([...runs].map((run) => stopRun(run)));
  removeHandlers();
}

/** The run folder of the handles returned by startEngines() (where writeEnginesFile() writes). */
export function runDirOf(handles: Partial<Record<EngineName, EngineInfoBase>>): string | undefined {
  const any = Object.values(handles)[0];
  return any ? path.dirname(any.dir) : undefined;
}

/** Writes the engines' connection info (no functions) as JSON; returns the file's path. */
export function writeEnginesFile(handles: Partial<Record<EngineName, EngineInfoBase>>, file?: string): string {
  const rootDir = runDirOf(handles) ?? fs.mkdtempSync(path.join(os.tmpdir(), RUN_PREFIX));
  const target = file ?? path.join(rootDir, 'engines.json');
  const engines: Record<string, unknown> = {};
  for (const [name, handle] of Object.entries(handles)) {
    if (!handle) continue;
    const { stop: _stop, ...info } = handle as EngineInfoBase & { stop?: unknown };
    engines[name] = info;
  }
  const content: EnginesFile = { version: 1, rootDir, startedAt: new Date().toISOString(), engines };
  fs.writeFileSync(target, `${JSON.stringify(content, null, 2)}\n`);
  return target;
}

/** Kills engines listed in an engines file (used by global-teardown when in-memory state is gone). */
export function killEnginesFromFile(file: string): void {
  let content: EnginesFile;
  try {
    content = JSON.parse(fs.readFileSync(file, 'utf8')) as EnginesFile;
  } catch {
    return;
  }
  let tag = '';
  try {
    tag = (JSON.parse(fs.readFileSync(ownerFile(content.rootDir), 'utf8')) as { tag: string }).tag;
  } catch {
    return; // run folder already removed: stopEngines() ran
  }
  for (const info of Object.values(content.engines)) {
    if (info && groupAlive(info.pid) && processHasTag(info.pid, tag)) signalGroup(info.pid, 'SIGKILL');
  }
}
