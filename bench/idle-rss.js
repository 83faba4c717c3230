'use strict';
// Idle RSS of the built gateway on its embedded default (temporary data dir, one
// filesystem connector, no external services) against an empty Nest 11 application
// started the same way in the same run. Issue 16 target: gateway idle <= 110 MB.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { startGateway, freePort, waitFor, rssBytes, printResult } = require('./lib/harness');

const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS || 3000);
const TARGET = 110 * 1024 * 1024;
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
    await new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  }
}

async function gatewayRss() {
  const gateway = await startGateway();
  try {
    await settle();
    return rssBytes(gateway.pid);
  } finally {
    await gateway.stop();
  }
}

module.exports = async function main() {
  const empty = await emptyNestRss();
  const gateway = await gatewayRss();
  printResult('idle-rss', {
    gateway_idle_mb: MB(gateway),
    empty_nest_mb: MB(empty),
    ratio: (gateway / empty).toFixed(2),
    target_mb: MB(TARGET),
    within_target: gateway <= TARGET,
  });
  return gateway <= TARGET;
};

if (require.main === module) module.exports().then((ok) => process.exit(ok ? 0 : 1));
