'use strict';
// Filesystem → filesystem copy jobs with `verify: hash` (issue 33) against `rclone copy` of the same
// tree, and against the same job with `verify: none`, all in this run on the same disk, alternating
// rounds (each round starts with the next step; medians; every round printed).
// rclone copy between two local folders hashes both sides (MD5 of the source as it streams, then of
// the written file) and compares them, as `verify: hash` does with SHA-256: the like-for-like tool.
//   large: 10 × 100 MiB     targets: job(hash) ≥ 1.0 × rclone; job(hash) costs ≤ 15 % against job(none)
//   small: 10,000 × 1 KiB   target:  job(hash) ≥ 0.8 × rclone
//   huge (only when asked: BENCH_VERIFY_SHAPES=huge): 10 × 1 GiB, one verified job; target: the
//          gateway's peak RSS < 250 MB (sampled every 50 ms).
// Ratios are throughputs: rclone time / job time, and none time / hash time (cost = 1 − that).
// CPU time is printed beside (the gateway's process, rclone as a waited-for child; summed over the
// rounds): on a loaded shared machine wall times stretch, CPU time barely moves.
// The gateway runs as shipped (metrics on, default log level, the shipped start command).
// Outputs stay until the end (see job-vs-cp.js on ext4's recently freed inodes).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { workDir, median, printResult, printVerdict, sampleRss, processCpuMs, benchmark, gatewayApi } = require('./lib/harness');
const { startJobsGateway, runJob } = require('./lib/jobs');
const { makeFile } = require('./lib/files');
const { ensureDebianPackage } = require('./lib/references');
const { settleAfterLastDelete, removeOutputs } = require('./lib/settle');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const MiB = 1024 * 1024;
const SHAPES = {
  large: { files: 10, size: 100 * MiB, folders: 1, targets: { hash_vs_rclone: 1.0, hash_vs_none: 0.85 } },
  small: { files: Number(process.env.BENCH_SMALL_FILES || 10_000), size: 1024, folders: 10, targets: { hash_vs_rclone: 0.8 } },
  huge: { files: 10, size: 1024 * MiB, folders: 1, rssOnly: true, targets: {} },
};
const RSS_TARGET_MB = 250;

function makeTree(root, shape) {
  const marker = path.join(root, `.done-${shape.files}-${shape.size}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  for (let i = 0; i < shape.files; i++) {
    const dir = path.join(root, 'tree', `d${i % shape.folders}`);
    fs.mkdirSync(dir, { recursive: true });
    makeFile(path.join(dir, `f${i}.bin`), shape.size);
  }
  fs.writeFileSync(marker, '');
}

async function defineJob(gw, name, targetPath, verify) {
  const res = await gatewayApi(gw, 'POST', '/admin/jobs', {
    jobName: name,
    source: { connectorId: 'src', folderPath: '/tree' },
    target: { connectorId: 'dst', folderPath: targetPath },
    options: { verify },
  });
  return res.results.jobId;
}

const ratio = (a, b) => Number((a / b).toFixed(3));

async function measure(name, shape) {
  const base = workDir(`job-verify-${name}`);
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot, shape);
  const dstRoot = path.join(base, 'dst');
  const rcloneRoot = path.join(base, 'rclone-out');
  removeOutputs(dstRoot, rcloneRoot);
  for (const d of [dstRoot, rcloneRoot]) fs.mkdirSync(d, { recursive: true });
  await settleAfterLastDelete('job-verify');
  const rclone = ensureDebianPackage('rclone', 'rclone');
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const warm = () => execFileSync('sh', ['-c', 'find "$1" -type f -exec cat {} + > /dev/null', 'warm', path.join(srcRoot, 'tree')]);
  const times = { rclone: [], hash: [], none: [] };
  const cpu = { rclone: 0, hash: 0, none: 0 };
  let peakRss = 0;
  const job = async (verify, label) => {
    const id = await defineJob(gw, `verify-${name}-${label}`, `/${label}`, verify);
    const rss = sampleRss(gw.pid);
    const t0 = process.hrtime.bigint();
    const cpu0 = processCpuMs(gw.pid);
    const run = await runJob(gw, id, 100, { documents: Math.floor(shape.files * 0.95), pollMs: 5 });
    if (label !== 'warmup') cpu[verify] += processCpuMs(gw.pid) - cpu0;
    execFileSync('sync');
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    peakRss = Math.max(peakRss, rss.stop());
    if (run.status.status !== 'COMPLETED' || run.status.written !== shape.files) {
      throw new Error(`job (verify ${verify}) ended ${run.status.status} with ${run.status.written}/${shape.files} written, ${run.status.failed} failed`);
    }
    return ms;
  };
  const timedRclone = (round) => {
    const t0 = process.hrtime.bigint();
    const cpu0 = processCpuMs('self', true);
    execFileSync(rclone, ['copy', '--transfers', '8', '--config', '/dev/null', path.join(srcRoot, 'tree'), path.join(rcloneRoot, `r${round}`)]);
    cpu.rclone += processCpuMs('self', true) - cpu0;
    execFileSync('sync');
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  try {
    warm();
    if (shape.rssOnly) {
      times.hash.push(await job('hash', 'hash0'));
    } else {
      // One untimed job: V8 compiles the job path first (see job-vs-cp.js).
      await job('hash', 'warmup');
      for (let round = 0; round < ROUNDS; round++) {
        const steps = [
          async () => times.rclone.push(timedRclone(round)),
          async () => times.hash.push(await job('hash', `hash${round}`)),
          ...(shape.targets.hash_vs_none ? [async () => times.none.push(await job('none', `none${round}`))] : []),
        ];
        for (let i = 0; i < steps.length; i++) {
          warm();
          await steps[(i + round) % steps.length]();
        }
        const r = (k) => (times[k][round] === undefined ? '-' : Math.round(times[k][round]));
        console.log(`[bench] job-verify ${name} round ${round + 1}: rclone=${r('rclone')}ms hash=${r('hash')}ms none=${r('none')}ms load=${os.loadavg()[0].toFixed(1)}`);
      }
    }
  } finally {
    await gw.stop();
    removeOutputs(dstRoot, rcloneRoot);
  }
  const mb = (shape.files * shape.size) / MiB;
  const hash = median(times.hash);
  const figures = {
    hash_ms: Math.round(hash),
    hash_rounds_ms: times.hash.map(Math.round).join('/'),
    hash_mb_per_s: Math.round(mb / (hash / 1000)),
    peak_rss_mb: Math.round(peakRss / 1e6),
    hash_cpu_ms: Math.round(cpu.hash / times.hash.length),
  };
  if (times.rclone.length) Object.assign(figures, { rclone_ms: Math.round(median(times.rclone)), rclone_rounds_ms: times.rclone.map(Math.round).join('/'), hash_vs_rclone: ratio(median(times.rclone), hash), rclone_cpu_ms: Math.round(cpu.rclone / times.rclone.length) });
  if (times.none.length) Object.assign(figures, { none_ms: Math.round(median(times.none)), none_rounds_ms: times.none.map(Math.round).join('/'), hash_vs_none: ratio(median(times.none), hash), none_cpu_ms: Math.round(cpu.none / times.none.length) });
  printResult(`job-verify (${name}: ${shape.files} files of ${shape.size} bytes)`, figures);
  const pass = Object.entries(shape.targets).every(([k, t]) => figures[k] >= t) && (!shape.rssOnly || peakRss / 1e6 < RSS_TARGET_MB);
  return pass;
}

async function main() {
  const wanted = (process.env.BENCH_VERIFY_SHAPES || 'large,small').split(',');
  let ok = true;
  for (const name of wanted) ok = (await measure(name, SHAPES[name])) && ok;
  return printVerdict(
    'job-verify',
    ok,
    'large: hash/rclone >= 1.0 and hash costs <= 15% vs none (none/hash >= 0.85); small: hash/rclone >= 0.8; huge (when asked): peak RSS < 250 MB',
  );
}

benchmark(module, main);
