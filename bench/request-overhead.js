'use strict';
// The request path itself (issue 40): the gateway's smallest authenticated answer, GET /api/repo/connections
// with Basic credentials, against a bare Nest 11 + Express app answering the same JSON from one controller
// (lib/bare-nest-json.js). The gateway as shipped (metrics on, default log level, the start command); bare
// Nest with its default logger. autocannon at BENCH_CONNECTIONS (20) for BENCH_SECONDS each, alternating
// rounds after a warm-up of each; medians. CPU per request of each process (/proc) beside: on two shared
// cores wall-clock throughput follows the machine's load, CPU per request much less.
// Targets: gateway/bare throughput >= 0.5, and gateway p50 <= bare p50 + 1 ms.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { ROOT, startGateway, freePort, waitFor, stopper, processCpuMs, workDir, median, printResult, printVerdict, benchmark } = require('./lib/harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 20);
const ROUTE = '/api/repo/connections';
const NAME = 'request-overhead';

function load(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0) return reject(new Error(`${result.non2xx} non-2xx answers from ${url}`));
      resolve({ rps: result.requests.average, p50: result.latency.p50, total: result.requests.total });
    });
  });
}

async function startBareNest(bodyFile) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, 'lib/bare-nest-json.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: String(port), BENCH_BODY_FILE: bodyFile, BENCH_ROUTE: ROUTE },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(baseUrl + ROUTE);
  return { pid: child.pid, baseUrl, stop: stopper(child) };
}

/** One measured round: throughput, p50 and the server's CPU per request (µs). */
async function round(server, headers) {
  const cpu0 = processCpuMs(server.pid);
  const r = await load(server.baseUrl + ROUTE, headers);
  return { ...r, cpuUs: ((processCpuMs(server.pid) - cpu0) * 1000) / r.total };
}

async function main() {
  const gateway = await startGateway();
  let bare;
  try {
    const answer = await fetch(gateway.baseUrl + ROUTE, { headers: { Authorization: gateway.auth } });
    if (!answer.ok) throw new Error(`GET ${ROUTE}: ${answer.status}`);
    const bodyFile = path.join(workDir(NAME), 'connections.json');
    fs.writeFileSync(bodyFile, await answer.text());
    bare = await startBareNest(bodyFile);
    const sides = { gateway: [gateway, { Authorization: gateway.auth }], bare: [bare, {}] };
    for (const [server, headers] of Object.values(sides)) await load(server.baseUrl + ROUTE, headers); // warm-up: JIT, the verification cache
    const rounds = { gateway: [], bare: [] };
    for (let i = 0; i < ROUNDS; i++) for (const [side, [server, headers]] of Object.entries(sides)) rounds[side].push(await round(server, headers));
    const m = (side, key) => median(rounds[side].map((r) => r[key]));
    const ratio = m('gateway', 'rps') / m('bare', 'rps');
    const p50Gap = m('gateway', 'p50') - m('bare', 'p50');
    printResult(NAME, {
      gateway_rps: m('gateway', 'rps'),
      bare_nest_rps: m('bare', 'rps'),
      ratio,
      gateway_p50_ms: m('gateway', 'p50'),
      bare_nest_p50_ms: m('bare', 'p50'),
      gateway_cpu_us_per_req: m('gateway', 'cpuUs'),
      bare_nest_cpu_us_per_req: m('bare', 'cpuUs'),
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
    });
    return printVerdict(NAME, ratio >= 0.5 && p50Gap <= 1, 'gateway/bare Nest throughput >= 0.5 and p50 <= bare + 1 ms');
  } finally {
    await bare?.stop();
    await gateway.stop();
  }
}

benchmark(module, main);
