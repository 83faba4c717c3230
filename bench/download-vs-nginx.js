'use strict';
// A 1 GiB download through the gateway (authenticated GET /api/repo/fs/file)
// against Debian's nginx serving the same file, alternating rounds; both read
// by curl. Target: the gateway takes at most 1.25 times as long.
//
// For context it also measures a bare Node server: a few lines that stream the same
// file with the same 1 MiB reads (no framework, no auth, no lookups). nginx sends
// with sendfile(2), which Node has no API for; `bare_ratio` is therefore the best
// any Node process can reach on this machine, and `of_bare` how close the gateway gets.
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, median, printResult, printVerdict, workDir, benchmark, gatewayApi } = require('./lib/harness');
const { startBareNode, startNginx } = require('./lib/references');
const { makeFile, timeDownloads } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);

async function main() {
  const data = workDir('download');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  makeFile(path.join(repo, 'big.bin'), SIZE);

  const gateway = await startGateway({ GATEWAY_DATA_DIR: data });
  const nginx = await startNginx(repo);
  const bare = await startBareNode(path.join(repo, 'big.bin'));
  try {
    const auth = { Authorization: gateway.auth };
    const { id } = (await gatewayApi(gateway, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=big.bin')).results;
    const gatewayUrl = `${gateway.baseUrl}/api/repo/fs/file?id=${encodeURIComponent(id)}`;
    const nginxUrl = `${nginx.baseUrl}/big.bin`;

    const paths = { gateway: { url: gatewayUrl, headers: auth }, nginx: { url: nginxUrl }, 'bare Node': { url: bare.url } };
    const { gateway: g, nginx: n, 'bare Node': b } = timeDownloads(paths, ROUNDS, SIZE);
    const ratio = median(g) / median(n);
    printResult('download-vs-nginx', {
      bytes: SIZE,
      gateway_s: median(g),
      nginx_s: median(n),
      gateway_MBps: SIZE / 1e6 / median(g),
      nginx_MBps: SIZE / 1e6 / median(n),
      bare_node_s: median(b),
      bare_ratio: median(b) / median(n),
      of_bare: median(g) / median(b),
      ratio,
    });
    return printVerdict('download-vs-nginx', ratio <= 1.25, 'gateway/nginx time <= 1.25');
  } finally {
    await gateway.stop();
    await nginx.stop();
    bare.stop();
  }
}

benchmark(module, main);
