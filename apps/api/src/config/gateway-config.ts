import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import type { ConnectorDefinition } from '@gateway/connector-api';
import { ConfigFile, type Role } from './config.schema';
import { withDefaults, type JobDefinition } from './job-definition.dto';
import { parseUserFilesStore, type UserFilesStoreConfig } from './user-files-store';
import type { WebhookDefinitionDto } from './webhook-definition.dto';

export interface ConfiguredUser {
  username: string;
  password: string;
  roles: Role[];
  groups?: string[];
}

/** Typed configuration, built and validated once at start-up. */
export interface ServerTimeouts {
  /** PostgreSQL: getting a connection (DATABASE_CONNECT_TIMEOUT_MS). */
  databaseConnectTimeoutMs: number;
  /** PostgreSQL: one query's answer (DATABASE_QUERY_TIMEOUT_MS). */
  databaseQueryTimeoutMs: number;
  /** The request head (line and headers) must arrive within this (a slowloris client is cut). */
  headersTimeoutMs: number;
  /** The whole request, body included; 0 = none. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

export interface GatewayConfig {
  port: number;
  host: string;
  dataDir: string;
  /** '' or a path starting with '/' and not ending with '/'. */
  contextPath: string;
  adminUser: string;
  /** Undefined: generate one on first start and print it once. */
  adminPassword?: string;
  databaseUrl?: string;
  /** Value for Express 'trust proxy' (false, true, a hop count or an address list). */
  trustProxy: boolean | number | string;
  connectors: ConnectorDefinition[];
  /**
   * Where the connectors come from: the default `fs` repository (no connector declared), or the file's
   * list, which then replaces it (the start-up summary says so, so that its absence is never silent).
   */
  connectorSource?: 'default' | 'declared';
  users: ConfiguredUser[];
  auth: {
    /** How long a successful Basic verification is remembered. */
    cacheTtlMs: number;
    /** Failed attempts per user and client address before the pair is locked out. */
    maxFailures: number;
    /** Length of the lock-out, and the window in which failures are counted. */
    lockoutSeconds: number;
    /** Switches authentication off entirely; only the benchmark's baseline uses it. */
    disabled: boolean;
    /** Failed attempts from one client address, whatever the user names, before the address is locked out. */
    maxFailuresPerAddress: number;
    /** Worker threads that verify and hash passwords (argon2id), apart from the libuv pool file I/O needs. */
    verifyThreads: number;
    /** Verifications that may wait for a thread; beyond it a login gets 503 with Retry-After. */
    verifyQueue: number;
  };
  /** This process's name in shared state (export leases); stable across restarts of the same node. */
  nodeId: string;
  /** Largest JSON or form body accepted, in bytes. */
  jsonBodyLimit: number;
  /** Largest document content one upload may carry, in bytes; 0 = no limit (413 beyond it). */
  maxUploadBytes: number;
  logLevel: string;
  /** LOG_FORMAT: one readable line per entry, or JSON lines; undefined: pretty on a terminal, JSON otherwise. */
  logFormat?: 'pretty' | 'json';
  /** Milliseconds that shutdown waits for in-flight requests. */
  shutdownGraceMs: number;
  /** Time-outs of the HTTP server (node:http), ms; see the README's configuration table. */
  server: ServerTimeouts;
  /** User files (export outputs), batch exports and download links. */
  files: FilesConfig;
  /** The job service. */
  jobs: JobsConfig;
  /** Webhooks of run events: the file's endpoints and the delivery settings. */
  webhooks: WebhooksConfig;
  /** Download offload to the reverse proxy; undefined: the gateway streams every download itself. */
  offload?: OffloadConfig;
  /** The access audit: one row per content read served (apps/api/src/audit). */
  accessAudit: AccessAuditConfig;
  /** Port of the separate Prometheus /metrics listener; undefined: no metrics are served. */
  metricsPort?: number;
  /** Text extraction of indexing jobs: Tika Server for what the gateway does not decode itself. */
  extraction: ExtractionConfig;
  /** Resumable (tus) uploads under /api/uploads. */
  uploads: UploadsConfig;
}

export interface UploadsConfig {
  /** GATEWAY_UPLOADS_DIR, or <data>/uploads; one folder shared by every node that serves /api/uploads. */
  dir: string;
  /** An upload is removed this long after its creation, finished or not (tus expiration; Upload-Expires). */
  expiryMs: number;
  /** Bytes one user's uploads may reserve (their Upload-Length, summed); 0 = no quota (413 beyond it). */
  quotaBytes: number;
  /** Period of the sweep of expired uploads; 0 switches it off (GATEWAY_SWEEP_INTERVAL_SECONDS). */
  sweepIntervalMs: number;
}

export interface ExtractionConfig {
  /** TIKA_URL (http or https base URL); undefined: formats that are not native are indexed by metadata only. */
  tikaUrl?: string;
  /** TIKA_TIMEOUT_MS: one document's whole exchange with Tika. */
  tikaTimeoutMs: number;
  /** TIKA_CA_FILE: PEM of the CA behind an https TIKA_URL. */
  caFile?: string;
}

/**
 * accel-redirect (nginx): `X-Accel-Redirect: <prefix>/files/<file>` for user files and
 * `<prefix>/repo/<connectorId>/<path>` for documents of connectors with local files.
 * sendfile (Apache mod_xsendfile, lighttpd): `<header>: <real path of the file>`.
 */
export type OffloadConfig = { kind: 'accel-redirect'; prefix: string } | { kind: 'sendfile'; header: string };

export interface JobsConfig {
  /** Declared in the configuration file. */
  definitions: JobDefinition[];
  /** redis://... selects the BullMQ runner shared by every gateway process; undefined = in-process runner. */
  redisUrl?: string;
  /** Documents copied at once per process. */
  concurrency: number;
  /**
   * Documents copied at once per process by jobs between two connectors of local files
   * (filesystem): they cost no remote requests, and a direct copy is short enough that more in
   * flight is what keeps the copy thread and the event loop both busy.
   */
  localConcurrency: number;
  /** Audit records older than this are deleted; 0 keeps them forever. */
  auditRetentionDays: number;
}

export interface WebhooksConfig {
  /** Declared in the configuration file's `webhooks:` list. */
  definitions: WebhookDefinitionDto[];
  /** One attempt's whole exchange, connection to answer (GATEWAY_WEBHOOK_TIMEOUT_MS); longer is a failed attempt, retried. */
  timeoutMs: number;
  /** Delay before the first retry, doubled for each next one (GATEWAY_WEBHOOK_RETRY_BASE_MS)... */
  retryBaseMs: number;
  /** ...up to this (GATEWAY_WEBHOOK_RETRY_MAX_MS). */
  retryMaxMs: number;
  /** No attempt is made later than this after the event (GATEWAY_WEBHOOK_RETRY_HOURS): the delivery is given up. */
  retryWindowMs: number;
  /** How often each node looks for due deliveries (GATEWAY_WEBHOOK_POLL_MS). */
  pollMs: number;
  /** Deliveries in flight at once per node (GATEWAY_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Attempts and ended deliveries older than this are deleted (GATEWAY_WEBHOOK_RETENTION_DAYS); 0 keeps them. */
  retentionDays: number;
}

export interface AccessAuditConfig {
  /** GATEWAY_ACCESS_AUDIT=on (default) or off. */
  enabled: boolean;
  /** GATEWAY_ACCESS_AUDIT_RETENTION_DAYS: rows older than this are swept; 0 keeps them for ever. */
  retentionDays: number;
  /** Period of the retention sweep (GATEWAY_SWEEP_INTERVAL_SECONDS, shared with the user-file sweep); 0: none. */
  sweepIntervalMs: number;
}

export interface FilesConfig {
  /** Where user files live: GATEWAY_USER_FILES_DIR, or <data>/user-files; a shared volume when several nodes run. */
  dir: string;
  /** A running export's lease: renewed by its node while it runs; once expired, any node fails the export. */
  leaseMs: number;
  /** GATEWAY_USER_FILES_STORE: the local folder `dir` (default) or S3. */
  store: UserFilesStoreConfig;
  /** How long a user file is kept after it was created (its `expires`; a link to it extends it). */
  retentionMs: number;
  /** How long an expired link is kept (answering 410) before the sweep removes it (then 404). */
  expiredLinkRetentionMs: number;
  /** Period of the sweep; 0 switches the periodic sweep off. */
  sweepIntervalMs: number;
  /** Largest lifeSpan (days) a link may be given. */
  maxLinkLifeSpanDays: number;
  /** Most entries in one batch request (either form). */
  batchMaxEntries: number;
  /** zlib level of batch zips: 0 stores entries uncompressed, 1-9 deflate them. */
  zipLevel: number;
  /** Exports built at the same time; more wait their turn (ready=false, nothing done yet). */
  exportConcurrency: number;
  /** Requests to the public download routes one client address may make per minute; 0 = no limit (429 beyond it). */
  publicRateLimitPerMinute: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const DAY_MS = 86_400_000;

export function loadConfig(env: Env = process.env): GatewayConfig {
  const dataDir = path.resolve(env.GATEWAY_DATA_DIR || './data');
  const port = parseInteger(env, 'PORT', 3000, 0, 65535);
  const file = env.GATEWAY_CONFIG ? readConfigFile(env.GATEWAY_CONFIG, env) : new ConfigFile();

  const connectors: ConnectorDefinition[] = (file.connectors ?? []).map((c) => ({
    id: c.id,
    typeId: c.typeId,
    description: c.description ?? '',
    params: c.params ?? {},
  }));
  const seen = new Set<string>();
  connectors.forEach((c, i) => {
    if (seen.has(c.id)) throw new ConfigError(`${configName(env)}: connectors[${i}].id: duplicate connector id '${c.id}'`);
    seen.add(c.id);
  });
  const connectorSource = connectors.length === 0 ? 'default' : 'declared';
  if (connectorSource === 'default') {
    connectors.push({
      id: 'fs',
      typeId: 'filesystem',
      description: 'Default filesystem repository',
      params: { root: path.join(dataDir, 'repository') },
    });
  }
  const headersTimeoutMs = parseInteger(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000);
  // Whole request, body included: it must cover the largest upload at the slowest client's rate.
  const requestTimeoutMs = parseInteger(env, 'GATEWAY_REQUEST_TIMEOUT_MS', 3_600_000, 0, 86_400_000);
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`GATEWAY_REQUEST_TIMEOUT_MS: must be 0 or at least GATEWAY_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }

  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir,
    contextPath: parseContextPath(env.GATEWAY_CONTEXT_PATH),
    adminUser: env.GATEWAY_ADMIN_USER || 'admin',
    adminPassword: env.GATEWAY_ADMIN_PASSWORD || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    connectors,
    connectorSource,
    users: (file.users ?? []).map((u) => ({ username: u.username, password: u.password, roles: u.roles ?? ['user'], groups: u.groups ?? [] })),
    auth: {
      cacheTtlMs: parseInteger(env, 'GATEWAY_AUTH_CACHE_SECONDS', 60, 0, 86400) * 1000,
      maxFailures: parseInteger(env, 'GATEWAY_LOGIN_MAX_FAILURES', 10, 1, 1_000_000),
      lockoutSeconds: parseInteger(env, 'GATEWAY_LOGIN_LOCKOUT_SECONDS', 300, 1, 86400),
      disabled: env.GATEWAY_AUTH_DISABLED === 'true',
      maxFailuresPerAddress: parseInteger(env, 'GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS', 100, 1, 1_000_000),
      // A quarter of the cores (at least one): argon2 is CPU- and memory-bound, and a flood must leave the rest to the I/O.
      verifyThreads: parseInteger(env, 'GATEWAY_LOGIN_VERIFY_THREADS', Math.max(1, Math.floor(os.availableParallelism() / 4)), 1, 64),
      verifyQueue: parseInteger(env, 'GATEWAY_LOGIN_VERIFY_QUEUE', 32, 0, 100_000),
    },
    nodeId: env.GATEWAY_NODE_ID || `${os.hostname()}:${port}`,
    jsonBodyLimit: parseInteger(env, 'GATEWAY_JSON_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxUploadBytes: parseInteger(env, 'GATEWAY_MAX_UPLOAD_BYTES', 10 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: parseLogFormat(env.LOG_FORMAT),
    shutdownGraceMs: parseInteger(env, 'GATEWAY_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    server: {
      headersTimeoutMs,
      requestTimeoutMs,
      // Above the upstream keep-alive of a proxy in front (nginx's upstream keepalive_timeout: 60 s), so
      // the proxy, not the gateway, closes an idle connection and never sends on one the gateway is closing.
      keepAliveTimeoutMs: parseInteger(env, 'GATEWAY_KEEP_ALIVE_TIMEOUT_MS', 75_000, 1_000, 3_600_000),
      databaseConnectTimeoutMs: parseInteger(env, 'DATABASE_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
      databaseQueryTimeoutMs: parseInteger(env, 'DATABASE_QUERY_TIMEOUT_MS', 60_000, 100, 3_600_000),
    },
    files: {
      dir: env.GATEWAY_USER_FILES_DIR ? path.resolve(env.GATEWAY_USER_FILES_DIR) : path.join(dataDir, 'user-files'),
      leaseMs: parseInteger(env, 'GATEWAY_EXPORT_LEASE_SECONDS', 30, 3, 3600) * 1000,
      store: parseUserFilesStore(env, connectors, (message) => new ConfigError(message)),
      retentionMs: parseInteger(env, 'GATEWAY_USER_FILE_RETENTION_DAYS', 7, 1, 3650) * DAY_MS,
      expiredLinkRetentionMs: parseInteger(env, 'GATEWAY_EXPIRED_LINK_RETENTION_HOURS', 24, 0, 87600) * 3_600_000,
      sweepIntervalMs: parseInteger(env, 'GATEWAY_SWEEP_INTERVAL_SECONDS', 300, 0, 86400) * 1000,
      maxLinkLifeSpanDays: parseInteger(env, 'GATEWAY_LINK_MAX_LIFESPAN_DAYS', 365, 1, 3650),
      batchMaxEntries: parseInteger(env, 'GATEWAY_BATCH_MAX_ENTRIES', 10_000, 1, 1_000_000),
      zipLevel: parseInteger(env, 'GATEWAY_BATCH_ZIP_LEVEL', 0, 0, 9),
      exportConcurrency: parseInteger(env, 'GATEWAY_EXPORT_CONCURRENCY', 2, 1, 64),
      publicRateLimitPerMinute: parseInteger(env, 'GATEWAY_PUBLIC_RATE_LIMIT', 120, 0, 1_000_000),
    },
    jobs: {
      definitions: jobDefinitions(file, env),
      redisUrl: parseRedisUrl(env.REDIS_URL),
      concurrency: parseInteger(env, 'GATEWAY_JOB_CONCURRENCY', 8, 1, 256),
      localConcurrency: parseInteger(env, 'GATEWAY_JOB_LOCAL_CONCURRENCY', 512, 1, 1024),
      auditRetentionDays: parseInteger(env, 'GATEWAY_JOB_AUDIT_RETENTION_DAYS', 30, 0, 36500),
    },
    webhooks: webhooksConfig(file, env),
    offload: parseOffload(env),
    accessAudit: {
      enabled: parseOnOff(env, 'GATEWAY_ACCESS_AUDIT', true),
      retentionDays: parseInteger(env, 'GATEWAY_ACCESS_AUDIT_RETENTION_DAYS', 365, 0, 36500),
      sweepIntervalMs: parseInteger(env, 'GATEWAY_SWEEP_INTERVAL_SECONDS', 300, 0, 86400) * 1000,
    },
    metricsPort: env.GATEWAY_METRICS_PORT ? parseInteger(env, 'GATEWAY_METRICS_PORT', 0, 1, 65535) : undefined,
    extraction: parseExtraction(env),
    uploads: {
      dir: env.GATEWAY_UPLOADS_DIR ? path.resolve(env.GATEWAY_UPLOADS_DIR) : path.join(dataDir, 'uploads'),
      expiryMs: parseInteger(env, 'GATEWAY_UPLOAD_EXPIRY_HOURS', 24, 1, 87600) * 3_600_000,
      quotaBytes: parseInteger(env, 'GATEWAY_UPLOAD_QUOTA_BYTES', 20 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      sweepIntervalMs: parseInteger(env, 'GATEWAY_SWEEP_INTERVAL_SECONDS', 300, 0, 86400) * 1000,
    },
  };
}

function parseOnOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on' || raw === 'true') return true;
  if (raw === 'off' || raw === 'false') return false;
  throw new ConfigError(`${name}: must be on or off (got '${env[name]}')`);
}

function parseExtraction(env: Env): ExtractionConfig {
  const raw = env.TIKA_URL?.trim() || undefined;
  if (raw !== undefined) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(`TIKA_URL: must be an http:// or https:// URL (got '${raw}')`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`TIKA_URL: must be an http:// or https:// URL (got '${raw}')`);
    if (url.search || url.hash || url.username || url.password) throw new ConfigError('TIKA_URL: must be the server\'s base URL, without query, fragment or credentials');
  }
  const caFile = env.TIKA_CA_FILE?.trim() || undefined;
  if (caFile && !fs.existsSync(caFile)) throw new ConfigError(`TIKA_CA_FILE: no such file '${caFile}'`);
  return { tikaUrl: raw, tikaTimeoutMs: parseInteger(env, 'TIKA_TIMEOUT_MS', 60_000, 1, 3_600_000), caFile: caFile ? path.resolve(caFile) : undefined };
}

function parseOffload(env: Env): OffloadConfig | undefined {
  const accel = env.GATEWAY_ACCEL_REDIRECT?.trim() || undefined;
  const sendfile = env.GATEWAY_SENDFILE_HEADER?.trim() || undefined;
  if (accel && sendfile) throw new ConfigError('GATEWAY_ACCEL_REDIRECT and GATEWAY_SENDFILE_HEADER: set one of them, not both');
  if (accel) {
    // The prefix starts every internal URI the proxy maps to a folder; it must not collide with public routes.
    if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(accel)) {
      throw new ConfigError(`GATEWAY_ACCEL_REDIRECT: must be the proxy's internal location prefix, like /_offload (got '${accel}')`);
    }
    return { kind: 'accel-redirect', prefix: accel };
  }
  if (sendfile) {
    if (!/^[A-Za-z0-9-]+$/.test(sendfile)) throw new ConfigError(`GATEWAY_SENDFILE_HEADER: must be a header name, like X-Sendfile (got '${sendfile}')`);
    return { kind: 'sendfile', header: sendfile };
  }
  return undefined;
}

function jobDefinitions(file: ConfigFile, env: Env): JobDefinition[] {
  const names = new Set<string>();
  return (file.jobs ?? []).map((j, i) => {
    if (names.has(j.jobName)) throw new ConfigError(`${configName(env)}: jobs[${i}].jobName: duplicate job name '${j.jobName}'`);
    names.add(j.jobName);
    return withDefaults(j);
  });
}

function webhooksConfig(file: ConfigFile, env: Env): WebhooksConfig {
  const urls = new Set<string>();
  (file.webhooks ?? []).forEach((w, i) => {
    if (urls.has(w.url)) throw new ConfigError(`${configName(env)}: webhooks[${i}].url: duplicate webhook url '${w.url}'`);
    urls.add(w.url);
  });
  const retryBaseMs = parseInteger(env, 'GATEWAY_WEBHOOK_RETRY_BASE_MS', 10_000, 100, 86_400_000);
  const retryMaxMs = parseInteger(env, 'GATEWAY_WEBHOOK_RETRY_MAX_MS', 3_600_000, 100, 86_400_000);
  if (retryMaxMs < retryBaseMs) throw new ConfigError(`GATEWAY_WEBHOOK_RETRY_MAX_MS: must be at least GATEWAY_WEBHOOK_RETRY_BASE_MS (${retryBaseMs})`);
  return {
    definitions: (file.webhooks ?? []).map((w) => ({ url: w.url, events: w.events, secret: w.secret })),
    timeoutMs: parseInteger(env, 'GATEWAY_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    retryBaseMs,
    retryMaxMs,
    retryWindowMs: parseInteger(env, 'GATEWAY_WEBHOOK_RETRY_HOURS', 24, 1, 720) * 3_600_000,
    pollMs: parseInteger(env, 'GATEWAY_WEBHOOK_POLL_MS', 1_000, 50, 60_000),
    concurrency: parseInteger(env, 'GATEWAY_WEBHOOK_CONCURRENCY', 16, 1, 1024),
    retentionDays: parseInteger(env, 'GATEWAY_WEBHOOK_RETENTION_DAYS', 7, 0, 36500),
  };
}

function parseRedisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^rediss?:\/\//i.test(raw.trim())) throw new ConfigError(`REDIS_URL: must start with redis:// or rediss:// (got '${raw.split(':')[0]}:')`);
  return raw.trim();
}

function configName(env: Env): string {
  return `GATEWAY_CONFIG (${env.GATEWAY_CONFIG})`;
}

function readConfigFile(file: string, env: Env): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${configName(env)}: cannot read file: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (e) {
    throw new ConfigError(`${configName(env)}: invalid YAML: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${configName(env)}: the top level must be a mapping with 'connectors', 'users' and/or 'jobs'`);
  }
  const interpolated = interpolate(raw, '', env);
  const instance = plainToInstance(ConfigFile, interpolated);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    throw new ConfigError(`${configName(env)}: ${flattenErrors(errors).join('; ')}`);
  }
  return instance;
}

/** Replaces ${NAME} in every string value with the environment variable NAME. */
function interpolate(value: unknown, keyPath: string, env: Env): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) throw new ConfigError(`GATEWAY_CONFIG: ${keyPath}: environment variable ${name} is not set`);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, `${keyPath}[${i}]`, env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolate(v, keyPath ? `${keyPath}.${k}` : k, env)]),
    );
  }
  return value;
}

function flattenErrors(errors: ValidationError[], prefix = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const key = /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) {
      for (const [name, msg] of Object.entries(e.constraints)) {
        out.push(name === 'whitelistValidation' ? `${key}: unknown key` : `${key}: ${withoutLeadingName(msg, e.property)}`);
      }
    }
    if (e.children?.length) out.push(...flattenErrors(e.children, key));
  }
  return out;
}

/** class-validator starts most messages with the property's name, which the key already shows. */
function withoutLeadingName(message: string, property: string): string {
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}

function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name}: must be an integer between ${min} and ${max} (got '${raw}')`);
  }
  return Number(raw);
}

function parseLogFormat(raw: string | undefined): 'pretty' | 'json' | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'pretty' || raw === 'json') return raw;
  throw new ConfigError(`LOG_FORMAT: must be pretty or json (got '${raw}')`);
}

function parseContextPath(raw: string | undefined): string {
  if (!raw || raw === '/') return '';
  const trimmed = raw.replace(/\/+$/, '');
  const withSlash = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(withSlash)) {
    throw new ConfigError(`GATEWAY_CONTEXT_PATH: must be a path like /gateway (got '${raw}')`);
  }
  return withSlash;
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // e.g. 'loopback' or '10.0.0.0/8, 127.0.0.1': Express parses it
}
