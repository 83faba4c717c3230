'use strict';
// Batch export (POST /api/repo/batch, then polling GET /api/files/user every 100 ms until the file is
// ready) of 1,000 files totalling 1 GB from the filesystem connector, against `zip -0 -r` of the same
// files (Info-ZIP, stored: the gateway stores entries by default too), writing to the same disk,
// alternating rounds (median of each). Both times end with `sync`, so both include getting the zip
// onto the disk (the gateway fsyncs its zip before it says ready; zip does not, hence the sync).
// Without that sync, for context: zip until it exits, the gateway until ready (its fsync included).
// The gateway's RSS is sampled every 25 ms from before the first round until the last export is
// ready (one gateway for all rounds); the peak, and each export's own peak, are printed.
// Targets: the gateway takes at most 1.25 times as long; its RSS stays under 200 MiB.
// BENCH_USER_FILES=s3: the gateway writes its exports to the S3 user-file store (an S3 engine of the
// harness, see lib/s3-engine.js; multipart uploads streamed from the zip builder), target 1.5.
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startGateway, median, printResult, rssBytes, sampleRss, workDir } = require('./lib/harness');
const { ensureDebianPackage } = require('./lib/references');

const FILES = Number(process.env.BENCH_FILES || 1000);
const TOTAL = Number(process.env.BENCH_TOTAL_BYTES || 1e9);
const FOLDERS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const S3_STORE = process.env.BENCH_USER_FILES === 's3';
const TARGET = S3_STORE ? 1.5 : 1.25;
const RSS_LIMIT = 200 * 1024 * 1024; // as rss-parallel-transfers: 200 MiB (209.7 MB)

/** Sizes from half to one and a half times the mean, summing to exactly TOTAL. */
function sizes() {
  const weights = Array.from({ length: FILES }, (_, i) => 0.5 + ((i * 7) % 21) / 20);
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.floor((TOTAL * w) / sum));
  out[FILES - 1] += TOTAL - out.reduce((a, b) => a + b, 0);
  return out;
}

/** <repo>/tree/d<k>/f<i>.bin, random (incompressible) bytes; kept between runs. */
function makeTree(repo) {
  const marker = path.join(repo, `.done-${FILES}-${TOTAL}`);
  const files = sizes().map((size, i) => ({ rel: `tree/d${i % FOLDERS}/f${String(i).padStart(4, '0')}.bin`, size }));
  if (fs.existsSync(marker)) return files;
  fs.rmSync(path.join(repo, 'tree'), { recursive: true, force: true });
  const block = crypto.randomBytes(8 * 1024 * 1024);
  for (const [i, f] of files.entries()) {
    const file = path.join(repo, f.rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, 'w');
    // A different starting point in the block for each file, so no two files are alike.
    let offset = (i * 65_537) % block.length;
    for (let written = 0; written < f.size; ) {
      const n = Math.min(block.length - offset, f.size - written);
      fs.writeSync(fd, block, offset, n);
      written += n;
      offset = 0;
    }
    fs.closeSync(fd);
  }
  fs.writeFileSync(marker, '');
  return files;
}

function seconds(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function main() {
  const zipBin = ensureDebianPackage('zip', 'zip');
  const data = workDir('batch-export');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  const files = makeTree(repo);
  const out = path.join(data, 'zip-out');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });

  let s3;
  let bucket;
  let storeEnv = {};
  if (S3_STORE) {
    const { startS3, createBucket } = require('./lib/s3-engine');
    s3 = await startS3();
    bucket = await createBucket(s3.info, 'bench-exports');
    storeEnv = {
      GATEWAY_USER_FILES_STORE: `s3://${bucket}/user-files`,
      GATEWAY_USER_FILES_S3_ENDPOINT: s3.info.endpoint,
      GATEWAY_USER_FILES_S3_ACCESS_KEY_ID: s3.info.accessKeyId,
      GATEWAY_USER_FILES_S3_SECRET_ACCESS_KEY: s3.info.secretAccessKey,
    };
  }
  const gateway = await startGateway({ GATEWAY_DATA_DIR: data, ...storeEnv });
  /** The export's zip as a local file, for unzip (outside the timing). */
  const zipFileOf = async (docId) => {
    if (!S3_STORE) return path.join(data, 'user-files', docId);
    const { GetObjectCommand } = require('@aws-sdk/client-s3');
    const { s3Client } = require('./lib/s3-engine');
    const client = s3Client(s3.info);
    const target = path.join(data, 'export-check.zip');
    const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `user-files/${docId}` }));
    await require('node:stream/promises').pipeline(answer.Body, fs.createWriteStream(target));
    client.destroy();
    return target;
  };
  const headers = { Authorization: gateway.auth };
  const api = async (method, p, body) => {
    const res = await fetch(`${gateway.baseUrl}/api${p}`, {
      method,
      headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json.results;
  };
  const created = new Set(); // exports, removed again whatever happens
  try {
    // Ids as a client finds them: one listing per folder. Entry names keep the folders.
    const ids = new Map();
    for (let k = 0; k < FOLDERS; k++) {
      const folderId = (await api('GET', `/repo/fs/idbypath?folderPath=/tree&fileName=d${k}`)).id;
      for (const [itemPath, item] of Object.entries(await api('GET', `/repo/fs/folderitems?id=${encodeURIComponent(folderId)}`))) ids.set(itemPath, item.Id);
    }
    const batch = files.map((f) => ({ connId: 'fs', id: ids.get(`/${f.rel}`), fileName: f.rel }));
    if (batch.some((e) => !e.id)) throw new Error('some files were not listed by folderitems');

    // Asynchronous, so the event loop keeps running (the RSS sampler, idle keep-alive sockets).
    const run = promisify(execFile);
    const timeZip = async () => {
      const target = path.join(out, 'tree.zip');
      fs.rmSync(target, { force: true });
      const t0 = process.hrtime.bigint();
      await run(zipBin, ['-0', '-r', '-q', target, 'tree'], { cwd: repo });
      const done = seconds(t0);
      await run('sync');
      const synced = seconds(t0);
      const size = fs.statSync(target).size;
      fs.rmSync(target, { force: true });
      return { done, synced, size };
    };
    /** Starts an export and polls the file list every 100 ms (as a client would, a little eagerly) until it is ready. */
    const timeExport = async () => {
      const t0 = process.hrtime.bigint();
      const link = await api('POST', '/repo/batch', { batch });
      created.add(link.docId);
      for (;;) {
        const file = (await api('GET', '/files/user')).files.find((x) => x.id === link.docId);
        if (!file) throw new Error(`export ${link.docId} is not in the file list`);
        if (file.ready) {
          const done = seconds(t0);
          await run('sync');
          const synced = seconds(t0);
          return { done, synced, size: file.size, file, docId: link.docId };
        }
        if (file.state !== 'running') throw new Error(`export ended ${file.state}: ${file.message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    await timeZip(); // warm the page cache for both
    const idle = rssBytes(gateway.pid);
    const sampler = sampleRss(gateway.pid, 25);
    const z = [];
    const g = [];
    const peaks = [];
    let zipSize = 0;
    let exportSize = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const zr = await timeZip();
      const roundSampler = sampleRss(gateway.pid, 25);
      const gr = await timeExport();
      peaks.push(roundSampler.stop());
      if (gr.file.progress.errors !== 0 || gr.file.progress.entriesDone !== FILES) {
        throw new Error(`export finished with ${gr.file.progress.entriesDone}/${FILES} entries, ${gr.file.progress.errors} errors`);
      }
      if (i === 0) {
        // The zip is whole and sound: every entry listed, every CRC checked by unzip (outside the timing).
        const zipFile = await zipFileOf(gr.docId);
        const listing = await run('unzip', ['-Z', '-1', zipFile], { encoding: 'utf8', maxBuffer: 1 << 24 });
        const names = listing.stdout.trim().split('\n');
        if (names.length !== FILES) throw new Error(`the export zip has ${names.length} entries, expected ${FILES}`);
        await run('unzip', ['-tqq', zipFile]);
      }
      await api('DELETE', `/files/user/delete?id=${gr.docId}`);
      created.delete(gr.docId);
      z.push(zr);
      g.push(gr);
      zipSize = zr.size;
      exportSize = gr.size;
    }
    const peak = sampler.stop();

    const zipS = median(z.map((r) => r.synced));
    const gatewayS = median(g.map((r) => r.synced));
    const ratio = gatewayS / zipS;
    const ok = ratio <= TARGET && peak < RSS_LIMIT;
    const list = (values) => values.map((v) => v.toFixed(2)).join(',');
    printResult('batch-export-vs-zip', {
      store: S3_STORE ? `s3 (${s3.info.name})` : 'local',
      files: FILES,
      bytes: TOTAL,
      zip_bytes: zipSize,
      export_bytes: exportSize,
      load1: os.loadavg()[0],
      zip_s: zipS,
      gateway_s: gatewayS,
      zip_rounds_s: list(z.map((r) => r.synced)),
      gateway_rounds_s: list(g.map((r) => r.synced)),
      zip_exit_s: median(z.map((r) => r.done)),
      gateway_ready_s: median(g.map((r) => r.done)),
      ready_vs_exit: median(g.map((r) => r.done)) / median(z.map((r) => r.done)),
      idle_rss_MB: idle / 1e6,
      export_peaks_MB: list(peaks.map((p) => p / 1e6)),
      peak_rss_MB: peak / 1e6,
      peak_rss_MiB: peak / 1024 / 1024,
      ratio,
      target: `<=${TARGET} and peak_rss<200MiB`,
      verdict: ok ? 'PASS' : 'FAIL',
    });
    return ok;
  } finally {
    for (const id of created) await api('DELETE', `/files/user/delete?id=${id}`).catch(() => undefined);
    await gateway.stop();
    await s3?.stop();
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
