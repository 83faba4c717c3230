'use strict';
// Gateway memory under load: peak RSS while 8 parallel 1 GiB downloads and one
// 1 GiB multipart upload run at once. Reference: the RSS of the same gateway
// idle, measured in this run. Target: peak under 256 MB (issue 37; it was 200 MB).
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, printResult, printVerdict, rssBytes, sampleRss, workDir, benchmark } = require('./lib/harness');
const { makeFile, curlGetAsync } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const PARALLEL = Number(process.env.BENCH_PARALLEL || 8);
const LIMIT = 256 * 1024 * 1024;

function curlUpload(url, file, auth) {
  const args = ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Authorization: ${auth}`, '-F', `file=@${file};type=application/octet-stream`, url];
  return new Promise((resolve, reject) => execFile('curl', args, (err, out) => (err ? reject(err) : resolve(Number(out.trim())))));
}

async function main() {
  const data = workDir('rss');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  makeFile(path.join(repo, 'big.bin'), SIZE);
  const uploadSource = path.join(workDir('rss-upload'), 'upload.bin');
  makeFile(uploadSource, SIZE);
  for (const f of fs.readdirSync(repo)) if (f.startsWith('uploaded-')) fs.rmSync(path.join(repo, f));

  const gateway = await startGateway({ GATEWAY_DATA_DIR: data });
  try {
    const auth = gateway.auth;
    const get = (p) => fetch(`${gateway.baseUrl}${p}`, { headers: { Authorization: auth } }).then((r) => r.json());
    const id = (await get('/api/repo/fs/idbypath?folderPath=/&fileName=big.bin')).results.id;
    const rootId = (await get('/api/repo/fs/rootfolderid')).results.folderId;
    const idle = rssBytes(gateway.pid);

    const sampler = sampleRss(gateway.pid, 25);
    const started = Date.now();
    const downloads = Array.from({ length: PARALLEL }, () =>
      curlGetAsync(`${gateway.baseUrl}/api/repo/fs/file?id=${encodeURIComponent(id)}`, { Authorization: auth }),
    );
    const upload = curlUpload(`${gateway.baseUrl}/api/repo/fs/file?fileName=uploaded-${Date.now()}.bin&folderId=${encodeURIComponent(rootId)}`, uploadSource, auth);
    const results = await Promise.all(downloads);
    const uploadStatus = await upload;
    const peak = sampler.stop();
    const seconds = (Date.now() - started) / 1000;

    for (const r of results) if (r.status !== 200 || r.bytes !== SIZE) throw new Error(`download answered ${r.status} with ${r.bytes} bytes`);
    if (uploadStatus !== 200 && uploadStatus !== 201) throw new Error(`upload answered ${uploadStatus}`);
    const uploaded = fs.readdirSync(repo).find((f) => f.startsWith('uploaded-'));
    if (!uploaded || fs.statSync(path.join(repo, uploaded)).size !== SIZE) throw new Error('uploaded file missing or short');

    printResult('rss-parallel-transfers', {
      downloads: PARALLEL,
      uploads: 1,
      bytes_each: SIZE,
      seconds,
      idle_rss_MB: idle / 1e6,
      peak_rss_MB: peak / 1e6,
      peak_over_idle: peak / idle,
    });
    return printVerdict('rss-parallel-transfers', peak < LIMIT, `peak RSS < ${LIMIT / 1024 / 1024} MiB`);
  } finally {
    await gateway.stop();
  }
}

benchmark(module, main);
