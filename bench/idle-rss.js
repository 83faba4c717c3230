'use strict';
// Idle RSS of the built gateway on its embedded default (temporary data dir, one
// filesystem connector, no external services) against an empty Nest 11 application
// started the same way in the same run. Target (issue 37): gateway idle <= 120 MiB, and again after traffic.
//
// The gateway is measured BENCH_SETTLE_MS (3 s) after it answers, after BENCH_IDLE_MS (20 s) of quiet
// (the target applies here), at the end of some traffic (listings of a 200-file folder, downloads of a
// 64 MiB file, the OpenAPI document and UI) and BENCH_IDLE_MS after it (the target applies here too).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, freePort, waitFor, rssBytes, printResult, printVerdict, stopper, gatewayApi } = require('./lib/harness');
const { makeFile, timedGet } = require('./lib/files');

const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS || 3000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS || 20000);
const TARGET = 120 * 1024 * 1024;
const MB = (b) => (b / 1024 / 1024).toFixed(1);

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

async function emptyNestRss() {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, 'lib/empty-nest-app.js')], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitFor(`http://127.0.0.1:${port}/api/health`);
    await settle();
    return rssBytes(child.pid);
  } finally {
    await stopper(child)();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function traffic(gateway) {
  const headers = { Authorization: gateway.auth };
  const api = (p) => gatewayApi(gateway, 'GET', p);
  const folderId = (await api('/repo/fs/idbypath?folderPath=/&fileName=docs')).results.id;
  const fileId = (await api('/repo/fs/idbypath?folderPath=/&fileName=big.bin')).results.id;
  for (let i = 0; i < 20; i++) await api(`/repo/fs/folderitems?id=${encodeURIComponent(folderId)}`);
  for (let i = 0; i < 5; i++) {
    const r = await timedGet(`${gateway.baseUrl}/api/repo/fs/file?id=${encodeURIComponent(fileId)}`, headers);
    if (r.status !== 200) throw new Error(`download answered ${r.status}`);
  }
  for (const p of ['/api/docs-json', '/api/docs']) {
    const r = await timedGet(`${gateway.baseUrl}${p}`);
    if (r.status !== 200) throw new Error(`${p} answered ${r.status}`);
  }
}

async function gatewayRss() {
  const dataDir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'gateway-idle-rss-'));
  const repo = path.join(dataDir, 'repository');
  fs.mkdirSync(path.join(repo, 'docs'), { recursive: true });
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, 'docs', `doc-${i}.txt`), `document ${i}\n`);
  makeFile(path.join(repo, 'big.bin'), 64 * 1024 * 1024);
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir });
  try {
    await settle();
    const settled = rssBytes(gateway.pid);
    await sleep(Math.max(0, IDLE_MS - SETTLE_MS));
    const idle = rssBytes(gateway.pid);
    await traffic(gateway);
    const busy = rssBytes(gateway.pid);
    await sleep(IDLE_MS);
    return { settled, idle, busy, afterTraffic: rssBytes(gateway.pid) };
  } finally {
    await gateway.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

module.exports = async function main() {
  const empty = await emptyNestRss();
  const gateway = await gatewayRss();
  printResult('idle-rss', {
    gateway_settled_mb: MB(gateway.settled),
    gateway_idle_mb: MB(gateway.idle),
    gateway_after_traffic_mb: MB(gateway.afterTraffic),
    gateway_end_of_traffic_mb: MB(gateway.busy),
    empty_nest_mb: MB(empty),
    ratio: (gateway.idle / empty).toFixed(2),
  });
  return printVerdict('idle-rss', gateway.idle <= TARGET && gateway.afterTraffic <= TARGET, `idle and after-traffic RSS <= ${MB(TARGET)} MiB`);
};

if (require.main === module) module.exports().then((ok) => process.exit(ok ? 0 : 1));
