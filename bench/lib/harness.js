'use strict';
// Shared benchmark plumbing: start the built gateway, sample its memory, run load.
// Benchmarks print ratios against a reference measured in the same run, never
// absolute thresholds: the machines are shared and noisy.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const MAIN_JS = path.join(ROOT, 'dist/apps/api/src/main.js');

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

/** Starts the built gateway with the given environment; resolves once /api/health answers. */
async function startGateway(env = {}) {
  ensureBuilt();
  const port = await freePort();
  const dataDir = env.GATEWAY_DATA_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  // BENCH_GATEWAY_NODE_ARGS, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof': to profile the gateway under a benchmark.
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS || '').split(' ').filter(Boolean);
  // BENCH_GATEWAY_ENV, e.g. 'GATEWAY_JOB_CONCURRENCY=32 UV_THREADPOOL_SIZE=2': settings to weigh under a benchmark.
  const extraEnv = Object.fromEntries((process.env.BENCH_GATEWAY_ENV || '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const child = spawn(process.execPath, [...nodeArgs, MAIN_JS], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_PASSWORD: 'bench-admin-password',
      LOG_LEVEL: 'warn',
      ...extraEnv,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${baseUrl}/api/health`);
  return {
    pid: child.pid,
    port,
    baseUrl,
    dataDir,
    auth: 'Basic ' + Buffer.from('admin:bench-admin-password').toString('base64'),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
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

module.exports = { ROOT, gatewayApi, ensureBuilt, freePort, workDir, waitFor, startGateway, rssBytes, processCpuMs, sampleRss, median, printResult };
