import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, loadConfig } from './gateway-config';

let folder: string;
beforeAll(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-config-unit-'));
});
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

let files = 0;
function writeYaml(text: string): string {
  const file = path.join(folder, `gateway-${++files}.yaml`);
  fs.writeFileSync(file, text);
  return file;
}

/** The ConfigError loadConfig throws for this environment. */
function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('gives every setting its default on an empty environment', () => {
    const config = loadConfig({});
    const dataDir = path.resolve('./data');
    expect(config).toEqual({
      port: 3000,
      host: '0.0.0.0',
      dataDir,
      contextPath: '',
      adminUser: 'admin',
      adminPassword: undefined,
      databaseUrl: undefined,
      trustProxy: false,
      connectors: [{ id: 'fs', typeId: 'filesystem', description: 'Default filesystem repository', params: { root: path.join(dataDir, 'repository') } }],
      connectorSource: 'default',
      users: [],
      auth: { cacheTtlMs: 60_000, maxFailures: 10, lockoutSeconds: 300, disabled: false, maxFailuresPerAddress: 100, verifyThreads: Math.max(1, Math.floor(os.availableParallelism() / 4)), verifyQueue: 32 },
      nodeId: `${os.hostname()}:3000`,
      jsonBodyLimit: 1024 * 1024,
      maxUploadBytes: 10 * 1024 ** 3,
      logLevel: 'info',
      shutdownGraceMs: 10_000,
      server: { headersTimeoutMs: 20_000, requestTimeoutMs: 3_600_000, keepAliveTimeoutMs: 75_000, databaseConnectTimeoutMs: 10_000, databaseQueryTimeoutMs: 60_000 },
      files: {
        dir: path.join(dataDir, 'user-files'),
        leaseMs: 30_000,
        store: { kind: 'local' },
        retentionMs: 7 * 86_400_000,
        expiredLinkRetentionMs: 24 * 3_600_000,
        sweepIntervalMs: 300_000,
        maxLinkLifeSpanDays: 365,
        batchMaxEntries: 10_000,
        zipLevel: 0,
        exportConcurrency: 2,
        publicRateLimitPerMinute: 120,
      },
      jobs: { definitions: [], redisUrl: undefined, concurrency: 8, localConcurrency: 512, auditRetentionDays: 30 },
      webhooks: {
        definitions: [],
        timeoutMs: 10_000,
        retryBaseMs: 10_000,
        retryMaxMs: 3_600_000,
        retryWindowMs: 24 * 3_600_000,
        pollMs: 1_000,
        concurrency: 16,
        retentionDays: 7,
      },
      accessAudit: { enabled: true, retentionDays: 365, sweepIntervalMs: 300_000 },
      extraction: { tikaUrl: undefined, tikaTimeoutMs: 60_000, caFile: undefined },
      uploads: { dir: path.resolve('./data', 'uploads'), expiryMs: 24 * 3_600_000, quotaBytes: 20 * 1024 ** 3, sweepIntervalMs: 300_000 },
    });
  });

  it('GATEWAY_ACCESS_AUDIT: on or off, anything else refused naming the variable', () => {
    expect(loadConfig({ GATEWAY_ACCESS_AUDIT: 'off' }).accessAudit.enabled).toBe(false);
    expect(loadConfig({ GATEWAY_ACCESS_AUDIT: 'on' }).accessAudit.enabled).toBe(true);
    expect(() => loadConfig({ GATEWAY_ACCESS_AUDIT: 'maybe' })).toThrow(/GATEWAY_ACCESS_AUDIT: must be on or off/);
    expect(loadConfig({ GATEWAY_ACCESS_AUDIT_RETENTION_DAYS: '0' }).accessAudit.retentionDays).toBe(0);
    expect(() => loadConfig({ GATEWAY_ACCESS_AUDIT_RETENTION_DAYS: '-1' })).toThrow(/GATEWAY_ACCESS_AUDIT_RETENTION_DAYS/);
  });

  it('reads every setting from its environment variable', () => {
    const config = loadConfig({
      GATEWAY_DATA_DIR: '/srv/gateway',
      PORT: '8080',
      HOST: '127.0.0.1',
      GATEWAY_CONTEXT_PATH: 'gateway/v1/',
      GATEWAY_ADMIN_USER: 'root',
      GATEWAY_ADMIN_PASSWORD: 'root-password',
      DATABASE_URL: 'postgres://db/gateway',
      TRUST_PROXY: '2',
      GATEWAY_AUTH_CACHE_SECONDS: '0',
      GATEWAY_LOGIN_MAX_FAILURES: '3',
      GATEWAY_LOGIN_LOCKOUT_SECONDS: '60',
      GATEWAY_AUTH_DISABLED: 'true',
      GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '7',
      GATEWAY_LOGIN_VERIFY_THREADS: '1',
      GATEWAY_LOGIN_VERIFY_QUEUE: '5',
      GATEWAY_NODE_ID: 'node-a',
      GATEWAY_USER_FILES_DIR: '/shared/user-files',
      GATEWAY_EXPORT_LEASE_SECONDS: '10',
      GATEWAY_JSON_LIMIT_BYTES: '2048',
      GATEWAY_MAX_UPLOAD_BYTES: '0',
      GATEWAY_PUBLIC_RATE_LIMIT: '0',
      LOG_LEVEL: 'debug',
      GATEWAY_SHUTDOWN_GRACE_MS: '0',
      GATEWAY_HEADERS_TIMEOUT_MS: '5000',
      GATEWAY_REQUEST_TIMEOUT_MS: '0',
      GATEWAY_KEEP_ALIVE_TIMEOUT_MS: '61000',
      GATEWAY_USER_FILE_RETENTION_DAYS: '1',
      GATEWAY_EXPIRED_LINK_RETENTION_HOURS: '0',
      GATEWAY_SWEEP_INTERVAL_SECONDS: '5',
      GATEWAY_LINK_MAX_LIFESPAN_DAYS: '30',
      GATEWAY_BATCH_MAX_ENTRIES: '50',
      GATEWAY_BATCH_ZIP_LEVEL: '9',
      GATEWAY_EXPORT_CONCURRENCY: '4',
      REDIS_URL: ' rediss://cache:6380 ',
      GATEWAY_JOB_CONCURRENCY: '16',
      GATEWAY_JOB_LOCAL_CONCURRENCY: '64',
      GATEWAY_JOB_AUDIT_RETENTION_DAYS: '0',
      GATEWAY_UPLOADS_DIR: '/shared/uploads',
      GATEWAY_UPLOAD_EXPIRY_HOURS: '2',
      GATEWAY_UPLOAD_QUOTA_BYTES: '0',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/srv/gateway',
      contextPath: '/gateway/v1',
      adminUser: 'root',
      adminPassword: 'root-password',
      databaseUrl: 'postgres://db/gateway',
      trustProxy: 2,
      auth: { cacheTtlMs: 0, maxFailures: 3, lockoutSeconds: 60, disabled: true, maxFailuresPerAddress: 7, verifyThreads: 1, verifyQueue: 5 },
      nodeId: 'node-a',
      jsonBodyLimit: 2048,
      maxUploadBytes: 0,
      logLevel: 'debug',
      shutdownGraceMs: 0,
      server: { headersTimeoutMs: 5000, requestTimeoutMs: 0, keepAliveTimeoutMs: 61_000, databaseConnectTimeoutMs: 10_000, databaseQueryTimeoutMs: 60_000 },
      files: {
        dir: '/shared/user-files',
        leaseMs: 10_000,
        store: { kind: 'local' },
        retentionMs: 86_400_000,
        expiredLinkRetentionMs: 0,
        sweepIntervalMs: 5000,
        maxLinkLifeSpanDays: 30,
        batchMaxEntries: 50,
        zipLevel: 9,
        exportConcurrency: 4,
        publicRateLimitPerMinute: 0,
      },
      jobs: { redisUrl: 'rediss://cache:6380', concurrency: 16, localConcurrency: 64, auditRetentionDays: 0 },
      uploads: { dir: '/shared/uploads', expiryMs: 2 * 3_600_000, quotaBytes: 0, sweepIntervalMs: 5000 },
    });
    expect(config.connectors[0].params).toEqual({ root: '/srv/gateway/repository' });
  });

  it.each([
    ['GATEWAY_UPLOAD_EXPIRY_HOURS', '0'],
    ['GATEWAY_UPLOAD_QUOTA_BYTES', '-1'],
    ['GATEWAY_UPLOAD_QUOTA_BYTES', 'lots'],
  ])('refuses %s=%s naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('switches authentication off only for exactly "true"', () => {
    expect(loadConfig({ GATEWAY_AUTH_DISABLED: 'TRUE' }).auth.disabled).toBe(false);
    expect(loadConfig({ GATEWAY_AUTH_DISABLED: '1' }).auth.disabled).toBe(false);
  });

  it.each([
    ['PORT', '0', 0],
    ['PORT', '65535', 65535],
    ['GATEWAY_LOGIN_MAX_FAILURES', '1', 1],
    ['GATEWAY_LOGIN_MAX_FAILURES', '1000000', 1_000_000],
    ['GATEWAY_BATCH_ZIP_LEVEL', '0', 0],
  ])('accepts %s=%s at the edge of its range', (name, value, expected) => {
    const config = loadConfig({ [name]: value });
    const read = { PORT: config.port, GATEWAY_LOGIN_MAX_FAILURES: config.auth.maxFailures, GATEWAY_BATCH_ZIP_LEVEL: config.files.zipLevel };
    expect(read[name as keyof typeof read]).toBe(expected);
  });

  it.each([
    ['PORT', 'http', 0, 65535],
    ['PORT', '65536', 0, 65535],
    ['PORT', '-1', 0, 65535],
    ['PORT', '80.5', 0, 65535],
    ['PORT', ' 80', 0, 65535],
    ['GATEWAY_LOGIN_MAX_FAILURES', '0', 1, 1000000],
    ['GATEWAY_BATCH_ZIP_LEVEL', '10', 0, 9],
    ['GATEWAY_JSON_LIMIT_BYTES', '1023', 1024, 1073741824],
  ])('refuses %s=%j, naming the variable and its range', (name, value, min, max) => {
    expect(refusal({ [name]: value }).message).toBe(`${name}: must be an integer between ${min} and ${max} (got '${value}')`);
  });

  it.each([
    ['/', ''],
    ['/gateway', '/gateway'],
    ['gateway', '/gateway'],
    ['/gateway//', '/gateway'],
    ['/a.b/c_d/e~f-g', '/a.b/c_d/e~f-g'],
  ])('reads the context path %j as %j', (raw, expected) => {
    expect(loadConfig({ GATEWAY_CONTEXT_PATH: raw }).contextPath).toBe(expected);
  });

  it.each(['/a b', '/a//b', '/a/?x', '/%2e'])('refuses the context path %j', (raw) => {
    expect(refusal({ GATEWAY_CONTEXT_PATH: raw }).message).toBe(`GATEWAY_CONTEXT_PATH: must be a path like /gateway (got '${raw}')`);
  });

  it.each([
    [undefined, undefined],
    ['pretty', 'pretty'],
    ['json', 'json'],
  ])('reads LOG_FORMAT=%j as %j (undefined: decided by whether stdout is a terminal)', (raw, expected) => {
    expect(loadConfig({ LOG_FORMAT: raw }).logFormat).toBe(expected);
  });

  it('refuses an unknown LOG_FORMAT, naming the variable', () => {
    expect(refusal({ LOG_FORMAT: 'text' }).message).toBe("LOG_FORMAT: must be pretty or json (got 'text')");
  });

  it.each([
    ['false', false],
    ['true', true],
    ['1', 1],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8, 127.0.0.1'],
  ])('passes TRUST_PROXY=%j to Express as %j', (raw, expected) => {
    expect(loadConfig({ TRUST_PROXY: raw }).trustProxy).toBe(expected);
  });

  it('refuses a request time-out shorter than the headers time-out (Node would throw at start)', () => {
    expect(refusal({ GATEWAY_HEADERS_TIMEOUT_MS: '30000', GATEWAY_REQUEST_TIMEOUT_MS: '10000' }).message).toMatch(/^GATEWAY_REQUEST_TIMEOUT_MS: must be 0 or at least GATEWAY_HEADERS_TIMEOUT_MS \(30000\)/);
    expect(loadConfig({ GATEWAY_HEADERS_TIMEOUT_MS: '30000', GATEWAY_REQUEST_TIMEOUT_MS: '0' }).server.requestTimeoutMs).toBe(0);
  });

  it('refuses a REDIS_URL of another scheme, and ignores a blank one', () => {
    expect(refusal({ REDIS_URL: 'http://cache:6379' }).message).toBe("REDIS_URL: must start with redis:// or rediss:// (got 'http:')");
    expect(loadConfig({ REDIS_URL: '  ' }).jobs.redisUrl).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'REDIS://cache' }).jobs.redisUrl).toBe('REDIS://cache');
  });

  it('reads the download offload (one kind at most) and the metrics port', () => {
    expect(loadConfig({}).offload).toBeUndefined();
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ GATEWAY_ACCEL_REDIRECT: '/_offload' }).offload).toEqual({ kind: 'accel-redirect', prefix: '/_offload' });
    expect(loadConfig({ GATEWAY_SENDFILE_HEADER: 'X-Sendfile' }).offload).toEqual({ kind: 'sendfile', header: 'X-Sendfile' });
    expect(loadConfig({ GATEWAY_METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(refusal({ GATEWAY_ACCEL_REDIRECT: '/_offload', GATEWAY_SENDFILE_HEADER: 'X-Sendfile' }).message).toMatch(/set one of them, not both/);
    expect(refusal({ GATEWAY_ACCEL_REDIRECT: '_offload/../x' }).message).toMatch(/^GATEWAY_ACCEL_REDIRECT: /);
    expect(refusal({ GATEWAY_ACCEL_REDIRECT: '/_offload/' }).message).toMatch(/^GATEWAY_ACCEL_REDIRECT: /);
    expect(refusal({ GATEWAY_SENDFILE_HEADER: 'X-Sendfile: /etc' }).message).toMatch(/^GATEWAY_SENDFILE_HEADER: /);
    expect(refusal({ GATEWAY_METRICS_PORT: '0' }).message).toMatch(/^GATEWAY_METRICS_PORT: /);
  });
});

describe('loadConfig: text extraction (TIKA_*)', () => {
  it('reads the Tika URL, its time-out and CA file, and refuses what cannot be a Tika base URL', () => {
    const ca = path.join(folder, 'tika-ca.pem');
    fs.writeFileSync(ca, 'not checked here');
    expect(loadConfig({ TIKA_URL: ' http://127.0.0.1:9998 ', TIKA_TIMEOUT_MS: '5000', TIKA_CA_FILE: ca }).extraction).toEqual({
      tikaUrl: 'http://127.0.0.1:9998',
      tikaTimeoutMs: 5000,
      caFile: ca,
    });
    expect(loadConfig({ TIKA_URL: '  ' }).extraction.tikaUrl).toBeUndefined();
    expect(refusal({ TIKA_URL: 'ftp://tika:21' }).message).toBe("TIKA_URL: must be an http:// or https:// URL (got 'ftp://tika:21')");
    expect(refusal({ TIKA_URL: 'tika:9998' }).message).toMatch(/^TIKA_URL: /);
    expect(refusal({ TIKA_URL: 'http://user:secret@tika:9998' }).message).toMatch(/^TIKA_URL: must be the server's base URL/);
    expect(refusal({ TIKA_TIMEOUT_MS: '0' }).message).toMatch(/^TIKA_TIMEOUT_MS: must be an integer between 1 and 3600000/);
    expect(refusal({ TIKA_CA_FILE: path.join(folder, 'missing.pem') }).message).toMatch(/^TIKA_CA_FILE: no such file/);
  });
});

describe('loadConfig with a GATEWAY_CONFIG file', () => {
  it('declares connectors, users and jobs, with ${ENV} values interpolated at any depth', () => {
    const file = writeYaml(`
connectors:
  - id: docs
    typeId: filesystem
    description: Team documents
    params:
      root: \${DOCS_ROOT}
      nested: { list: ["\${DOCS_ROOT}/a", 7] }
  - id: archive
    typeId: filesystem
users:
  - username: reader
    password: \${READER_PASSWORD}
  - username: boss
    password: boss-password-1
    roles: [admin, user]
    groups: [finance, staff]
jobs:
  - jobName: nightly
    source: { connectorId: docs, folderPath: /in/ }
    target: { connectorId: archive, folderPath: /out }
`);
    const config = loadConfig({ GATEWAY_CONFIG: file, DOCS_ROOT: '/srv/docs', READER_PASSWORD: 'reader-secret-1' });
    expect(config.connectors).toEqual([
      { id: 'docs', typeId: 'filesystem', description: 'Team documents', params: { root: '/srv/docs', nested: { list: ['/srv/docs/a', 7] } } },
      { id: 'archive', typeId: 'filesystem', description: '', params: {} },
    ]);
    expect(config.users).toEqual([
      { username: 'reader', password: 'reader-secret-1', roles: ['user'], groups: [] },
      { username: 'boss', password: 'boss-password-1', roles: ['admin', 'user'], groups: ['finance', 'staff'] },
    ]);
    expect(config.jobs.definitions).toEqual([
      {
        jobName: 'nightly',
        jobGroup: 'default',
        source: { connectorId: 'docs', folderPath: '/in', recursive: true },
        target: { connectorId: 'archive', folderPath: '/out' },
        options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [] },
      },
    ]);
  });

  it('keeps the default filesystem connector for an empty file', () => {
    expect(loadConfig({ GATEWAY_CONFIG: writeYaml('') }).connectors.map((c) => c.id)).toEqual(['fs']);
    expect(loadConfig({ GATEWAY_CONFIG: writeYaml('users: []\n') }).connectors.map((c) => c.id)).toEqual(['fs']);
  });

  it.each([
    ['an unknown top-level key', 'connector:\n  - id: x\n', 'connector: unknown key'],
    ['an unknown connector key', 'connectors:\n  - id: x\n    typeId: filesystem\n    prams: {}\n', 'connectors[0].prams: unknown key'],
    ['a missing typeId', 'connectors:\n  - id: x\n', 'connectors[0].typeId: must be a string'],
    ['a bad connector id', 'connectors:\n  - id: "a/b"\n    typeId: filesystem\n', 'connectors[0].id: must be letters, digits, _ . - (at most 64), starting with a letter or digit'],
    [
      'a duplicate connector id',
      'connectors:\n  - {id: a, typeId: filesystem}\n  - {id: b, typeId: filesystem}\n  - {id: a, typeId: filesystem}\n',
      "connectors[2].id: duplicate connector id 'a'",
    ],
    ['a short user password', 'users:\n  - {username: u, password: short}\n', 'users[0].password: must be longer than or equal to 8 characters'],
    ['an unknown role', 'users:\n  - {username: u, password: long-enough-pw, roles: [root]}\n', 'users[0].roles: each value in roles must be one of the following values: admin, user'],
    ['a group of reserved form', 'users:\n  - {username: u, password: long-enough-pw, groups: [__everyone__]}\n', 'users[0].groups: each group must be letters, digits, _ . @ - (at most 128), starting with a letter or digit'],
    ['a group list that is not a list', 'users:\n  - {username: u, password: long-enough-pw, groups: staff}\n', 'users[0].groups: All groups\'s elements must be unique; users[0].groups: must contain no more than 64 elements; users[0].groups: must be an array'],
    [
      'a duplicate job name',
      'jobs:\n  - {jobName: j, source: {connectorId: a, folderPath: /}, target: {connectorId: b, folderPath: /}}\n  - {jobName: j, source: {connectorId: a, folderPath: /}, target: {connectorId: b, folderPath: /x}}\n',
      "jobs[1].jobName: duplicate job name 'j'",
    ],
    ['a job with a relative folder', 'jobs:\n  - {jobName: j, source: {connectorId: a, folderPath: in}, target: {connectorId: b, folderPath: /}}\n', 'jobs[0].source.folderPath: must be an absolute path starting with /'],
    ['a list at the top level', '- a\n- b\n', "the top level must be a mapping with 'connectors', 'users' and/or 'jobs'"],
    ['a scalar at the top level', 'just text\n', "the top level must be a mapping with 'connectors', 'users' and/or 'jobs'"],
  ])('refuses %s, naming the file and the key', (_what, text, message) => {
    const file = writeYaml(text);
    expect(refusal({ GATEWAY_CONFIG: file }).message).toBe(`GATEWAY_CONFIG (${file}): ${message}`);
  });

  it('refuses an unset environment variable, naming the key that uses it', () => {
    const file = writeYaml('users:\n  - {username: u, password: "x${NOT_SET_ANYWHERE_42}"}\n');
    expect(refusal({ GATEWAY_CONFIG: file }).message).toBe('GATEWAY_CONFIG: users[0].password: environment variable NOT_SET_ANYWHERE_42 is not set');
  });

  it('leaves text that only looks like a reference alone', () => {
    const file = writeYaml('users:\n  - {username: u, password: "$HOME-${1X}-${}-pw"}\n');
    expect(loadConfig({ GATEWAY_CONFIG: file }).users[0].password).toBe('$HOME-${1X}-${}-pw');
  });

  it('refuses invalid YAML and a file it cannot read, naming the file', () => {
    const bad = writeYaml('connectors: [\n');
    expect(refusal({ GATEWAY_CONFIG: bad }).message).toMatch(new RegExp(`^GATEWAY_CONFIG \\(${bad}\\): invalid YAML: `));
    const missing = path.join(folder, 'missing.yaml');
    expect(refusal({ GATEWAY_CONFIG: missing }).message).toMatch(new RegExp(`^GATEWAY_CONFIG \\(${missing}\\): cannot read file: ENOENT`));
  });
});
