'use strict';
// Latency of GET /api/job/service/{id}/status while a 100,000-document filesystem → filesystem
// run is in progress, printed beside its latency when the gateway is idle (same process, same
// job). Counters live on the run row, so the call must not grow with the run; ratio = busy p50 / idle p50.
// Target: busy p99 < 100 ms (a status poll stays interactive during a run; the soak's event-loop bound).
const fs = require('node:fs');
const path = require('node:path');
const { workDir, median, printResult, printVerdict, benchmark } = require('./lib/harness');
const { startJobsGateway, api, defineJob } = require('./lib/jobs');

const DOCS = Number(process.env.BENCH_DOCS || 100_000);
const IDLE_SAMPLES = Number(process.env.BENCH_IDLE_SAMPLES || 300);
const BUSY_P99_TARGET_MS = 100;

function makeTree(root) {
  const marker = path.join(root, `.done-${DOCS}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  for (let i = 0; i < DOCS; i++) {
    const dir = path.join(root, 'tree', `d${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `document ${i}\n`);
  }
  fs.writeFileSync(marker, '');
}

async function timed(gw, p) {
  const t0 = process.hrtime.bigint();
  const body = await api(gw, 'GET', p);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, body };
}

function pct(values, q) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main() {
  const base = workDir('job-status-latency');
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot);
  const dstRoot = path.join(base, 'dst');
  fs.rmSync(dstRoot, { recursive: true, force: true });
  fs.mkdirSync(dstRoot, { recursive: true });
  const gw = await startJobsGateway(srcRoot, dstRoot);
  try {
    const jobId = await defineJob(gw, 'latency', '/tree', '/out');
    for (let i = 0; i < 50; i++) await timed(gw, `/job/service/${jobId}/status`); // warm-up
    const idle = [];
    for (let i = 0; i < IDLE_SAMPLES; i++) idle.push((await timed(gw, `/job/service/${jobId}/status`)).ms);

    await api(gw, 'GET', `/job/service/${jobId}/start`);
    const busy = [];
    const t0 = Date.now();
    let last;
    for (;;) {
      const { ms, body } = await timed(gw, `/job/service/${jobId}/status`);
      last = body.results;
      if (last.status !== 'RUNNING') break;
      busy.push(ms);
      await new Promise((r) => setTimeout(r, 10));
    }
    const runMs = Date.now() - t0;
    if (last.status !== 'COMPLETED' || last.written !== DOCS) throw new Error(`run ended ${last.status} with ${last.written}/${DOCS} written`);
    printResult(`job-status-latency (${DOCS} documents)`, {
      idle_p50_ms: Number(median(idle).toFixed(2)),
      idle_p99_ms: Number(pct(idle, 0.99).toFixed(2)),
      busy_p50_ms: Number(median(busy).toFixed(2)),
      busy_p99_ms: Number(pct(busy, 0.99).toFixed(2)),
      busy_samples: busy.length,
      run_s: Number((runMs / 1000).toFixed(1)),
      docs_per_s: last.perSec,
      ratio_p50: Number((median(busy) / median(idle)).toFixed(2)),
    });
    return printVerdict('job-status-latency', pct(busy, 0.99) < BUSY_P99_TARGET_MS, `status p99 during the run < ${BUSY_P99_TARGET_MS} ms`);
  } finally {
    await gw.stop();
  }
}

benchmark(module, main);
