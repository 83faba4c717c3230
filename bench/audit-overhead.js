'use strict';
// The access audit's cost (issue 38): the same build run twice, GATEWAY_ACCESS_AUDIT=on and off, each on a
// data folder of its own holding the same repository (the 1 GiB file hard-linked into both). Alternating
// rounds in this run, medians compared:
// - small: authenticated GETs of a 1 KiB document (GET /api/repo/fs/file, every one an audit row), autocannon;
// - large: one 1 GiB download with curl.
// Target: on/off >= 0.95 on both (throughput for small, 1/time for large). CPU time per request and per GiB of
// each gateway is printed beside them: on the shared machine it moves far less than wall time. At the end, the rows the audited
// gateway wrote are counted through GET /api/admin/audit: the audit did run.
// A control: a third gateway, the audit off like `off`, measured in the same rounds (each round starts with the
// next of the three). control/off is what two identical gateways differ by on this machine in this run: when it
// is itself below the target, the run cannot tell a 5 % cost and says so (`noise_floor`). On 29 Nov, under load 3–5,
// two identical gateways differed by 0.55–1.17 on the 1 GiB download while their CPU per GiB matched the audit's.
const fs = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { startGateway, median, printResult, printVerdict, workDir, gatewayApi, processCpuMs } = require('./lib/harness');
const { makeFile, curlGet } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 20);
const TARGET = 0.95;

function load(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0) return reject(new Error(`${result.non2xx} non-2xx answers from ${url}`));
      resolve(result);
    });
  });
}

/** A data folder whose repository holds small.txt and big.bin (a hard link to `big`). */
function dataFolder(name, big) {
  const data = path.join(workDir('audit-overhead'), name);
  fs.rmSync(data, { recursive: true, force: true });
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  fs.writeFileSync(path.join(repo, 'small.txt'), 'x'.repeat(1024));
  fs.linkSync(big, path.join(repo, 'big.bin'));
  return data;
}

async function idOf(gw, name) {
  return encodeURIComponent((await gatewayApi(gw, 'GET', `/repo/fs/idbypath?folderPath=/&fileName=${name}`)).results.id);
}

async function main() {
  const big = path.join(workDir('audit-overhead'), 'big.bin');
  makeFile(big, SIZE);
  const on = await startGateway({ GATEWAY_DATA_DIR: dataFolder('on', big), GATEWAY_ACCESS_AUDIT: 'on' });
  const off = await startGateway({ GATEWAY_DATA_DIR: dataFolder('off', big), GATEWAY_ACCESS_AUDIT: 'off' });
  const control = await startGateway({ GATEWAY_DATA_DIR: dataFolder('control', big), GATEWAY_ACCESS_AUDIT: 'off' });
  try {
    const sides = { on, off, control };
    const urls = {};
    for (const [name, gw] of Object.entries(sides)) {
      urls[name] = { small: `${gw.baseUrl}/api/repo/fs/file?id=${await idOf(gw, 'small.txt')}`, large: `${gw.baseUrl}/api/repo/fs/file?id=${await idOf(gw, 'big.bin')}` };
    }
    const rps = { on: [], off: [], control: [] };
    const seconds = { on: [], off: [], control: [] };
    // CPU time of each gateway beside wall time: the machine is shared, and CPU per request barely moves with its load.
    const cpu = Object.fromEntries(Object.keys(sides).map((name) => [name, { small: 0, smallRequests: 0, large: 0 }]));
    const timed = async (name, kind, work) => {
      const before = processCpuMs(sides[name].pid);
      const result = await work();
      cpu[name][kind] += processCpuMs(sides[name].pid) - before;
      return result;
    };
    let requests = 0;
    // Warm-up: JIT, the first argon2 verification that fills the cache, the page cache.
    for (const [name, gw] of Object.entries(sides)) {
      const warm = await load(urls[name].small, { Authorization: gw.auth });
      curlGet(urls[name].large, { Authorization: gw.auth });
      if (name === 'on') requests += warm.requests.total + 1;
    }
    for (let i = 0; i < ROUNDS; i++) {
      // Each round starts with the next side, so drift of the shared machine hits all three.
      const names = Object.keys(sides);
      const order = names.map((_, k) => names[(k + i) % names.length]);
      for (const name of order) {
        const result = await timed(name, 'small', () => load(urls[name].small, { Authorization: sides[name].auth }));
        rps[name].push(result.requests.average);
        cpu[name].smallRequests += result.requests.total;
        if (name === 'on') requests += result.requests.total;
      }
      for (const name of order) {
        const r = await timed(name, 'large', async () => curlGet(urls[name].large, { Authorization: sides[name].auth }));
        if (r.status !== 200 || r.bytes !== SIZE) throw new Error(`${name} answered ${r.status} with ${r.bytes} bytes`);
        seconds[name].push(r.seconds);
        if (name === 'on') requests += 1;
      }
    }
    // Every audited answer is a row once the last batch is written (at most 1 s later).
    await new Promise((r) => setTimeout(r, 1500));
    const rows = await countRows(on);
    const smallRatio = median(rps.on) / median(rps.off);
    const largeRatio = median(seconds.off) / median(seconds.on);
    const smallControl = median(rps.control) / median(rps.off);
    const largeControl = median(seconds.off) / median(seconds.control);
    printResult('audit-overhead', {
      small_rps_on: median(rps.on),
      small_rps_off: median(rps.off),
      small_ratio: smallRatio,
      large_mib_s_on: SIZE / 1024 ** 2 / median(seconds.on),
      large_mib_s_off: SIZE / 1024 ** 2 / median(seconds.off),
      large_ratio: largeRatio,
      small_control_ratio: smallControl,
      large_control_ratio: largeControl,
      small_cpu_us_per_request_on: (1000 * cpu.on.small) / cpu.on.smallRequests,
      small_cpu_us_per_request_off: (1000 * cpu.off.small) / cpu.off.smallRequests,
      small_cpu_us_per_request_control: (1000 * cpu.control.small) / cpu.control.smallRequests,
      large_cpu_ms_per_gib_on: cpu.on.large / ROUNDS / (SIZE / 1024 ** 3),
      large_cpu_ms_per_gib_off: cpu.off.large / ROUNDS / (SIZE / 1024 ** 3),
      large_cpu_ms_per_gib_control: cpu.control.large / ROUNDS / (SIZE / 1024 ** 3),
      small_rounds_on: rps.on.map((v) => Math.round(v)).join('/'),
      small_rounds_off: rps.off.map((v) => Math.round(v)).join('/'),
      large_rounds_s_on: seconds.on.map((v) => v.toFixed(2)).join('/'),
      large_rounds_s_off: seconds.off.map((v) => v.toFixed(2)).join('/'),
      large_rounds_s_control: seconds.control.map((v) => v.toFixed(2)).join('/'),
      audited_answers: requests,
      audit_rows: rows,
    });
    if (rows < requests) console.log(`[bench] audit-overhead: only ${rows} audit rows for ${requests} audited answers`);
    for (const [kind, ratio] of [['small', smallControl], ['large', largeControl]]) {
      if (ratio < TARGET || ratio > 1 / TARGET) {
        console.log(`[bench] audit-overhead: noise_floor ${kind}: two identical gateways (control/off) differ by ${ratio.toFixed(3)} in this run: a ${Math.round((1 - TARGET) * 100)} % cost cannot be told apart; compare CPU per request / per GiB`);
      }
    }
    return printVerdict(
      'audit-overhead',
      smallRatio >= TARGET && largeRatio >= TARGET && rows >= requests,
      `audit on/off >= ${TARGET} for small GETs (throughput) and a ${SIZE / 1024 ** 3} GiB download (1/time); one row per audited answer`,
    );
  } finally {
    await on.stop();
    await off.stop();
    await control.stop();
  }
}

/** Rows of the audited gateway, paged through GET /api/admin/audit. */
async function countRows(gw) {
  let count = 0;
  let cursor;
  for (;;) {
    const res = await fetch(`${gw.baseUrl}/api/admin/audit?limit=10000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { Authorization: gw.auth } });
    if (!res.ok) throw new Error(`GET /api/admin/audit: ${res.status} ${await res.text()}`);
    count += (await res.json()).results.length;
    cursor = res.headers.get('x-next-cursor');
    if (!cursor) return count;
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
