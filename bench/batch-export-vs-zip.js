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
// harness, see lib/s3-engine.js; multipart uploads streamed from the zip builder), target 1.5. The
// same rounds then also time that path without the gateway, with Debian's rclone (multipart parts of
// the gateway's size and concurrency) to the same bucket: `zip -0 -r -` piped into `rclone rcat`
// (`zip_to_s3_s`: the same job done with tools), and curl PUTting the zip file zip just wrote to a
// presigned URL (`s3_ingest_s`: no zipping at all, one stream of bytes into the S3 server: the floor of
// any program writing this zip to S3 here; `ingest_of_zip` against zip to disk).
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startGateway, median, printResult, printVerdict, rssBytes, sampleRss, workDir, benchmark, gatewayApi } = require('./lib/harness');
const { ensureDebianPackage } = require('./lib/references');

const FILES = Number(process.env.BENCH_FILES || 1000);
const TOTAL = Number(process.env.BENCH_TOTAL_BYTES || 1e9);
const FOLDERS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const S3_STORE = process.env.BENCH_USER_FILES === 's3';
const TARGET = S3_STORE ? 1.5 : 1.25;
const RSS_LIMIT = 200 * 1024 * 1024; // 200 MiB (209.7 MB)

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
  const rcloneBin = S3_STORE ? ensureDebianPackage('rclone', 'rclone') : undefined;
  const data = workDir('batch-export');
  const repo = path.join(data, 'repository');
  fs.mkdirSync(repo, { recursive: true });
  const files = makeTree(repo);
  const out = path.join(data, 'zip-out');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });

  let s3;
  let bucket;
  let s3Lib;
  let storeEnv = {};
  if (S3_STORE) {
    s3Lib = require('./lib/s3-engine');
    s3 = await s3Lib.startS3();
    bucket = await s3Lib.createBucket(s3.info, 'bench-exports');
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
  const api = async (method, p, body) => (await gatewayApi(gateway, method, p, body)).results;
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
    const timeZip = async (then) => {
      const target = path.join(out, 'tree.zip');
      fs.rmSync(target, { force: true });
      const t0 = process.hrtime.bigint();
      await run(zipBin, ['-0', '-r', '-q', target, 'tree'], { cwd: repo });
      const done = seconds(t0);
      await run('sync');
      const synced = seconds(t0);
      const size = fs.statSync(target).size;
      const after = then ? await then(target) : undefined;
      fs.rmSync(target, { force: true });
      return { done, synced, size, after };
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

    const rcloneEnv = () => {
      const remote = {
        RCLONE_CONFIG_BENCHS3_TYPE: 's3',
        RCLONE_CONFIG_BENCHS3_PROVIDER: 'Other',
        RCLONE_CONFIG_BENCHS3_ENDPOINT: s3.info.endpoint,
        RCLONE_CONFIG_BENCHS3_REGION: s3.info.region,
        RCLONE_CONFIG_BENCHS3_ACCESS_KEY_ID: s3.info.accessKeyId,
        RCLONE_CONFIG_BENCHS3_SECRET_ACCESS_KEY: s3.info.secretAccessKey,
        RCLONE_CONFIG_BENCHS3_FORCE_PATH_STYLE: 'true',
      };
      // A plain-http endpoint on loopback: the machine's AWS_CA_BUNDLE (for real AWS) would only make
      // rclone's SDK fail to build its transport.
      return { ...process.env, ...remote, AWS_CA_BUNDLE: '' };
    };
    const RCLONE_PARTS = ['--config', '/dev/null', '--s3-chunk-size', '8M', '--s3-upload-concurrency', '4'];
    /** Size of the object rclone wrote, which is then deleted. */
    const rcloneTakeBack = async (key, env) => {
      const { stdout } = await run(rcloneBin, ['size', '--json', '--config', '/dev/null', key], { env });
      await run(rcloneBin, ['deletefile', '--config', '/dev/null', key], { env });
      return JSON.parse(stdout).bytes;
    };
    /** The same zip streamed to the bucket by rclone: the job done with tools. */
    const timeZipToS3 = async () => {
      const env = rcloneEnv();
      const key = `benchs3:${bucket}/zip-floor/tree.zip`;
      const t0 = process.hrtime.bigint();
      await run('bash', ['-o', 'pipefail', '-c', `"$0" -0 -r -q - tree | "$1" rcat "\${@:3}" "$2"`, zipBin, rcloneBin, key, ...RCLONE_PARTS], {
        cwd: repo,
        env,
      });
      const done = seconds(t0);
      await run('sync');
      const synced = seconds(t0);
      return { done, synced, size: await rcloneTakeBack(key, env) };
    };
    /** A finished zip file PUT into the bucket by curl: the S3 server's ingest alone. */
    const timeIngest = async (file) => {
      const url = await s3Lib.presignedUrl(s3.info, 'PUT', bucket, 'zip-floor/ingest.zip');
      const t0 = process.hrtime.bigint();
      const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-T', file, url]);
      if (stdout.trim() !== '200') throw new Error(`curl's PUT of the zip answered ${stdout.trim()}`);
      const done = seconds(t0);
      await run('sync');
      const synced = seconds(t0);
      return { done, synced, size: await rcloneTakeBack(`benchs3:${bucket}/zip-floor/ingest.zip`, rcloneEnv()) };
    };

    await timeZip(); // warm the page cache for both
    const idle = rssBytes(gateway.pid);
    const sampler = sampleRss(gateway.pid, 25);
    const z = [];
    const g = [];
    const f = [];
    const ingest = [];
    const peaks = [];
    let zipSize = 0;
    let exportSize = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const zr = await timeZip(S3_STORE ? timeIngest : undefined);
      if (S3_STORE) {
        if (zr.after.size !== zr.size) throw new Error(`rclone copied ${zr.after.size} bytes of a ${zr.size}-byte zip`);
        ingest.push(zr.after);
        const fr = await timeZipToS3();
        // Zipped to a pipe, every entry gets a data descriptor (16 bytes): allow for those.
        if (Math.abs(fr.size - zr.size) > 32 * FILES) throw new Error(`rclone stored ${fr.size} bytes of zip, zip wrote ${zr.size}`);
        f.push(fr);
      }
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
      ...(S3_STORE
        ? {
            zip_to_s3_s: median(f.map((r) => r.synced)),
            zip_to_s3_rounds_s: list(f.map((r) => r.synced)),
            tools_of_zip: median(f.map((r) => r.synced)) / zipS,
            of_tools: gatewayS / median(f.map((r) => r.synced)),
            s3_ingest_s: median(ingest.map((r) => r.synced)),
            s3_ingest_rounds_s: list(ingest.map((r) => r.synced)),
            ingest_of_zip: median(ingest.map((r) => r.synced)) / zipS,
            of_ingest: gatewayS / median(ingest.map((r) => r.synced)),
          }
        : {}),
      idle_rss_MB: idle / 1e6,
      export_peaks_MB: list(peaks.map((p) => p / 1e6)),
      peak_rss_MB: peak / 1e6,
      peak_rss_MiB: peak / 1024 / 1024,
      ratio,
    });
    return printVerdict('batch-export-vs-zip', ok, `gateway/zip time <= ${TARGET} and peak RSS < 200 MiB`);
  } finally {
    for (const id of created) await api('DELETE', `/files/user/delete?id=${id}`).catch(() => undefined);
    await gateway.stop();
    await s3?.stop();
  }
}

benchmark(module, main);
