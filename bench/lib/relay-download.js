'use strict';
// The plan of graph-download and sharepoint-download: a 100 MB document uploaded through the gateway to a
// simulator of the engine harness, then read through the gateway against a bare Node relay of the same
// service URL (the floor of any Node process in the path: no framework, no gateway auth, no lookups), both
// read by curl, alternating rounds in the same run. Prints gateway/relay throughput. Target: >= 0.9.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, startEngine, median, printResult, printVerdict, workDir } = require('./harness');
const { makeFile, checkSameBytes, timeDownloads, roundsLine } = require('./files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

/** `engine`: the harness's simulator and the connector kind; `startRelay(info, id)`: the relay of document `id`. */
async function relayDownload(name, engine, startRelay) {
  const dir = workDir(name);
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const service = await startEngine(engine);
  let gateway;
  let relay;
  try {
    const config = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(config, `connectors:\n  - ${JSON.stringify({ id: engine, typeId: engine, description: `${engine} simulator`, params: service.info.connectorParams })}\n`);
    gateway = await startGateway({ GATEWAY_CONFIG: config });
    const headers = { Authorization: gateway.auth };
    const api = `${gateway.baseUrl}/api/repo/${engine}`;
    const root = (await (await fetch(`${api}/rootfolderid`, { headers })).json()).results.folderId;
    const uploadUrl = `${api}/file?folderId=${encodeURIComponent(root)}&fileName=bench-${Date.now()}.bin`;
    const id = JSON.parse(execFileSync('curl', ['-s', '-H', `Authorization: ${gateway.auth}`, '-F', `file=@${file};type=application/octet-stream`, uploadUrl], { encoding: 'utf8' })).results.id;
    relay = await startRelay(service.info, id);

    const paths = { gateway: { url: `${api}/file?id=${encodeURIComponent(id)}`, headers }, relay: { url: relay.url } };
    await checkSameBytes(file, paths);
    const { gateway: g, relay: r } = timeDownloads(paths, ROUNDS, SIZE);
    const gatewayMBps = SIZE / 1e6 / median(g);
    const relayMBps = SIZE / 1e6 / median(r);
    const ratio = gatewayMBps / relayMBps;
    printResult(name, { bytes: SIZE, rounds: ROUNDS, gateway_s: median(g), relay_s: median(r), gateway_MBps: gatewayMBps, relay_MBps: relayMBps, of_relay: ratio });
    console.log(`[bench] ${name} rounds (s): ${roundsLine({ gateway: g, relay: r })}`);
    return printVerdict(name, ratio >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await service.stop();
  }
}

module.exports = { relayDownload };
