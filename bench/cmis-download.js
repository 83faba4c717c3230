'use strict';
// A 100 MB document read through the gateway (GET /api/repo/cmis/file) against
// the same document read directly from the CMIS server's content URL
// (browser binding, cmisselector=content) and through a bare relay: a few lines of
// Node that pass the same content URL through (raw socket in, http response out, no
// framework, no auth, no lookups), the most any Node process in the path can reach on
// this machine. Alternating rounds, all read by curl. Target: gateway/relay
// throughput (`of_relay`) >= 0.9; gateway/direct is printed beside it (`ratio`).
const path = require('node:path');
const { startGateway, startEngine, median, printResult, printVerdict, workDir, benchmark } = require('./lib/harness');
const { makeFile, checkSameBytes, timeDownloads, roundsLine, startNodeRelay } = require('./lib/files');
const { authOf, rootUrl, rootFolderId, createFolder, createDocumentFromFile, writeGatewayConfig } = require('./lib/cmis-engine');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

async function main() {
  const dir = workDir('cmis-download');
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const cmis = await startEngine('cmis');
  let gateway;
  let relay;
  try {
    const folder = await createFolder(cmis.info, await rootFolderId(cmis.info), `bench-download-${Date.now()}`);
    const doc = createDocumentFromFile(cmis.info, folder['cmis:objectId'], 'big.bin', file);
    gateway = await startGateway({ GATEWAY_CONFIG: writeGatewayConfig(cmis.info, dir) });

    const gatewayUrl = `${gateway.baseUrl}/api/repo/cmis/file?id=${encodeURIComponent(doc['cmis:versionSeriesId'] || doc['cmis:objectId'])}`;
    const directUrl = `${rootUrl(cmis.info)}?objectId=${encodeURIComponent(doc['cmis:objectId'])}&cmisselector=content`;
    const gatewayHeaders = { Authorization: gateway.auth };
    const directHeaders = { Authorization: authOf(cmis.info) };

    relay = await startRelay(directUrl, authOf(cmis.info));

    await checkSameBytes(file, { gateway: { url: gatewayUrl, headers: gatewayHeaders }, relay: { url: relay.url } });
    const paths = { gateway: { url: gatewayUrl, headers: gatewayHeaders }, direct: { url: directUrl, headers: directHeaders }, relay: { url: relay.url } };
    const { gateway: g, direct: d, relay: r } = timeDownloads(paths, ROUNDS, SIZE);
    const gatewayMBps = SIZE / 1e6 / median(g);
    const directMBps = SIZE / 1e6 / median(d);
    const relayMBps = SIZE / 1e6 / median(r);
    const ofRelay = gatewayMBps / relayMBps;
    printResult('cmis-download', {
      bytes: SIZE,
      rounds: ROUNDS,
      gateway_s: median(g),
      direct_s: median(d),
      gateway_MBps: gatewayMBps,
      direct_MBps: directMBps,
      relay_MBps: relayMBps,
      relay_ratio: relayMBps / directMBps,
      of_relay: ofRelay,
      ratio: gatewayMBps / directMBps,
    });
    console.log(`[bench] cmis-download rounds (s): ${roundsLine({ gateway: g, direct: d, relay: r, of_relay: g.map((x, i) => r[i] / x) })}`);
    return printVerdict('cmis-download', ofRelay >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await cmis.stop();
  }
}

/** The bare relay: the content URL through a raw socket, its body out as the answer's. */
function startRelay(targetUrl, authorization) {
  // Reads in 1 MiB buffers (net's onread), as the gateway's CMIS client does: the default
  // 64 KiB reads cost a relay about half its throughput here.
  const script = `
    const http = require('node:http'); const net = require('node:net');
    const target = new URL(process.argv[1]); const auth = process.argv[2];
    const READ = 1024 * 1024;
    const server = http.createServer((req, res) => {
      let head = Buffer.alloc(0), started = false, slab = Buffer.alloc(0), used = 0;
      const s = net.connect({ port: Number(target.port), host: target.hostname, onread: {
        buffer: () => { if (slab.length - used < READ) { slab = Buffer.allocUnsafe(4 * READ); used = 0; } return slab.subarray(used, used + READ); },
        callback: (n, buf) => {
          used += n;
          let data = Buffer.from(buf.buffer, buf.byteOffset, n);
          if (!started) {
            head = Buffer.concat([head, data]);
            const at = head.indexOf('\\r\\n\\r\\n');
            if (at < 0) return;
            started = true;
            res.writeHead(200, { 'content-type': 'application/octet-stream' });
            data = head.subarray(at + 4);
          }
          if (data.length && !res.write(data)) { s.pause(); res.once('drain', () => s.resume()); }
        } } }, () => s.write('GET ' + target.pathname + target.search + ' HTTP/1.0\\r\\nHost: ' + target.host + '\\r\\nAuthorization: ' + auth + '\\r\\n\\r\\n'));
      s.on('end', () => res.end());
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  return startNodeRelay(script, [targetUrl, authorization]);
}

benchmark(module, main);
