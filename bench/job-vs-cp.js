'use strict';
// Filesystem → filesystem job throughput against `cp -r` and `rclone copy --transfers 8` of the
// same tree, all measured in this run on the same disk, alternating rounds, each round starting with
// the next tool (median of each, and
// every round printed: the machines are shared and one slow round says little). Two shapes:
//   small: 10,000 files of 1 KiB in 10 folders   targets: job >= 0.7 x rclone, job >= 0.8 x floor
//          floor: the filesystem connector's own per-document system calls and records made inline
//          in one thread with nothing else (lib/fs-copy-floor.js): the design's cost done serially.
//          A job spreads the same work over the copy thread and the records thread.
//   large: 10 files of 100 MiB                    target: job >= 0.8 x cp
// Ratios are throughputs (reference time / job time; job time: from the start call until the
// status says COMPLETED): vs_cp = cp/job, vs_rclone = rclone/job, vs_floor = floor/job,
// floor_vs_cp = cp/floor. rclone is the tool a user would weigh the gateway's jobs against.
// Every round writes to its own folder and nothing is deleted until all rounds are done: ext4
// skips recently freed inodes when it allocates new ones (ialloc's recently_deleted), so for
// about a minute after removing 10,000 files each new file costs up to 30x more system time
// (measured here: 20 us -> 330 us per create). Cleaning up between rounds made each round
// pay for the previous round's deletions, and the side creating more inodes pay most.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { settleAfterLastDelete, removeOutputs } = require('./lib/settle');
const { workDir, median, printResult, printVerdict, processCpuMs, threadCpuMs, threadCpuDelta, benchmark } = require('./lib/harness');
const { startJobsGateway, defineJob, runJob } = require('./lib/jobs');
const { ensureDebianPackage } = require('./lib/references');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
// How often the status is polled while a job runs. Each poll is a full authenticated request, and
// at 20 ms they were about a tenth of the gateway's CPU during a 10,000-document job: the client's
// load, not the job's. At 100 ms throughout, the end was seen 50 ms late on average (5% of a
// 1-second job, counted against it); so once 95% of the documents are finished it polls every
// FINISHING_POLL_MS, a few requests in all.
const POLL_MS = Number(process.env.BENCH_POLL_MS || 100);
const FINISHING_POLL_MS = Number(process.env.BENCH_FINISHING_POLL_MS || 5);
const finishing = (files) => ({ documents: Math.floor(files * 0.95), pollMs: FINISHING_POLL_MS });
// Untimed jobs of the same tree before the rounds (see below).
const WARM_JOBS = Number(process.env.BENCH_WARM_JOBS ?? 2);
const SHAPES = {
  small: { files: Number(process.env.BENCH_SMALL_FILES || 10_000), size: 1024, folders: 10, targets: { vs_rclone: 0.7, vs_floor: 0.8 }, floor: true },
  large: { files: Number(process.env.BENCH_LARGE_FILES || 10), size: Number(process.env.BENCH_LARGE_MB || 100) * 1024 * 1024, folders: 1, targets: { vs_cp: 0.8 } },
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

function timeRclone(rclone, src, dst) {
  const t0 = process.hrtime.bigint();
  execFileSync(rclone, ['copy', '--transfers', '8', '--config', '/dev/null', src, dst]);
  execFileSync('sync');
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Runs fn and returns [its result, CPU ms of the child processes it waited for]. */
function withChildCpu(fn) {
  const before = processCpuMs('self', true);
  const result = fn();
  return [result, processCpuMs('self', true) - before];
}

const ratioOf = (reference, job) => Number((reference / job).toFixed(3));
const perRound = (reference, job) => reference.map((r, i) => ratioOf(r, job[i])).join('/');

async function measure(name, shape) {
  const base = workDir(`job-vs-cp-${name}`);
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot, shape);
  const dstRoot = path.join(base, 'dst');
  const cpRoot = path.join(base, 'cp-out');
  removeOutputs(dstRoot, cpRoot);
  await settleAfterLastDelete('job-vs-cp');
  fs.mkdirSync(dstRoot, { recursive: true });
  fs.mkdirSync(cpRoot, { recursive: true });
  const rclone = ensureDebianPackage('rclone', 'rclone');
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const cpMs = [];
  const rcloneMs = [];
  const jobMs = [];
  const floorMs = [];
  const cpu = { cp: [], rclone: [], floor: [], job: [], job_main: [] };
  const timed = (list, cpuList, fn) => {
    const [ms, cpuMs] = withChildCpu(fn);
    list.push(ms);
    cpuList.push(cpuMs);
  };
  try {
    // The source in the page cache before every timed step, not once: this machine's cache does not
    // keep it between steps (a job after rclone read its sources from disk again: CPU in virtio kicks).
    const warm = () => execFileSync('sh', ['-c', 'find "$1" -type f -exec cat {} + > /dev/null', 'warm', path.join(srcRoot, 'tree')]);
    warm();
    // Untimed jobs first: V8 compiles and optimises the gateway's job path (and sizes its heap)
    // over the first tens of thousands of documents. On 27 Nov, three rounds on a fresh gateway
    // took 2,703 / 2,464 / 1,372 ms (main thread 1,450 / 1,270 / 870 ms): the rounds measured the
    // warm-up, not a job on a running gateway.
    for (let i = 0; i < WARM_JOBS; i++) {
      const run = await runJob(gw, await defineJob(gw, `bench-${name}-warm${i}`, '/tree', `/warm${i}`), POLL_MS, finishing(shape.files));
      console.log(`[bench] job-vs-cp ${name} warm-up job ${i + 1}: ${Math.round(run.ms)}ms (untimed)`);
    }
    for (let round = 0; round < ROUNDS; round++) {
      const steps = [
        async () => timed(cpMs, cpu.cp, () => timeCp(path.join(srcRoot, 'tree'), path.join(cpRoot, `out${round}`))),
        async () => timed(rcloneMs, cpu.rclone, () => timeRclone(rclone, path.join(srcRoot, 'tree'), path.join(cpRoot, `rclone${round}`))),
        async () => {
          const jobId = await defineJob(gw, `bench-${name}-${round}`, '/tree', `/out${round}`);
          // The gateway's threads, the main one (the event loop) among them: /proc/<pid>/task/<tid>/stat.
          const cpu0 = processCpuMs(gw.pid, false);
          const threads0 = threadCpuMs(gw.pid);
          const t0 = process.hrtime.bigint();
          const run = await runJob(gw, jobId, POLL_MS, finishing(shape.files));
          execFileSync('sync');
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          cpu.job.push(processCpuMs(gw.pid, false) - cpu0);
          const threads1 = threadCpuMs(gw.pid);
          const main = String(gw.pid);
          cpu.job_main.push(threads1.get(main).ms - threads0.get(main).ms);
          console.log(`[bench] job-vs-cp ${name} round ${round + 1} gateway threads (CPU ms): ${threadCpuDelta(threads0, threads1)}`);
          if (run.status.status !== 'COMPLETED' || run.status.written !== shape.files) {
            throw new Error(`job run ended ${run.status.status} with ${run.status.written}/${shape.files} written`);
          }
          jobMs.push(ms);
        },
        ...(shape.floor ? [async () => timed(floorMs, cpu.floor, () => timeFloor(path.join(srcRoot, 'tree'), path.join(cpRoot, `floor${round}`)))] : []),
      ];
      // Each round starts with the next tool: what one tool leaves behind (20,000 new inodes, a
      // journal to commit) costs the next one something, and no tool should always be the one after cp.
      for (let i = 0; i < steps.length; i++) {
        warm();
        await steps[(i + round) % steps.length]();
      }
      const r = (ms) => Math.round(ms[round]);
      console.log(
        `[bench] job-vs-cp ${name} round ${round + 1}: cp=${r(cpMs)}ms rclone=${r(rcloneMs)}ms` +
          (shape.floor ? ` floor=${r(floorMs)}ms` : '') +
          ` job=${r(jobMs)}ms vs_rclone=${ratioOf(rcloneMs[round], jobMs[round])}` +
          (shape.floor ? ` vs_floor=${ratioOf(floorMs[round], jobMs[round])}` : ` vs_cp=${ratioOf(cpMs[round], jobMs[round])}`) +
          ` | cpu: cp=${r(cpu.cp)}ms rclone=${r(cpu.rclone)}ms` +
          (shape.floor ? ` floor=${r(cpu.floor)}ms` : '') +
          ` job=${r(cpu.job)}ms (main thread ${r(cpu.job_main)}ms) | load=${require('node:os').loadavg()[0].toFixed(1)}`,
      );
    }
  } finally {
    await gw.stop();
    removeOutputs(dstRoot, cpRoot);
  }
  const job = median(jobMs);
  const ratios = {
    vs_cp: ratioOf(median(cpMs), job),
    vs_rclone: ratioOf(median(rcloneMs), job),
    ...(shape.floor ? { vs_floor: ratioOf(median(floorMs), job) } : {}),
  };
  const pass = Object.entries(shape.targets).every(([k, target]) => ratios[k] >= target);
  const mb = (shape.files * shape.size) / 1024 / 1024;
  printResult(`job-vs-cp (${name}: ${shape.files} files of ${shape.size} bytes)`, {
    cp_ms: Math.round(median(cpMs)),
    rclone_ms: Math.round(median(rcloneMs)),
    ...(shape.floor ? { floor_ms: Math.round(median(floorMs)) } : {}),
    job_ms: Math.round(job),
    cp_rounds_ms: cpMs.map(Math.round).join('/'),
    rclone_rounds_ms: rcloneMs.map(Math.round).join('/'),
    ...(shape.floor ? { floor_rounds_ms: floorMs.map(Math.round).join('/') } : {}),
    job_rounds_ms: jobMs.map(Math.round).join('/'),
    vs_cp_rounds: perRound(cpMs, jobMs),
    vs_rclone_rounds: perRound(rcloneMs, jobMs),
    ...(shape.floor ? { vs_floor_rounds: perRound(floorMs, jobMs), floor_vs_cp: ratioOf(median(cpMs), median(floorMs)) } : {}),
    cpu_rounds_ms: Object.entries(cpu)
      .filter(([, v]) => v.length > 0)
      .map(([k, v]) => `${k}:${v.map(Math.round).join('/')}`)
      .join(','),
    rclone_files_per_s: Math.round(shape.files / (median(rcloneMs) / 1000)),
    job_files_per_s: Math.round(shape.files / (job / 1000)),
    job_mb_per_s: Math.round(mb / (job / 1000)),
    ...ratios,
  });
  return pass;
}

async function main() {
  const wanted = (process.env.BENCH_JOB_SHAPES || 'small,large').split(',');
  let ok = true;
  for (const name of wanted) ok = (await measure(name, SHAPES[name])) && ok;
  const targets = wanted.map((name) => `${name}: ` + Object.entries(SHAPES[name].targets).map(([k, t]) => `job/${k.slice(3)} >= ${t}`).join(', '));
  return printVerdict('job-vs-cp', ok, targets.join('; '));
}

benchmark(module, main);
