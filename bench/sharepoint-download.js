'use strict';
// A 100 MB document read through the gateway's SharePoint connector (GET /api/repo/sp/file) against
// a bare Node relay of the same SharePoint URL (`_api/web/GetFileById('…')/$value` on the SharePoint
// simulator, over HTTPS with the same bearer token), both read by curl, alternating rounds. The relay
// is the floor of any Node process in the path; target: gateway >= 0.9 x relay throughput.
// The simulator is the harness's (GATEWAY_ENGINES_FILE) or one started here (test/engines, ts-node).
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, startGateway, median, printResult, printVerdict, workDir } = require('./lib/harness');
const { makeFile, curlGet } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

function loadTypeScript() {
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: { '@gateway/*': ['libs/*/src'] } });
}

async function startSharePoint() {
  const file = process.env.GATEWAY_ENGINES_FILE;
  if (file && fs.existsSync(file)) {
    const shared = JSON.parse(fs.readFileSync(file, 'utf8')).engines.sharepoint;
    if (shared) return { info: shared, stop: async () => undefined };
  }
  const { startEngines } = require(path.join(ROOT, 'test/engines/start.ts'));
  const { sharepoint } = await startEngines(['sharepoint'], { log: (line) => process.stderr.write(`[engines] ${line}\n`) });
  return { info: sharepoint, stop: () => sharepoint.stop() };
}

/** The relay: one HTTPS GET upstream per request, piped to the client. Nothing else. */
function startRelay(targetUrl, token, caFile) {
  const script = `
    const http = require('node:http'); const https = require('node:https'); const fs = require('node:fs');
    const [target, token, caFile] = process.argv.slice(1);
    const agent = new https.Agent({ keepAlive: true, ca: fs.readFileSync(caFile) });
    const server = http.createServer((req, res) => {
      https.get(target, { agent, headers: { authorization: 'Bearer ' + token } }, (up) => {
        res.writeHead(up.statusCode, { 'content-type': 'application/octet-stream', 'content-length': up.headers['content-length'] });
        up.pipe(res);
      }).on('error', () => res.destroy());
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script, targetUrl, token, caFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ url: `http://127.0.0.1:${String(line).trim()}/`, stop: () => child.kill() }));
  });
}

async function main() {
  loadTypeScript();
  const dir = workDir('sharepoint-download');
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const sp = await startSharePoint();
  let gateway;
  let relay;
  try {
    const config = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(config, `connectors:\n  - ${JSON.stringify({ id: 'sp', typeId: 'sharepoint', description: 'SharePoint simulator', params: sp.info.connectorParams })}\n`);
    gateway = await startGateway({ GATEWAY_CONFIG: config });
    const headers = { Authorization: gateway.auth };
    const root = JSON.parse(execFileSync('curl', ['-s', '-H', `Authorization: ${gateway.auth}`, `${gateway.baseUrl}/api/repo/sp/rootfolderid`], { encoding: 'utf8' })).results;
    const rootId = typeof root === 'string' ? root : root.id ?? root.folderId;
    const name = `bench-${Date.now()}.bin`;
    const uploaded = JSON.parse(
      execFileSync('curl', ['-s', '-H', `Authorization: ${gateway.auth}`, '-F', `file=@${file};type=application/octet-stream`, `${gateway.baseUrl}/api/repo/sp/file?folderId=${encodeURIComponent(rootId)}&fileName=${name}`], { encoding: 'utf8' }),
    );
    const id = uploaded.results.id;
    const uid = id.slice(2);
    const { MsalTokenProvider, createAgents } = require(path.join(ROOT, 'libs/microsoft-client/src'));
    const p = sp.info.connectorParams;
    const tokens = new MsalTokenProvider({ ...p, scope: `${new URL(p.siteUrl).origin}/.default`, agent: createAgents({ caFile: p.caFile }).https });
    relay = await startRelay(`${p.siteUrl}/_api/web/GetFileById('${uid}')/$value`, await tokens.getToken(), p.caFile);
    const gatewayUrl = `${gateway.baseUrl}/api/repo/sp/file?id=${encodeURIComponent(id)}`;

    curlGet(gatewayUrl, headers); // warm both paths
    curlGet(relay.url);
    const g = [];
    const r = [];
    for (let i = 0; i < ROUNDS; i++) {
      const gr = curlGet(gatewayUrl, headers);
      const rr = curlGet(relay.url);
      if (gr.status !== 200 || gr.bytes !== SIZE) throw new Error(`gateway answered ${gr.status} with ${gr.bytes} bytes`);
      if (rr.status !== 200 || rr.bytes !== SIZE) throw new Error(`relay answered ${rr.status} with ${rr.bytes} bytes`);
      g.push(gr.seconds);
      r.push(rr.seconds);
    }
    const gatewayMBps = SIZE / 1e6 / median(g);
    const relayMBps = SIZE / 1e6 / median(r);
    const ratio = gatewayMBps / relayMBps;
    printResult('sharepoint-download', { bytes: SIZE, rounds: ROUNDS, gateway_s: median(g), relay_s: median(r), gateway_MBps: gatewayMBps, relay_MBps: relayMBps, of_relay: ratio });
    const list = (xs) => xs.map((x) => x.toFixed(3)).join(',');
    console.log(`[bench] sharepoint-download rounds (s): gateway=${list(g)} relay=${list(r)}`);
    return printVerdict('sharepoint-download', ratio >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await sp.stop();
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
