'use strict';
// The gateway's request logger (apps/api/src/logging/request-logger.ts, built) against pino-http configured
// as the gateway had it (quiet request and response loggers, the request line as success and error
// object), each alone in front of the same bare node:http answer, on the same pino root (the gateway's
// redaction paths) writing to /dev/null. Each server in a child process of its own; autocannon at
// BENCH_CONNECTIONS (20) for BENCH_SECONDS, alternating rounds; the server's CPU per request (/proc) and
// its throughput. The A/B that justifies an own middleware instead of the library (issue 40, decision 0104).
// Target: own/pino-http CPU per request <= 0.8.
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { ROOT, ensureBuilt, freePort, waitFor, stopper, processCpuMs, median, printResult, printVerdict, benchmark } = require('./lib/harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 20);
const NAME = 'request-logger';

const SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const pino = require('pino');
const { pinoHttp } = require('pino-http');
const { requestLogger } = require(${JSON.stringify(path.join(ROOT, 'dist/apps/api/src/logging/request-logger.js'))});
const { requestLine, markRequestStart } = require(${JSON.stringify(path.join(ROOT, 'dist/apps/api/src/logging/request-line.js'))});
const root = pino({ level: 'info', redact: { paths: ['*.headers.authorization', '*.headers.cookie', '*.headers["proxy-authorization"]', '*.headers["set-cookie"]', 'password', '*.password', 'body.password'], censor: '[redacted]' } }, fs.createWriteStream('/dev/null'));
const middleware = process.env.SIDE === 'own' ? requestLogger(root) : pinoHttp({
  logger: root,
  genReqId: (req, res) => { markRequestStart(req); const id = require('node:crypto').randomUUID(); res.setHeader('X-Request-Id', id); return id; },
  quietReqLogger: true, quietResLogger: true,
  customSuccessObject: (req, res, v) => requestLine(req, res, v.responseTime),
  customErrorObject: (req, res, _e, v) => requestLine(req, res, v.responseTime),
  customSuccessMessage: () => 'request completed', customErrorMessage: () => 'request failed',
  customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
  autoLogging: { ignore: (req) => (req.url ?? '').endsWith('/api/health') },
});
const body = JSON.stringify({ success: true, results: [{ id: 'fs', name: 'fs' }] });
http.createServer((req, res) => middleware(req, res, () => { res.setHeader('Content-Type', 'application/json'); res.end(body); })).listen(Number(process.env.PORT), '127.0.0.1');
`;

async function start(side) {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', SERVER], { cwd: ROOT, env: { PATH: process.env.PATH, PORT: String(port), SIDE: side }, stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(baseUrl + '/x');
  return { pid: child.pid, baseUrl, stop: stopper(child) };
}

function load(url) {
  return new Promise((resolve, reject) => autocannon({ url, connections: CONNECTIONS, duration: SECONDS }, (err, r) => (err ? reject(err) : resolve(r))));
}

async function main() {
  ensureBuilt();
  const servers = { own: await start('own'), pinoHttp: await start('pino-http') };
  try {
    for (const s of Object.values(servers)) await load(s.baseUrl + '/x');
    const rounds = { own: [], pinoHttp: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const [side, s] of Object.entries(servers)) {
        const cpu0 = processCpuMs(s.pid);
        const r = await load(s.baseUrl + '/x');
        rounds[side].push({ rps: r.requests.average, cpuUs: ((processCpuMs(s.pid) - cpu0) * 1000) / r.requests.total });
      }
    }
    const m = (side, key) => median(rounds[side].map((r) => r[key]));
    const ratio = m('own', 'cpuUs') / m('pinoHttp', 'cpuUs');
    printResult(NAME, { own_cpu_us_per_req: m('own', 'cpuUs'), pino_http_cpu_us_per_req: m('pinoHttp', 'cpuUs'), cpu_ratio: ratio, own_rps: m('own', 'rps'), pino_http_rps: m('pinoHttp', 'rps'), rounds: ROUNDS });
    return printVerdict(NAME, ratio <= 0.8, 'own/pino-http CPU per request <= 0.8');
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}

benchmark(module, main);
