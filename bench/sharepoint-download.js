'use strict';
// A 100 MB document read through the gateway's SharePoint connector (GET /api/repo/sp/file) against
// a bare Node relay of the same SharePoint URL (`_api/web/GetFileById('…')/$value` on the SharePoint
// simulator, over HTTPS with the same bearer token), both read by curl, alternating rounds. The relay
// is the floor of any Node process in the path; target: gateway >= 0.9 x relay throughput.
// The simulator is the harness's (GATEWAY_ENGINES_FILE) or one started here (test/engines, ts-node).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, startGateway, startEngine, median, printResult, printVerdict, workDir } = require('./lib/harness');
const { makeFile, timeDownloads, roundsLine, startNodeRelay } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 100 * 1000 * 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;

function loadTypeScript() {
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: { '@gateway/*': ['libs/*/src'] } });
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
  return startNodeRelay(script, [targetUrl, token, caFile]);
}

async function main() {
  loadTypeScript();
  const dir = workDir('sharepoint-download');
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const sp = await startEngine('sharepoint');
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

    const { gateway: g, relay: r } = timeDownloads({ gateway: { url: gatewayUrl, headers }, relay: { url: relay.url } }, ROUNDS, SIZE);
    const gatewayMBps = SIZE / 1e6 / median(g);
    const relayMBps = SIZE / 1e6 / median(r);
    const ratio = gatewayMBps / relayMBps;
    printResult('sharepoint-download', { bytes: SIZE, rounds: ROUNDS, gateway_s: median(g), relay_s: median(r), gateway_MBps: gatewayMBps, relay_MBps: relayMBps, of_relay: ratio });
    console.log(`[bench] sharepoint-download rounds (s): ${roundsLine({ gateway: g, relay: r })}`);
    return printVerdict('sharepoint-download', ratio >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await gateway?.stop();
    await sp.stop();
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
