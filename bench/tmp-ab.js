'use strict';
const fs = require('node:fs'); const path = require('node:path');
const { startGateway, workDir, gatewayApi, processCpuMs } = require('./lib/harness');
const { makeFile, curlGet } = require('./lib/files');
const SIZE = 1024 ** 3;
function dataFolder(name, big) { const data = path.join(workDir('aa'), name); fs.rmSync(data, { recursive: true, force: true }); const repo = path.join(data, 'repository'); fs.mkdirSync(repo, { recursive: true }); fs.linkSync(big, path.join(repo, 'big.bin')); return data; }
(async () => {
  const big = path.join(workDir('audit-overhead'), 'big.bin'); makeFile(big, SIZE);
  const gws = [];
  for (const n of ['g1', 'g2', 'g3']) gws.push(await startGateway({ GATEWAY_DATA_DIR: dataFolder(n, big), GATEWAY_ACCESS_AUDIT: 'off' }));
  const urls = [];
  for (const gw of gws) urls.push(`${gw.baseUrl}/api/repo/fs/file?id=${encodeURIComponent((await gatewayApi(gw, 'GET', '/repo/fs/idbypath?folderPath=/&fileName=big.bin')).results.id)}`);
  const cpu = gws.map(() => []);
  for (let r = 0; r < 4; r++) for (let i = 0; i < gws.length; i++) { const j = (i + r) % gws.length; const b = processCpuMs(gws[j].pid); const res = curlGet(urls[j], { Authorization: gws[j].auth }); cpu[j].push(Math.round(processCpuMs(gws[j].pid) - b) + '/' + res.seconds.toFixed(2) + 's'); }
  console.log(gws.map((g, i) => `g${i + 1}(pid ${g.pid}): ${cpu[i].join(' ')}`).join('\n'));
  for (const gw of gws) await gw.stop();
})();
