'use strict';
// A sync job's second run against `rclone sync --track-renames` (issue 36): BENCH_SYNC_FILES files of
// 1 KiB (default 100,000) in 100 folders are synced filesystem → filesystem by a job (`mode: sync`,
// `deletions: delete`) and by rclone, untimed; then the change set of the acceptance is made
// at the source (1% changed, 0.5% deleted, 0.5% renamed, 0.5% moved to another folder, 1% added) and
// both sync again, timed, in alternating order per round (BENCH_ROUNDS, default 1; every round makes
// its own trees). Targets: the job's second run <= 1.0 x rclone's time, reading <= 2% of the content
// bytes. Bytes the job read: `bytesWritten` (between two filesystem connectors the copy thread reads
// each written file once: a direct copy, which bytesRead does not count) + `bytesRead` (streams opened
// by the job: hashing a rename candidate, copies through the event loop). Each target tree is then
// compared with the source (names and sizes).
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { gatewayApi: api, workDir, median, printResult, printVerdict, benchmark, processCpuMs } = require('./lib/harness');
const { startJobsGateway, runJob } = require('./lib/jobs');
const { ensureDebianPackage } = require('./lib/references');

const FILES = Number(process.env.BENCH_SYNC_FILES || 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 1);
const SIZE = 1024;
const FOLDERS = 100;
const TARGETS = { time_vs_rclone: 1.0, bytes_read_share: 0.02 };

function makeTree(root) {
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, `d${i % FOLDERS}`);
    if (i < FOLDERS) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.bin`), crypto.randomBytes(SIZE));
  }
}

/** The change set, the same for both tools (they read the one source). */
function changeTree(root) {
  const rel = (i) => path.join(root, `d${i % FOLDERS}`, `f${i}.bin`);
  const share = (p) => Math.max(1, Math.round(FILES * p));
  let i = 0;
  for (let n = share(0.01); n > 0; n--, i += 7) fs.writeFileSync(rel(i), crypto.randomBytes(SIZE));
  for (let n = share(0.005); n > 0; n--, i += 7) fs.rmSync(rel(i));
  for (let n = share(0.005); n > 0; n--, i += 7) fs.renameSync(rel(i), rel(i).replace(/f(\d+)\.bin$/, 'renamed-$1.bin'));
  for (let n = share(0.005); n > 0; n--, i += 7) fs.renameSync(rel(i), path.join(root, `d${(i + 1) % FOLDERS}`, `moved-${i}.bin`));
  for (let n = share(0.01), k = 0; n > 0; n--, k++) fs.writeFileSync(path.join(root, `d${k % FOLDERS}`, `new-${k}.bin`), crypto.randomBytes(SIZE));
}

/** Relative path → size of every file under root (the connector's metadata folder left out). */
function sizes(root) {
  const out = new Map();
  const walk = (dir, rel) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (rel === '' && e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else out.set(r, fs.statSync(path.join(dir, e.name)).size);
    }
  };
  walk(root, '');
  return out;
}

function sameTree(a, b, what) {
  const x = sizes(a);
  const y = sizes(b);
  const differ = [...x].filter(([k, v]) => y.get(k) !== v).length + [...y.keys()].filter((k) => !x.has(k)).length;
  if (differ > 0) throw new Error(`${what}: ${differ} paths differ from the source`);
}

function rcloneSync(rclone, src, dst) {
  const t0 = process.hrtime.bigint();
  execFileSync(rclone, ['sync', '--track-renames', '--transfers', '8', '--config', '/dev/null', src, dst]);
  execFileSync('sync');
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function main() {
  const rclone = ensureDebianPackage('rclone', 'rclone');
  const base = workDir('job-sync');
  fs.rmSync(base, { recursive: true, force: true });
  const srcRoot = path.join(base, 'src');
  const dstRoot = path.join(base, 'dst');
  const rcloneRoot = path.join(base, 'rclone');
  fs.mkdirSync(dstRoot, { recursive: true });
  fs.mkdirSync(rcloneRoot, { recursive: true });
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const jobMs = [];
  const rcloneMs = [];
  const shares = [];
  // The gateway's CPU time (all threads) during the second run: steadier than wall time on a shared machine.
  const jobCpuMs = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const tree = path.join(srcRoot, `r${round}`);
      makeTree(tree);
      const define = await api(gw, 'POST', '/admin/jobs', {
        jobName: `bench-sync-${round}`,
        source: { connectorId: 'src', folderPath: `/r${round}` },
        target: { connectorId: 'dst', folderPath: `/r${round}` },
        options: { mode: 'sync', deletions: 'delete' },
      });
      const jobId = define.results.jobId;
      const first = await runJob(gw, jobId, 100);
      if (first.status.status !== 'COMPLETED') throw new Error(`first job run ended ${first.status.status}`);
      const firstRclone = rcloneSync(rclone, tree, path.join(rcloneRoot, `r${round}`));
      console.log(`[bench] job-sync round ${round + 1}: first runs (untimed) job=${Math.round(first.ms)}ms rclone=${Math.round(firstRclone)}ms`);
      changeTree(tree);
      const steps = [
        async () => {
          const cpu0 = processCpuMs(gw.pid);
          const run = await runJob(gw, jobId, 20);
          jobCpuMs.push(processCpuMs(gw.pid) - cpu0);
          execFileSync('sync');
          if (run.status.status !== 'COMPLETED') throw new Error(`second job run ended ${run.status.status}`);
          jobMs.push(run.ms);
          const read = run.status.bytesWritten + run.status.bytesRead;
          shares.push(read / (FILES * SIZE));
          console.log(`[bench] job-sync round ${round + 1}: job second run ${JSON.stringify({ written: run.status.written, skipped: run.status.skipped, removed: run.status.removed, bytesWritten: run.status.bytesWritten, bytesRead: run.status.bytesRead })}`);
        },
        async () => rcloneMs.push(rcloneSync(rclone, tree, path.join(rcloneRoot, `r${round}`))),
      ];
      for (let i = 0; i < steps.length; i++) await steps[(i + round) % steps.length]();
      sameTree(tree, path.join(dstRoot, `r${round}`), 'job target');
      sameTree(tree, path.join(rcloneRoot, `r${round}`), 'rclone target');
      console.log(
        `[bench] job-sync round ${round + 1}: job=${Math.round(jobMs[round])}ms rclone=${Math.round(rcloneMs[round])}ms ` +
          `job_cpu=${Math.round(jobCpuMs[round])}ms time_vs_rclone=${(jobMs[round] / rcloneMs[round]).toFixed(3)} bytes_read_share=${(shares[round] * 100).toFixed(2)}% | load=${os.loadavg()[0].toFixed(1)}`,
      );
    }
  } finally {
    await gw.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
  const result = { time_vs_rclone: Number((median(jobMs) / median(rcloneMs)).toFixed(3)), bytes_read_share: Number(median(shares).toFixed(4)) };
  printResult(`job-sync (${FILES} files of ${SIZE} bytes, second run after the change set)`, {
    job_ms: Math.round(median(jobMs)),
    rclone_ms: Math.round(median(rcloneMs)),
    job_cpu_ms: Math.round(median(jobCpuMs)),
    job_rounds_ms: jobMs.map(Math.round).join('/'),
    rclone_rounds_ms: rcloneMs.map(Math.round).join('/'),
    ...result,
  });
  const pass = result.time_vs_rclone <= TARGETS.time_vs_rclone && result.bytes_read_share <= TARGETS.bytes_read_share;
  return printVerdict('job-sync', pass, `second run job/rclone time <= ${TARGETS.time_vs_rclone}, content bytes read <= ${TARGETS.bytes_read_share * 100}%`);
}

benchmark(module, main);
