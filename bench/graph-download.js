'use strict';
// graph-download (bench/lib/relay-download.js) on the harness's Graph simulator: GET /api/repo/graph/file
// against a relay that does the least any process in the path must: GET .../items/{id}/content with a
// bearer token, follow the 302 to the pre-authenticated download URL (no Authorization), pipe the body.
const { execFileSync } = require('node:child_process');
const { startNodeRelay } = require('./lib/files');
const { benchmark } = require('./lib/harness');
const { relayDownload } = require('./lib/relay-download');

function token(info) {
  const out = execFileSync('curl', ['-s', '--cacert', info.caFile, '-d', new URLSearchParams({ grant_type: 'client_credentials', client_id: info.clientId, client_secret: info.clientSecret, scope: `${info.url}/.default` }).toString(), `${info.url}/${info.tenantId}/oauth2/v2.0/token`], { encoding: 'utf8' });
  return JSON.parse(out).access_token;
}

function main() {
  return relayDownload('graph-download', 'graph', (info, id) => startRelay(`${info.graphUrl}/drives/${info.driveId}/items/${encodeURIComponent(id)}/content`, token(info), info.caFile));
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

benchmark(module, main);
