'use strict';
// Shared benchmark plumbing: start the built gateway, sample its memory, run load, print the verdict.
// Benchmarks print ratios against a reference measured in the same run: the machines are shared and noisy.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');

/**
 * The shipped start command, package.json's `start` script (`[NAME=value ...] node [flags] <script>`):
 * benchmarks run the gateway exactly as production starts it, process flags included.
 */
function startCommand() {
  const words = require(path.join(ROOT, 'package.json')).scripts.start.trim().split(/\s+/);
  const env = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift().split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`package.json's start script does not run node: ${words.join(' ')}`);
  return { env, args: words };
}

function ensureBuilt() {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-if-needed.js')], { cwd: ROOT, stdio: 'inherit' });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function workDir(name) {
  const dir = path.join(ROOT, 'bench/.work', name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

async function waitFor(url, timeoutMs = 30_000, init) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, init);
      if (res.status < 500) return;
    } catch {
      // not yet listening
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${url}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts the built gateway in production's configuration: the start command of package.json, the default
 * log level, metrics on (GATEWAY_METRICS_PORT on a free port); `env` adds to it or overrides it (a benchmark
 * that measures a setting says so). Resolves once /api/health answers.
 */
async function startGateway(env = {}) {
  ensureBuilt();
  const port = await freePort();
  const metricsPort = await freePort();
  const command = startCommand();
  const dataDir = env.GATEWAY_DATA_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  // BENCH_GATEWAY_NODE_ARGS, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof': to profile the gateway under a benchmark.
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS || '').split(' ').filter(Boolean);
  // BENCH_GATEWAY_ENV, e.g. 'GATEWAY_JOB_CONCURRENCY=32 UV_THREADPOOL_SIZE=2': settings to weigh under a benchmark.
  const extraEnv = Object.fromEntries((process.env.BENCH_GATEWAY_ENV || '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const gatewayEnv = {
    PATH: process.env.PATH,
    ...command.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    GATEWAY_METRICS_PORT: String(metricsPort),
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_PASSWORD: 'bench-admin-password',
    ...extraEnv,
    ...env,
  };
  const child = spawn(process.execPath, [...nodeArgs, ...command.args], {
    cwd: ROOT,
    env: gatewayEnv,
    // BENCH_GW_STDOUT=1 passes the gateway's stdout through: its logs, and what V8 prints there
    // (`BENCH_GATEWAY_NODE_ARGS='--trace-gc --trace-gc-nvp'`: each collection's pause, survivors and promotion).
    stdio: ['ignore', process.env.BENCH_GW_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${baseUrl}/api/health`);
  return {
    pid: child.pid,
    port,
    metricsPort: gatewayEnv.GATEWAY_METRICS_PORT ? Number(gatewayEnv.GATEWAY_METRICS_PORT) : undefined,
    baseUrl,
    dataDir,
    auth: 'Basic ' + Buffer.from('admin:bench-admin-password').toString('base64'),
    stop: stopper(child),
  };
}

/** A child process's stop: SIGTERM, resolved once it has exited. */
function stopper(child) {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
}

/** Resident set size of a process in bytes (Linux /proc). */
function rssBytes(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

// CPU time (user + system) beside wall time: the machines are shared, and a loaded one stretches
// wall times unevenly (a single-threaded server more than a multi-threaded one) while CPU time
// barely moves. Linux /proc, in clock ticks (10 ms): sum it over rounds, not per short round.
const TICK_MS = 1000 / Number(require('node:child_process').execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);
/** CPU ms of process `pid` ('self' for this one) so far; with `children`, of the children it waited for. */
function processCpuMs(pid, children = false) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime, stime are fields 14 and 15; cutime, cstime (waited-for children) 16 and 17
  const [u, s] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
  return (Number(u) + Number(s)) * TICK_MS;
}

/** CPU ms of each thread of a process (processCpuMs of /proc/<pid>/task/<tid>), by thread id, with the thread's name ('main' for the event loop). */
function threadCpuMs(pid) {
  const threads = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? 'main' : fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.set(tid, { name, ms: processCpuMs(`${pid}/task/${tid}`) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}

/** What each thread of a process spent between two threadCpuMs snapshots, as `name=ms` (the busiest first, idle ones left out). */
function threadCpuDelta(before, after) {
  return [...after]
    .map(([tid, t]) => ({ name: `${t.name}#${tid}`, ms: t.ms - (before.get(tid)?.ms ?? 0) }))
    .filter((t) => t.ms > 0)
    .sort((a, b) => b.ms - a.ms)
    .map((t) => `${t.name}=${Math.round(t.ms)}`)
    .join(' ');
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak. */
function sampleRss(pid, everyMs = 50) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // process gone
    }
  }, everyMs);
  return { stop: () => (clearInterval(timer), peak), peak: () => peak };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function printResult(name, fields) {
  const parts = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toFixed(3) : v}`);
  console.log(`[bench] ${name}: ${parts.join(' ')}`);
}

/**
 * The line every benchmark ends with: `verdict=PASS` or `verdict=FAIL` against its current target, printed
 * beside it (`target: gateway/relay >= 0.9`). Returns whether it passed, which `run.js` sums up.
 */
function printVerdict(name, pass, target) {
  console.log(`[bench] ${name}: verdict=${pass ? 'PASS' : 'FAIL'} target: ${target}`);
  return pass;
}

/** A JSON call to the gateway's API as its admin (`p` below /api); the whole envelope, or an error naming the status. */
async function gatewayApi(gw, method, p, body) {
  const res = await fetch(`${gw.baseUrl}/api${p}`, {
    method,
    headers: { Authorization: gw.auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * An engine of the test harness (test/engines): the one a test run already started (GATEWAY_ENGINES_FILE),
 * else one started here, the harness loaded with ts-node's transpiler (it is TypeScript).
 */
async function startEngine(name) {
  const file = process.env.GATEWAY_ENGINES_FILE;
  const shared = file && fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).engines[name] : undefined;
  if (shared) return { info: shared, stop: async () => undefined };
  if (!process[Symbol.for('ts-node.register.instance')]) require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  const { startEngines } = require(path.join(ROOT, 'test/engines/start.ts'));
  const { [name]: engine } = await startEngines([name], { log: (line) => process.stderr.write(`[engines] ${line}\n`) });
  return { info: engine, stop: () => engine.stop() };
}

/** Exports a benchmark's main for bench/run.js, and runs it when its file is run on its own (exit 0 pass, 1 fail, 2 error). */
function benchmark(mod, main) {
  mod.exports = main;
  if (require.main === mod) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
}

module.exports = { ROOT, benchmark, stopper, gatewayApi, ensureBuilt, freePort, workDir, waitFor, startGateway, startEngine, rssBytes, processCpuMs, threadCpuMs, threadCpuDelta, sampleRss, median, printResult, printVerdict };
