'use strict';
// A login flood next to a download (issue 16): 400 requests with random user names and wrong
// passwords, 50 at a time, from one address, while an admin whose credentials are cached downloads
// a 20 MB document again and again. Reference: the same download on the same gateway, quiet, in this
// run. Target: median download time under flood ≤ 2 × quiet. Also prints the gateway's peak RSS.
// Two gateways: the defaults (the per-address limit turns most of the flood into cheap 429s), and
// one with the per-address limit lifted, where every request of the flood needs argon2 (what a flood
// from many addresses costs) and only the bounded pool stands between it and the downloads.
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const crypto = require('node:crypto');
const { startGateway, printResult, printVerdict, rssBytes, sampleRss, median, workDir, benchmark } = require('./lib/harness');
const { makeFile, timedGet } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 20 * 1024 * 1024);
const FLOOD = Number(process.env.BENCH_FLOOD_REQUESTS || 400);
const WIDTH = Number(process.env.BENCH_FLOOD_WIDTH || 50);
const QUIET_ROUNDS = 7;

const agent = new http.Agent({ keepAlive: true, maxSockets: WIDTH });

function wrongLogin(baseUrl) {
  const user = `flood-${crypto.randomBytes(6).toString('hex')}`;
  const auth = 'Basic ' + Buffer.from(`${user}:wrong-password`).toString('base64');
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}/api/repo/connections`, { agent, headers: { Authorization: auth, 'X-Forwarded-For': '10.66.0.1' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
  });
}

async function flood(baseUrl) {
  const statuses = {};
  for (let sent = 0; sent < FLOOD; sent += WIDTH) {
    const wave = await Promise.all(Array.from({ length: Math.min(WIDTH, FLOOD - sent) }, () => wrongLogin(baseUrl)));
    for (const s of wave) statuses[s] = (statuses[s] || 0) + 1;
  }
  return statuses;
}

async function scenario(name, data, env) {
  const gateway = await startGateway({ GATEWAY_DATA_DIR: data, TRUST_PROXY: 'true', ...env });
  try {
    const get = (p) => fetch(`${gateway.baseUrl}${p}`, { headers: { Authorization: gateway.auth } }).then((r) => r.json());
    const id = (await get('/api/repo/fs/idbypath?folderPath=/&fileName=flood.bin')).results.id;
    const url = `${gateway.baseUrl}/api/repo/fs/file?id=${encodeURIComponent(id)}`;
    const download = async () => {
      const r = await timedGet(url, { Authorization: gateway.auth });
      if (r.status !== 200 || r.bytes !== SIZE) throw new Error(`download answered ${r.status} with ${r.bytes} bytes`);
      return r.seconds;
    };
    await download(); // warms the verification cache and the page cache
    const quiet = [];
    for (let i = 0; i < QUIET_ROUNDS; i++) quiet.push(await download());
    const idle = rssBytes(gateway.pid);

    const sampler = sampleRss(gateway.pid, 20);
    const started = Date.now();
    let flooding = true;
    const floodDone = flood(gateway.baseUrl).finally(() => (flooding = false));
    const underFlood = [];
    while (flooding || underFlood.length < 3) underFlood.push(await download());
    const statuses = await floodDone;
    const floodSeconds = (Date.now() - started) / 1000;
    const peak = sampler.stop();
    const unexpected = Object.keys(statuses).filter((s) => !['401', '429', '503'].includes(s));
    if (unexpected.length) throw new Error(`flood answered ${JSON.stringify(statuses)}`);

    const ratio = median(underFlood) / median(quiet);
    printResult(`login-flood ${name}`, {
      quiet_s: median(quiet),
      flood_median_s: median(underFlood),
      flood_max_s: Math.max(...underFlood),
      downloads_under_flood: underFlood.length,
      ratio,
      flood_s: floodSeconds,
      answers: Object.entries(statuses).map(([s, n]) => `${s}x${n}`).join(','),
      idle_rss_MB: idle / 1e6,
      peak_rss_MB: peak / 1e6,
    });
    return ratio <= 2;
  } finally {
    await gateway.stop();
  }
}

async function main() {
  const data = workDir('login-flood');
  fs.mkdirSync(path.join(data, 'repository'), { recursive: true });
  makeFile(path.join(data, 'repository', 'flood.bin'), SIZE);
  const defaults = await scenario('defaults', data, {});
  const noAddressLimit = await scenario('no-address-limit', data, { GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000' });
  return printVerdict('login-flood', defaults && noAddressLimit, 'download time under flood/quiet <= 2, both gateways');
}

benchmark(module, main);
