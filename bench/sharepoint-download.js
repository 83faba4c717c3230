'use strict';
// sharepoint-download (bench/lib/relay-download.js) on the harness's SharePoint simulator: GET
// /api/repo/sharepoint/file against a relay of the same SharePoint URL (`_api/web/GetFileById('…')/$value`,
// over HTTPS with the same bearer token).
const path = require('node:path');
const { ROOT, benchmark } = require('./lib/harness');
const { startNodeRelay } = require('./lib/files');
const { relayDownload } = require('./lib/relay-download');

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

function main() {
  loadTypeScript();
  return relayDownload('sharepoint-download', 'sharepoint', async (info, id) => {
    const { MsalTokenProvider, createAgents } = require(path.join(ROOT, 'libs/microsoft-client/src'));
    const p = info.connectorParams;
    const tokens = new MsalTokenProvider({ ...p, scope: `${new URL(p.siteUrl).origin}/.default`, agent: createAgents({ caFile: p.caFile }).https });
    return startRelay(`${p.siteUrl}/_api/web/GetFileById('${id.slice(2)}')/$value`, await tokens.getToken(), p.caFile);
  });
}

benchmark(module, main);
