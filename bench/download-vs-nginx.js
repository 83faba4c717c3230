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
const { startGateway, median, printResult, printVerdict, workDir } = require('./lib/harness');
const { startBareNode, startNginx } = require('./lib/references');
const { makeFile, curlGet } = require('./lib/files');

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
    const idRes = await fetch(`${gateway.baseUrl}/api/repo/fs/idbypath?folderPath=/&fileName=big.bin`, { headers: auth });
    if (!idRes.ok) throw new Error(`idbypath answered ${idRes.status}: ${await idRes.text()}`);
    const id = (await idRes.json()).results.id;
    const gatewayUrl = `${gateway.baseUrl}/api/repo/fs/file?id=${encodeURIComponent(id)}`;
    const nginxUrl = `${nginx.baseUrl}/big.bin`;

    curlGet(nginxUrl); // warm the page cache for both
    curlGet(gatewayUrl, auth);
    curlGet(bare.url);
    const g = [];
    const n = [];
    const b = [];
    for (let i = 0; i < ROUNDS; i++) {
      const gr = curlGet(gatewayUrl, auth);
      const nr = curlGet(nginxUrl);
      const br = curlGet(bare.url);
      if (gr.status !== 200 || gr.bytes !== SIZE) throw new Error(`gateway answered ${gr.status} with ${gr.bytes} bytes`);
      if (nr.status !== 200 || nr.bytes !== SIZE) throw new Error(`nginx answered ${nr.status} with ${nr.bytes} bytes`);
      if (br.status !== 200 || br.bytes !== SIZE) throw new Error(`bare Node answered ${br.status} with ${br.bytes} bytes`);
      g.push(gr.seconds);
      n.push(nr.seconds);
      b.push(br.seconds);
    }
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

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
