'use strict';
// A 100 MB document read through the gateway's Graph connector (GET /api/repo/graph/file) against a
// bare Node relay of the same Graph URL, both read by curl, alternating rounds in the same run, with
// the Graph simulator of the engine harness as the service. The relay does the least any process in
// the path must: GET .../items/{id}/content with a bearer token, follow the 302 to the
// pre-authenticated download URL (no Authorization), and pipe the body to its client, with no
// framework, no gateway auth and no lookups. Prints gateway/relay throughput. Target: >= 0.9.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, startEngine, median, printResult, printVerdict, workDir } = require('./lib/harness');
const { makeFile, checkSameBytes, timeDownloads, roundsLine, startNodeRelay } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

function token(info) {
  const out = execFileSync('curl', ['-s', '--cacert', info.caFile, '-d', new URLSearchParams({ grant_type: 'client_credentials', client_id: info.clientId, client_secret: info.clientSecret, scope: `${info.url}/.default` }).toString(), `${info.url}/${info.tenantId}/oauth2/v2.0/token`], { encoding: 'utf8' });
  return JSON.parse(out).access_token;
}

async function main() {
  const dir = workDir('graph-download');
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const graph = await startEngine('graph');
  let gateway;
  let relay;
  try {
    const { info } = graph;
    const config = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(config, `connectors:\n  - ${JSON.stringify({ id: 'graph', typeId: 'graph', description: 'Graph simulator', params: info.connectorParams })}\n`);
    gateway = await startGateway({ GATEWAY_CONFIG: config });
    const auth = gateway.auth;
    const root = (await (await fetch(`${gateway.baseUrl}/api/repo/graph/rootfolderid`, { headers: { Authorization: auth } })).json()).results.folderId;
    const name = `bench-${Date.now()}.bin`;
    const created = execFileSync('curl', ['-s', '-H', `Authorization: ${auth}`, '-F', `file=@${file};type=application/octet-stream`, `${gateway.baseUrl}/api/repo/graph/file?folderId=${encodeURIComponent(root)}&fileName=${name}`], { encoding: 'utf8' });
    const id = JSON.parse(created).results.id;

    const gatewayUrl = `${gateway.baseUrl}/api/repo/graph/file?id=${encodeURIComponent(id)}`;
    const contentUrl = `${info.graphUrl}/drives/${info.driveId}/items/${encodeURIComponent(id)}/content`;
    relay = await startRelay(contentUrl, token(info), info.caFile);

    const paths = { gateway: { url: gatewayUrl, headers: { Authorization: auth } }, relay: { url: relay.url } };
    await checkSameBytes(file, paths);
    const { gateway: g, relay: r } = timeDownloads(paths, ROUNDS, SIZE);
    const gatewayMBps = SIZE / 1e6 / median(g);
    const relayMBps = SIZE / 1e6 / median(r);
    const ratio = gatewayMBps / relayMBps;
    printResult('graph-download', { bytes: SIZE, rounds: ROUNDS, gateway_s: median(g), relay_s: median(r), gateway_MBps: gatewayMBps, relay_MBps: relayMBps, of_relay: ratio });
    console.log(`[bench] graph-download rounds (s): ${roundsLine({ gateway: g, relay: r })}`);
    return printVerdict('graph-download', ratio >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await graph.stop();
  }
}

/** The bare relay: GET the content URL with the bearer token, follow its 302 without it, pipe the body. */
function startRelay(contentUrl, bearer, caFile) {
  const script = `
    const http = require('node:http'); const https = require('node:https'); const fs = require('node:fs');
    const [contentUrl, bearer, caFile] = process.argv.slice(1);
    const agent = new https.Agent({ ca: fs.readFileSync(caFile), keepAlive: true });
    const server = http.createServer((req, res) => {
      https.get(contentUrl, { agent, headers: { authorization: 'Bearer ' + bearer } }, (first) => {
        first.resume();
        https.get(new URL(first.headers.location, contentUrl), { agent }, (body) => {
          res.writeHead(body.statusCode, { 'content-type': 'application/octet-stream', 'content-length': body.headers['content-length'] });
          body.pipe(res);
        });
      });
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  return startNodeRelay(script, [contentUrl, bearer, caFile]);
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
