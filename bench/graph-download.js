'use strict';
// A 100 MB document read through the gateway's Graph connector (GET /api/repo/graph/file) against a
// bare Node relay of the same Graph URL, both read by curl, alternating rounds in the same run, with
// the Graph simulator of the engine harness as the service. The relay does the least any process in
// the path must: GET .../items/{id}/content with a bearer token, follow the 302 to the
// pre-authenticated download URL (no Authorization), and pipe the body to its client, with no
// framework, no gateway auth and no lookups. Prints gateway/relay throughput. Target: >= 0.9.
const { execFileSync, spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { ROOT, startGateway, median, printResult, printVerdict, workDir } = require('./lib/harness');
const { makeFile, curlGet } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

async function startGraph() {
  const file = process.env.GATEWAY_ENGINES_FILE;
  if (file && fs.existsSync(file)) {
    const shared = JSON.parse(fs.readFileSync(file, 'utf8')).engines.graph;
    if (shared) return { info: shared, stop: async () => undefined };
  }
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  const { startEngines } = require(path.join(ROOT, 'test/engines/start.ts'));
  const { graph } = await startEngines(['graph'], { log: (line) => process.stderr.write(`[engines] ${line}\n`) });
  return { info: graph, stop: () => graph.stop() };
}

function token(info) {
  const out = execFileSync('curl', ['-s', '--cacert', info.caFile, '-d', new URLSearchParams({ grant_type: 'client_credentials', client_id: info.clientId, client_secret: info.clientSecret, scope: `${info.url}/.default` }).toString(), `${info.url}/${info.tenantId}/oauth2/v2.0/token`], { encoding: 'utf8' });
  return JSON.parse(out).access_token;
}

async function sha256Of(stream) {
  const hash = crypto.createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}

async function main() {
  const dir = workDir('graph-download');
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const graph = await startGraph();
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

    const expected = await sha256Of(fs.createReadStream(file));
    for (const [label, url, headers] of [['gateway', gatewayUrl, { Authorization: auth }], ['relay', relay.url, {}]]) {
      const got = await new Promise((resolve, reject) => http.get(url, { headers }, (res) => sha256Of(res).then(resolve, reject)).on('error', reject));
      if (got !== expected) throw new Error(`${label} delivered other bytes than the document's (sha256 ${got} vs ${expected})`);
    }

    curlGet(gatewayUrl, { Authorization: auth }); // warm both paths
    curlGet(relay.url);
    const g = [];
    const r = [];
    for (let i = 0; i < ROUNDS; i++) {
      const gr = curlGet(gatewayUrl, { Authorization: auth });
      const rr = curlGet(relay.url);
      if (gr.status !== 200 || gr.bytes !== SIZE) throw new Error(`gateway answered ${gr.status} with ${gr.bytes} bytes`);
      if (rr.status !== 200 || rr.bytes !== SIZE) throw new Error(`relay answered ${rr.status} with ${rr.bytes} bytes`);
      g.push(gr.seconds);
      r.push(rr.seconds);
    }
    const gatewayMBps = SIZE / 1e6 / median(g);
    const relayMBps = SIZE / 1e6 / median(r);
    const ratio = gatewayMBps / relayMBps;
    printResult('graph-download', {
      bytes: SIZE,
      rounds: ROUNDS,
      gateway_s: median(g),
      relay_s: median(r),
      gateway_MBps: gatewayMBps,
      relay_MBps: relayMBps,
      of_relay: ratio,
    });
    const list = (xs) => xs.map((x) => x.toFixed(3)).join(',');
    console.log(`[bench] graph-download rounds (s): gateway=${list(g)} relay=${list(r)}`);
    return printVerdict('graph-download', ratio >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await graph.stop();
  }
}

/** The bare relay, in a child process (curl runs synchronously here, so this process cannot serve). */
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
  const child = spawn(process.execPath, ['-e', script, contentUrl, bearer, caFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ url: `http://127.0.0.1:${String(line).trim()}/`, stop: () => child.kill() }));
  });
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
