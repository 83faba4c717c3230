'use strict';
// Public download (GET /api/public/download?key=..., no credentials) of a 1 GiB file against
// Debian's nginx serving the same file, alternating rounds, both read by curl (median of each).
// Two kinds of link, each against nginx serving that very file:
//   external: a link to a repository document (filesystem connector), read from it at download time;
//   internal: a link to a user file, the zip a batch export of that document produced.
// Target: the gateway takes at most 1.25 times as long, for both.
//
// For context, as in download-vs-nginx: a bare Node server streaming the same file with the same
// 1 MiB reads (nginx uses sendfile(2), which Node has no API for), so `bare_ratio` is what any Node
// process reaches on this machine right now; and the gateway's peak RSS during the downloads.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startGateway, median, printResult, printVerdict, sampleRss, workDir, benchmark, gatewayApi } = require('./lib/harness');
const { startBareNode, startNginx } = require('./lib/references');
const { makeFile, curlGetAsync } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const TARGET = 1.25;

async function main() {
  const data = workDir('public-download');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  makeFile(path.join(repo, 'big.bin'), SIZE);

  const gateway = await startGateway({ GATEWAY_DATA_DIR: data });
  // nginx serves the data folder: repository/big.bin and user-files/<export id>.
  const nginx = await startNginx(data);
  const bare = await startBareNode(path.join(repo, 'big.bin'));
  const api = async (method, p, body) => (await gatewayApi(gateway, method, p, body)).results;
  let exportId;
  try {
    const docId = (await api('GET', '/repo/fs/idbypath?folderPath=/&fileName=big.bin')).id;
    const external = (await api('GET', `/files/external/link?internal=false&connectorId=fs&docId=${encodeURIComponent(docId)}`)).key;

    // The internal link's file: a batch export of big.bin (a stored zip, a little over 1 GiB).
    const batchLink = await api('POST', '/repo/batch', { batch: [{ connId: 'fs', id: docId, fileName: 'big.bin' }] });
    exportId = batchLink.docId;
    for (;;) {
      const file = (await api('GET', '/files/user')).files.find((f) => f.id === exportId);
      if (file.ready) break;
      if (file.state !== 'running') throw new Error(`export ended ${file.state}: ${file.message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const internal = batchLink.id; // the batch result is itself a public link to the zip
    const zipSize = fs.statSync(path.join(data, 'user-files', exportId)).size;

    const kinds = [
      { name: 'external', size: SIZE, gatewayUrl: `${gateway.baseUrl}/api/public/download?key=${external}`, nginxUrl: `${nginx.baseUrl}/repository/big.bin` },
      { name: 'internal', size: zipSize, gatewayUrl: `${gateway.baseUrl}/api/public/download?key=${internal}`, nginxUrl: `${nginx.baseUrl}/user-files/${exportId}` },
    ];
    const check = (who, r, size) => {
      if (r.status !== 200 || r.bytes !== size) throw new Error(`${who} answered ${r.status} with ${r.bytes} bytes, expected ${size}`);
      return r.seconds;
    };
    // curl runs asynchronously, so the RSS sampler keeps ticking.
    for (const k of kinds) {
      check('nginx', await curlGetAsync(k.nginxUrl), k.size); // warm the page cache for both
      check('gateway', await curlGetAsync(k.gatewayUrl), k.size);
    }
    check('bare Node', await curlGetAsync(bare.url), SIZE);
    const sampler = sampleRss(gateway.pid, 25);
    const results = {};
    for (const k of kinds) results[k.name] = { g: [], n: [] };
    const b = [];
    for (let i = 0; i < ROUNDS; i++) {
      for (const k of kinds) {
        results[k.name].g.push(check('gateway', await curlGetAsync(k.gatewayUrl), k.size));
        results[k.name].n.push(check('nginx', await curlGetAsync(k.nginxUrl), k.size));
      }
      b.push(check('bare Node', await curlGetAsync(bare.url), SIZE));
    }
    const peak = sampler.stop();
    const used = (await api('GET', '/files/user')).links;
    const expectedUses = ROUNDS + 1;
    for (const key of [external, internal]) {
      const link = used.find((l) => l.id === key);
      if (link.used !== expectedUses) throw new Error(`link used=${link.used}, expected ${expectedUses}`);
    }

    let ok = true;
    const list = (values) => values.map((v) => v.toFixed(2)).join(',');
    for (const k of kinds) {
      const { g, n } = results[k.name];
      const ratio = median(g) / median(n);
      ok = ok && ratio <= TARGET;
      printResult(`public-download-vs-nginx (${k.name})`, {
        bytes: k.size,
        load1: os.loadavg()[0],
        gateway_s: median(g),
        nginx_s: median(n),
        gateway_rounds_s: list(g),
        nginx_rounds_s: list(n),
        gateway_MBps: k.size / 1e6 / median(g),
        nginx_MBps: k.size / 1e6 / median(n),
        bare_node_s: median(b),
        bare_ratio: median(b) / median(n),
        of_bare: median(g) / median(b),
        ratio,
      });
    }
    printResult('public-download-vs-nginx (context)', { bare_node_rounds_s: list(b), gateway_peak_rss_MB: peak / 1e6 });
    return printVerdict('public-download-vs-nginx', ok, `gateway/nginx time <= ${TARGET}, document and export links`);
  } finally {
    if (exportId) await api('DELETE', `/files/user/delete?id=${exportId}`).catch(() => undefined);
    await gateway.stop();
    await nginx.stop();
    bare.stop();
  }
}

benchmark(module, main);
