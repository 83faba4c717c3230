'use strict';
// Filesystem → filesystem job throughput against `cp -r` of the same tree, both measured in
// this run on the same disk, alternating rounds (median of each). Two shapes:
//   small: 10,000 files of 1 KiB in 10 folders   target ratio >= 0.5
//          also timed: the connector's own system calls made inline (lib/fs-copy-floor.js), the
//          floor a job can approach; floor_ratio = cp / floor, job_vs_floor = floor / job.
//   large: 10 files of 100 MiB                    target ratio >= 0.8
// ratio = cp time / job time (job time: from the start call until the status says COMPLETED).
// Every round writes to its own folder and nothing is deleted until all rounds are done: ext4
// skips recently freed inodes when it allocates new ones (ialloc's recently_deleted), so for
// about a minute after removing 10,000 files each new file costs up to 30x more system time
// (measured here: 20 us -> 330 us per create). Cleaning up between rounds made each round
// pay for the previous round's deletions, and the side creating more inodes pay most.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { workDir, median, printResult } = require('./lib/harness');
const { startJobsGateway, defineJob, runJob } = require('./lib/jobs');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SHAPES = {
  small: { files: Number(process.env.BENCH_SMALL_FILES || 10_000), size: 1024, folders: 10, target: 0.5, floor: true },
  large: { files: Number(process.env.BENCH_LARGE_FILES || 10), size: Number(process.env.BENCH_LARGE_MB || 100) * 1024 * 1024, folders: 1, target: 0.8 },
};

function makeTree(root, shape) {
  const marker = path.join(root, `.done-${shape.files}-${shape.size}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  const block = crypto.randomBytes(Math.min(shape.size, 8 * 1024 * 1024));
  for (let i = 0; i < shape.files; i++) {
    const dir = path.join(root, 'tree', `d${i % shape.folders}`);
    fs.mkdirSync(dir, { recursive: true });
    const fd = fs.openSync(path.join(dir, `f${i}.bin`), 'w');
    for (let written = 0; written < shape.size; written += block.length) fs.writeSync(fd, block, 0, Math.min(block.length, shape.size - written));
    fs.closeSync(fd);
  }
  fs.writeFileSync(marker, '');
}

function timeFloor(src, dst) {
  return JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'lib/fs-copy-floor.js'), src, dst], { encoding: 'utf8' })).ms;
}

function timeCp(src, dst) {
  const t0 = process.hrtime.bigint();
  execFileSync('cp', ['-r', src, dst]);
  execFileSync('sync');
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function measure(name, shape) {
  const base = workDir(`job-vs-cp-${name}`);
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot, shape);
  const dstRoot = path.join(base, 'dst');
  const cpRoot = path.join(base, 'cp-out');
  fs.rmSync(dstRoot, { recursive: true, force: true });
  fs.rmSync(cpRoot, { recursive: true, force: true });
  fs.mkdirSync(dstRoot, { recursive: true });
  fs.mkdirSync(cpRoot, { recursive: true });
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const cpMs = [];
  const jobMs = [];
  const floorMs = [];
  try {
    execFileSync('sh', ['-c', 'find "$1" -type f -exec cat {} + > /dev/null', 'warm', path.join(srcRoot, 'tree')]); // warm the page cache for both
    for (let round = 0; round < ROUNDS; round++) {
      cpMs.push(timeCp(path.join(srcRoot, 'tree'), path.join(cpRoot, `out${round}`)));
      const jobId = await defineJob(gw, `bench-${name}-${round}`, '/tree', `/out${round}`);
      const t0 = process.hrtime.bigint();
      const run = await runJob(gw, jobId);
      execFileSync('sync');
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (run.status.status !== 'COMPLETED' || run.status.written !== shape.files) {
        throw new Error(`job run ended ${run.status.status} with ${run.status.written}/${shape.files} written`);
      }
      jobMs.push(ms);
      if (shape.floor) floorMs.push(timeFloor(path.join(srcRoot, 'tree'), path.join(cpRoot, `floor${round}`)));
    }
  } finally {
    await gw.stop();
    fs.rmSync(dstRoot, { recursive: true, force: true });
    fs.rmSync(cpRoot, { recursive: true, force: true });
  }
  const ratio = median(cpMs) / median(jobMs);
  const mb = (shape.files * shape.size) / 1024 / 1024;
  printResult(`job-vs-cp (${name}: ${shape.files} files of ${shape.size} bytes)`, {
    cp_ms: Math.round(median(cpMs)),
    job_ms: Math.round(median(jobMs)),
    cp_rounds_ms: cpMs.map(Math.round).join('/'),
    job_rounds_ms: jobMs.map(Math.round).join('/'),
    ...(shape.floor
      ? { floor_ms: Math.round(median(floorMs)), floor_ratio: Number((median(cpMs) / median(floorMs)).toFixed(3)), job_vs_floor: Number((median(floorMs) / median(jobMs)).toFixed(3)) }
      : {}),
    cp_files_per_s: Math.round(shape.files / (median(cpMs) / 1000)),
    job_files_per_s: Math.round(shape.files / (median(jobMs) / 1000)),
    cp_mb_per_s: Math.round(mb / (median(cpMs) / 1000)),
    job_mb_per_s: Math.round(mb / (median(jobMs) / 1000)),
    ratio: Number(ratio.toFixed(3)),
    target: `>=${shape.target}`,
    verdict: ratio >= shape.target ? 'PASS' : 'FAIL',
  });
  return ratio >= shape.target;
}

async function main() {
  const wanted = (process.env.BENCH_JOB_SHAPES || 'small,large').split(',');
  let ok = true;
  for (const name of wanted) ok = (await measure(name, SHAPES[name])) && ok;
  return ok;
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
