'use strict';
// A real S3 server for the S3 benchmarks: the one a test run already started (GATEWAY_ENGINES_FILE),
// else one started here through the engine harness (test/engines, loaded with ts-node's transpiler).
// BENCH_S3_ENGINE picks it: minio (default: a Go server, as production S3-compatible stores are) or s3proxy.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./harness');

async function startS3() {
  const name = process.env.BENCH_S3_ENGINE || 'minio';
  const file = process.env.GATEWAY_ENGINES_FILE;
  if (file && fs.existsSync(file)) {
    const shared = JSON.parse(fs.readFileSync(file, 'utf8')).engines[name];
    if (shared) return { info: shared, stop: async () => undefined };
  }
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  const { startEngines } = require(path.join(ROOT, 'test/engines/engines.ts'));
  const handles = await startEngines([name], { log: (line) => process.stderr.write(`[engines] ${line}\n`) });
  return { info: handles[name], stop: () => handles[name].stop() };
}

/** The SDK client both the references and set-up use (same settings as the connector's). */
function s3Client(info) {
  const { S3Client } = require('@aws-sdk/client-s3');
  return new S3Client({
    endpoint: info.endpoint,
    region: info.region,
    forcePathStyle: true,
    credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

async function createBucket(info, name) {
  const { CreateBucketCommand } = require('@aws-sdk/client-s3');
  const client = s3Client(info);
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } catch (e) {
    if (e.name !== 'BucketAlreadyOwnedByYou' && e.name !== 'BucketAlreadyExists') throw e;
  } finally {
    client.destroy();
  }
}

/** A gateway YAML with one s3 connector `s3` on the bucket; the secret stays in the environment. */
function writeGatewayConfig(info, dir, bucket) {
  const file = path.join(dir, 'gateway-s3.yaml');
  const params = { endpoint: info.endpoint, region: info.region, bucket, accessKeyId: info.accessKeyId, secretAccessKey: '${BENCH_S3_SECRET}', forcePathStyle: true };
  fs.writeFileSync(
    file,
    `connectors:\n  - ${JSON.stringify({ id: 'fs', typeId: 'filesystem', description: 'local', params: { root: path.join(dir, 'repository') } })}\n` +
      `  - ${JSON.stringify({ id: 's3', typeId: 's3', description: 'bench', params })}\n`,
  );
  return file;
}

module.exports = { startS3, s3Client, createBucket, writeGatewayConfig };
