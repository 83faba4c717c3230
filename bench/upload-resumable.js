'use strict';
// Resumable upload against the plain one (issue 38): a 1 GiB file through tus (/api/uploads, the official
// tus-js-client, chunks of BENCH_TUS_CHUNK_BYTES = 50 MiB) against the same file through the multipart
// POST /api/repo/fs/file (curl -F), alternate rounds (BENCH_ROUNDS, default 3), medians. The tus figure is
// the transfer (creation + every PATCH); turning the finished upload into a document (POST file?uploadId=…,
// a copy from the uploads folder to the repository) is timed apart and printed with the end-to-end ratio.
// RSS of the gateway sampled during both. Target: tus/multipart throughput >= 0.9 (median tus throughput over
// median multipart throughput); peak RSS < 250 MB. Printed beside it, steadier on a loaded machine: the median
// of each round's back-to-back ratio, and the gateway's CPU ms per upload of each kind.
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const tus = require('tus-js-client');
const { startGateway, printResult, printVerdict, processCpuMs, sampleRss, median, workDir } = require('./lib/harness');
const { makeFile } = require('./lib/files');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 ** 3);
const CHUNK = Number(process.env.BENCH_TUS_CHUNK_BYTES || 50 * 1024 * 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const RSS_LIMIT = 250e6;

function curlMultipart(url, file, auth) {
  const args = ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Authorization: ${auth}`, '-F', `file=@${file};type=application/octet-stream`, url];
  return new Promise((resolve, reject) => execFile('curl', args, (err, out) => (err ? reject(err) : resolve(Number(out.trim())))));
}

function tusUpload(endpoint, file, auth) {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(fs.createReadStream(file), {
      endpoint,
      chunkSize: CHUNK,
      headers: { Authorization: auth },
      metadata: { filename: path.basename(file), filetype: 'application/octet-stream' },
      retryDelays: null,
      storeFingerprintForResuming: false,
      onError: reject,
      onSuccess: () => resolve(upload.url),
    });
    upload.start();
  });
}

async function main() {
  const source = path.join(workDir('upload-resumable'), 'source.bin');
  makeFile(source, SIZE);
  const gateway = await startGateway({ GATEWAY_UPLOAD_QUOTA_BYTES: '0' });
  try {
    const auth = gateway.auth;
    const api = `${gateway.baseUrl}/api`;
    const rootId = (await (await fetch(`${api}/repo/fs/rootfolderid`, { headers: { Authorization: auth } })).json()).results.folderId;
    const repo = path.join(gateway.dataDir, 'repository');
    const clean = () => {
      for (const f of fs.readdirSync(repo)) if (f.startsWith('up-')) fs.rmSync(path.join(repo, f));
    };
    const plain = [];
    const resumable = [];
    const conversions = [];
    // Per round: tus ÷ multipart measured back to back (the machine's load shared), and the gateway's CPU per upload.
    const pairRatios = [];
    const cpuPlain = [];
    const cpuTus = [];
    let peakPlain = 0;
    let peakTus = 0;
    for (let round = 0; round < ROUNDS; round++) {
      clean();
      let rss = sampleRss(gateway.pid, 25);
      let cpu = processCpuMs(gateway.pid);
      let started = process.hrtime.bigint();
      const status = await curlMultipart(`${api}/repo/fs/file?fileName=up-plain-${round}.bin&folderId=${encodeURIComponent(rootId)}`, source, auth);
      const plainSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      peakPlain = Math.max(peakPlain, rss.stop());
      cpuPlain.push(processCpuMs(gateway.pid) - cpu);
      if (status !== 201) throw new Error(`multipart upload answered ${status}`);
      plain.push(SIZE / plainSeconds);

      rss = sampleRss(gateway.pid, 25);
      cpu = processCpuMs(gateway.pid);
      started = process.hrtime.bigint();
      const url = await tusUpload(`${api}/uploads`, source, auth);
      const tusSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      cpuTus.push(processCpuMs(gateway.pid) - cpu);
      started = process.hrtime.bigint();
      const uploadId = new URL(url).pathname.split('/').pop();
      const created = await fetch(`${api}/repo/fs/file?uploadId=${uploadId}&fileName=up-tus-${round}.bin&folderId=${encodeURIComponent(rootId)}`, {
        method: 'POST',
        headers: { Authorization: auth },
      });
      const convertSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      peakTus = Math.max(peakTus, rss.stop());
      if (created.status !== 201) throw new Error(`POST file?uploadId answered ${created.status}: ${await created.text()}`);
      if (fs.statSync(path.join(repo, `up-tus-${round}.bin`)).size !== SIZE) throw new Error('the document made from the upload is short');
      resumable.push(SIZE / tusSeconds);
      pairRatios.push(plainSeconds / tusSeconds);
      conversions.push(convertSeconds);
      console.log(`[bench] upload-resumable round ${round + 1}: multipart ${(SIZE / plainSeconds / 1e6).toFixed(1)} MB/s, tus ${(SIZE / tusSeconds / 1e6).toFixed(1)} MB/s, then into a document ${convertSeconds.toFixed(2)} s`);
    }
    clean();
    const ratio = median(resumable) / median(plain);
    const endToEnd = SIZE / (SIZE / median(resumable) + median(conversions)) / median(plain);
    printResult('upload-resumable', {
      bytes: SIZE,
      chunk_bytes: CHUNK,
      rounds: ROUNDS,
      multipart_MBps: median(plain) / 1e6,
      tus_MBps: median(resumable) / 1e6,
      tus_over_multipart: ratio,
      tus_over_multipart_per_round_median: median(pairRatios),
      gateway_cpu_ms_multipart: median(cpuPlain),
      gateway_cpu_ms_tus: median(cpuTus),
      into_document_s: median(conversions),
      tus_with_document_over_multipart: endToEnd,
      peak_rss_multipart_MB: peakPlain / 1e6,
      peak_rss_tus_MB: peakTus / 1e6,
    });
    return printVerdict('upload-resumable', ratio >= 0.9 && peakPlain < RSS_LIMIT && peakTus < RSS_LIMIT, 'tus/multipart throughput >= 0.9 and peak RSS < 250 MB during both');
  } finally {
    await gateway.stop();
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
