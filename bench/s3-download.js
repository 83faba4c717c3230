'use strict';
// A 1 GiB object read through the gateway (GET /api/repo/s3/file) against the same object read with
// a bare Node relay (SDK GetObject piped into an http response), alternating rounds. Every reader is
// a child Node process that drains the body and reports bytes and seconds, so the consumer's cost is
// the same on every side. Target: gateway/relay throughput (`of_relay`) >= 0.9. Beside it: the SDK read
// directly by a bare script (`ratio` = gateway/direct) and nginx proxying a presigned GET (`of_nginx`).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, startGateway, median, printResult, printVerdict, workDir, benchmark, gatewayApi } = require('./lib/harness');
const { makeFile, sha256Of, startNodeRelay } = require('./lib/files');
const { startS3, s3Client, createBucket, writeGatewayConfig, presignedUrl } = require('./lib/s3-engine');
const { startNginxProxy } = require('./lib/references');

const SIZE = Number(process.env.BENCH_FILE_BYTES || 1024 * 1024 * 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TARGET = 0.9;
const KEY = 'bench/big.bin';

// The two readers. Each prints "<bytes> <seconds> <sha256 or ->" (the hash only when asked: outside the timing).
const SDK_READER = `
const { S3Client, GetObjectCommand } = require('@aws-sdk/client-s3');
const [endpoint, region, id, secret, bucket, key, hash] = process.argv.slice(1);
const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId: id, secretAccessKey: secret }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
(async () => {
  const h = hash === '1' ? require('node:crypto').createHash('sha256') : undefined;
  const t0 = process.hrtime.bigint();
  const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  let bytes = 0;
  for await (const c of res.Body) { bytes += c.length; if (h) h.update(c); }
  console.log(bytes, Number(process.hrtime.bigint() - t0) / 1e9, h ? h.digest('hex') : '-');
  client.destroy();
})();
`;
const HTTP_READER = `
const http = require('node:http');
const [url, auth, hash] = process.argv.slice(1);
const h = hash === '1' ? require('node:crypto').createHash('sha256') : undefined;
const t0 = process.hrtime.bigint();
http.get(url, { headers: { Authorization: auth } }, async (res) => {
  if (res.statusCode !== 200) { console.log(0, 0, 'status-' + res.statusCode); return; }
  let bytes = 0;
  for await (const c of res) { bytes += c.length; if (h) h.update(c); }
  console.log(bytes, Number(process.hrtime.bigint() - t0) / 1e9, h ? h.digest('hex') : '-');
});
`;

// For context: a bare Node relay (SDK GetObject piped into an http response: no framework, no auth,
// no lookups). Its throughput is the most any Node process in the path can reach on this machine;
// `of_relay` says how close the gateway gets to it.
const RELAY = `
const http = require('node:http');
const { S3Client, GetObjectCommand } = require('@aws-sdk/client-s3');
const [endpoint, region, id, secret, bucket, key] = process.argv.slice(1);
const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId: id, secretAccessKey: secret }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
const server = http.createServer(async (req, res) => {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  res.writeHead(200, { 'content-length': answer.ContentLength });
  answer.Body.pipe(res);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

function read(script, args, hash = false) {
  const out = execFileSync(process.execPath, ['-e', script, ...args, hash ? '1' : '0'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 }).trim();
  const [bytes, seconds, sha] = out.split(' ');
  return { bytes: Number(bytes), seconds: Number(seconds), sha };
}

async function main() {
  const dir = workDir('s3-download');
  fs.mkdirSync(path.join(dir, 'repository'), { recursive: true });
  const file = path.join(dir, 'big.bin');
  makeFile(file, SIZE);
  const s3 = await startS3();
  let gateway;
  let relay;
  let nginx;
  try {
    const bucket = await createBucket(s3.info, 'bench-download');
    const { Upload } = require('@aws-sdk/lib-storage');
    const client = s3Client(s3.info);
    await new Upload({ client, params: { Bucket: bucket, Key: KEY, Body: fs.createReadStream(file) }, partSize: 16 * 1024 * 1024 }).done();
    client.destroy();
    gateway = await startGateway({ GATEWAY_CONFIG: writeGatewayConfig(s3.info, dir, bucket), S3_TEST_SECRET: s3.info.secretAccessKey });

    const { id } = (await gatewayApi(gateway, 'GET', '/repo/s3/idbypath?folderPath=/bench&fileName=big.bin')).results;
    const gatewayArgs = [`${gateway.baseUrl}/api/repo/s3/file?id=${encodeURIComponent(id)}`, gateway.auth];
    const sdkArgs = [s3.info.endpoint, s3.info.region, s3.info.accessKeyId, s3.info.secretAccessKey, bucket, KEY];

    // The bytes must be the object's, not just as many of them (outside the timing; also warms both paths).
    const expected = await sha256Of(fs.createReadStream(file));
    for (const [name, got] of [['direct', read(SDK_READER, sdkArgs, true)], ['gateway', read(HTTP_READER, gatewayArgs, true)]]) {
      if (got.sha !== expected || got.bytes !== SIZE) throw new Error(`${name} delivered other bytes than the object's (${got.bytes} bytes, sha256 ${got.sha})`);
    }
    relay = await startNodeRelay(RELAY, sdkArgs, { cwd: ROOT });
    read(HTTP_READER, [relay.url, '']);
    // And the same hop written in C: nginx proxying a presigned GetObject URL, unbuffered. Node has no
    // splice(2), so a Node hop copies every byte through user space twice; nginx's floor says what any
    // program in the path costs here (`nginx_of_direct`), and `of_nginx` how close the gateway gets.
    nginx = await startNginxProxy(s3.info.endpoint);
    const signed = new URL(await presignedUrl(s3.info, 'GET', bucket, KEY));
    const nginxArgs = [`${nginx.baseUrl}${signed.pathname}${signed.search}`, ''];
    const viaNginx = read(HTTP_READER, nginxArgs, true);
    if (viaNginx.sha !== expected || viaNginx.bytes !== SIZE) throw new Error(`nginx delivered other bytes than the object's (${viaNginx.bytes} bytes, ${viaNginx.sha})`);
    const g = [];
    const d = [];
    const r = [];
    const n = [];
    for (let i = 0; i < ROUNDS; i++) {
      const dr = read(SDK_READER, sdkArgs);
      const gr = read(HTTP_READER, gatewayArgs);
      const rr = read(HTTP_READER, [relay.url, '']);
      const nr = read(HTTP_READER, nginxArgs);
      if (gr.bytes !== SIZE || dr.bytes !== SIZE || rr.bytes !== SIZE || nr.bytes !== SIZE) throw new Error(`short read: gateway ${gr.bytes}, direct ${dr.bytes}, relay ${rr.bytes}, nginx ${nr.bytes}`);
      d.push(dr.seconds);
      g.push(gr.seconds);
      r.push(rr.seconds);
      n.push(nr.seconds);
    }
    const gatewayS = median(g);
    const directS = median(d);
    const ofRelay = median(r) / gatewayS; // throughput gateway / relay
    printResult('s3-download', {
      engine: s3.info.name,
      bytes: SIZE,
      direct_s: directS,
      gateway_s: gatewayS,
      direct_MBps: SIZE / directS / 1e6,
      gateway_MBps: SIZE / gatewayS / 1e6,
      relay_s: median(r),
      relay_of_direct: directS / median(r),
      of_relay: ofRelay,
      nginx_s: median(n),
      nginx_of_direct: directS / median(n),
      of_nginx: median(n) / gatewayS,
      nginx_rounds_s: n.map((v) => v.toFixed(2)).join(','),
      relay_rounds_s: r.map((v) => v.toFixed(2)).join(','),
      direct_rounds_s: d.map((v) => v.toFixed(2)).join(','),
      gateway_rounds_s: g.map((v) => v.toFixed(2)).join(','),
      ratio: directS / gatewayS,
    });
    return printVerdict('s3-download', ofRelay >= TARGET, `gateway/relay throughput >= ${TARGET}`);
  } finally {
    relay?.stop();
    await nginx?.stop();
    await gateway?.stop();
    await s3.stop();
  }
}

benchmark(module, main);
