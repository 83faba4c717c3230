'use strict';
// The download offload: a 1 GiB document fetched through nginx running the shipped
// docker/nginx.conf in front of a gateway with GATEWAY_ACCEL_REDIRECT (the gateway authenticates,
// authorizes and sets the headers; nginx sends the bytes with sendfile), against nginx serving the
// same file directly as a static file. Same run, alternating rounds, curl as the client.
// Target: offload_ratio <= 1.1.
//
// Also, without offload, the gateway's own download against a bare Node stream server (the figure
// download-vs-nginx reports as of_bare): target <= 1.15.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, startGateway, median, printResult, printVerdict, workDir, benchmark, gatewayApi } = require('./lib/harness');
const { startBareNode, startNginx: startStaticNginx } = require('./lib/references');
const { makeFile, timeDownloads } = require('./lib/files');

// The harness's nginx (test/engines/nginx.ts) renders docker/nginx.conf; it is TypeScript.
require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
const { startNginx: startShippedNginx } = require('../test/engines/nginx');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const OFFLOAD_TARGET = 1.1;
const BARE_TARGET = 1.15;

async function main() {
  const data = workDir('download-offload');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  makeFile(path.join(repo, 'big.bin'), SIZE);

  const common = { GATEWAY_DATA_DIR: data, GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1' };
  const offloading = await startGateway({ ...common, GATEWAY_ACCEL_REDIRECT: '/_offload' });
  const plain = await startGateway(common);
  const shipped = await startShippedNginx({
    upstreams: [{ port: offloading.port }],
    userFilesDir: path.join(data, 'user-files'),
    connectorRoots: { fs: repo },
  });
  const staticNginx = await startStaticNginx(repo);
  const bare = await startBareNode(path.join(repo, 'big.bin'));
  try {
    const auth = { Authorization: offloading.auth };
    const behindContextPath = { ...plain, baseUrl: `${plain.baseUrl}/gateway` };
    const id = encodeURIComponent((await gatewayApi(behindContextPath, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=big.bin')).results.id);
    const times = timeDownloads(
      {
        offload: { url: `${shipped.url}/gateway/api/repo/fs/file?id=${id}`, headers: auth },
        nginx: { url: `${staticNginx.baseUrl}/big.bin` },
        gateway: { url: `${plain.baseUrl}/gateway/api/repo/fs/file?id=${id}`, headers: auth },
        bare: { url: bare.url },
      },
      ROUNDS,
      SIZE,
    );
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    const offloadRatio = m.offload / m.nginx;
    const ofBare = m.gateway / m.bare;
    const ok = offloadRatio <= OFFLOAD_TARGET && ofBare <= BARE_TARGET;
    printResult('download-offload', {
      bytes: SIZE,
      offload_s: m.offload,
      nginx_s: m.nginx,
      offload_MBps: SIZE / 1e6 / m.offload,
      nginx_MBps: SIZE / 1e6 / m.nginx,
      offload_ratio: offloadRatio,
      gateway_s: m.gateway,
      bare_node_s: m.bare,
      of_bare: ofBare,
    });
    return printVerdict('download-offload', ok, `offload/nginx time <= ${OFFLOAD_TARGET} and gateway/bare Node time <= ${BARE_TARGET}`);
  } finally {
    await shipped.stop();
    await staticNginx.stop();
    bare.stop();
    await offloading.stop();
    await plain.stop();
  }
}

benchmark(module, main);
