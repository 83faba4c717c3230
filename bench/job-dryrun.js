'use strict';
// A dry run (`start?dryRun=true`, issue 34 §3) of a filesystem → filesystem job against the real run of the same
// job, on one gateway as shipped (metrics on): BENCH_DOCS (10,000) files of BENCH_DOC_KIB (100) KiB in 10 folders,
// each run into a fresh, empty target folder. A round times one dry run and one real run, the order alternating
// (each on a job of its own, so neither sees what the other did); two untimed runs of each kind come first (V8
// compiles both paths). The gateway's CPU time per run is printed beside the wall times: on a loaded shared
// machine it is the steadier figure. Target: median dry-run time ≤ 0.2 × median real-run time.
// BENCH_ROUNDS (5). Outputs stay until the end of the run (bench/README.md, job-vs-cp: deletes on this VM's ext4).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { workDir, median, printResult, printVerdict, processCpuMs } = require('./lib/harness');
const { startJobsGateway, api, defineJob } = require('./lib/jobs');

const DOCS = Number(process.env.BENCH_DOCS || 10_000);
const DOC_KIB = Number(process.env.BENCH_DOC_KIB || 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.2;

function makeTree(root) {
  const marker = path.join(root, `.done-${DOCS}x${DOC_KIB}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  const block = Buffer.alloc(DOC_KIB * 1024);
  for (let i = 0; i < DOCS; i++) {
    const dir = path.join(root, 'tree', `d${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) fs.mkdirSync(dir, { recursive: true });
    block.writeUInt32BE(i, 0); // no two files alike
    fs.writeFileSync(path.join(dir, `f${i}.bin`), block);
  }
  fs.writeFileSync(marker, '');
}

/** Starts a run (a dry one or not) and polls its status until it ends: wall and gateway CPU milliseconds, and the status. */
async function timedRun(gw, jobId, dryRun) {
  const cpu0 = processCpuMs(gw.pid);
  const t0 = process.hrtime.bigint();
  await api(gw, 'GET', `/job/service/${jobId}/start${dryRun ? '?dryRun=true' : ''}`);
  for (;;) {
    const s = (await api(gw, 'GET', `/job/service/${jobId}/status`)).results;
    if (!['RUNNING', 'PAUSING', 'ABORTING'].includes(s.status)) {
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: processCpuMs(gw.pid) - cpu0, status: s };
    }
    await new Promise((r) => setTimeout(r, s.written + s.skipped + s.failed >= DOCS * 0.95 ? 5 : 50));
  }
}

async function main() {
  const base = workDir('job-dryrun');
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot);
  const dstRoot = path.join(base, `dst-${Date.now()}`);
  fs.mkdirSync(dstRoot, { recursive: true });
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const times = { dry: { ms: [], cpuMs: [] }, real: { ms: [], cpuMs: [] } };
  let job = 0;
  const run = async (kind) => {
    const jobId = await defineJob(gw, `j${++job}`, '/tree', `/out-${job}`);
    const result = await timedRun(gw, jobId, kind === 'dry');
    const { status } = result;
    if (status.status !== 'COMPLETED' || status.written !== DOCS || status.dryRun !== (kind === 'dry')) {
      throw new Error(`${kind} run ended ${status.status} (dryRun ${status.dryRun}) with ${status.written}/${DOCS} written`);
    }
    if (kind === 'dry' && (fs.existsSync(path.join(dstRoot, `out-${job}`)) || status.bytesRead !== 0)) throw new Error('the dry run wrote or read content');
    return result;
  };
  try {
    for (const kind of ['dry', 'real', 'dry', 'real']) await run(kind);
    for (let round = 0; round < ROUNDS; round++) {
      const line = {};
      for (const kind of round % 2 === 0 ? ['dry', 'real'] : ['real', 'dry']) {
        const { ms, cpuMs } = await run(kind);
        times[kind].ms.push(ms);
        times[kind].cpuMs.push(cpuMs);
        line[`${kind}_s`] = ms / 1000;
        line[`${kind}_cpu_s`] = cpuMs / 1000;
      }
      line.ratio = line.dry_s / line.real_s;
      line.load = os.loadavg()[0];
      printResult(`job-dryrun round ${round + 1}`, line);
    }
    const ratio = median(times.dry.ms) / median(times.real.ms);
    printResult(`job-dryrun (${DOCS} × ${DOC_KIB} KiB, filesystem → filesystem, ${ROUNDS} rounds)`, {
      dry_median_s: median(times.dry.ms) / 1000,
      real_median_s: median(times.real.ms) / 1000,
      dry_docs_per_s: Math.round(DOCS / (median(times.dry.ms) / 1000)),
      real_docs_per_s: Math.round(DOCS / (median(times.real.ms) / 1000)),
      ratio,
      cpu_ratio: median(times.dry.cpuMs) / median(times.real.cpuMs),
    });
    return printVerdict('job-dryrun', ratio <= TARGET, `dry-run time / real-run time <= ${TARGET} (medians of ${ROUNDS})`);
  } finally {
    await gw.stop();
    fs.rmSync(dstRoot, { recursive: true, force: true });
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
