'use strict';
// A real S3 server for the S3 benchmarks: the test side's one implementation
// (test/contract/fixtures/s3-engine.ts, loaded with ts-node's transpiler), so the bench and the tests
// start engines, make clients and buckets and write connector params alike. The engine a test run
// already started (GATEWAY_ENGINES_FILE), else one started here through the engine harness.
// BENCH_S3_ENGINE picks it: minio (default: a Go server, as production S3-compatible stores are) or s3proxy.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./harness');

require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
const engine = require(path.join(ROOT, 'test/contract/fixtures/s3-engine.ts'));

async function startS3() {
  const { info, release } = await engine.useS3Engine(process.env.BENCH_S3_ENGINE || 'minio', (line) => process.stderr.write(`[engines] ${line}\n`));
  return { info, stop: release };
}

/** A fresh bucket `<stem>-<random>`; resolves to its name. */
async function createBucket(info, stem) {
  const client = engine.directClient(info);
  try {
    return await engine.createBucket(client, stem);
  } finally {
    client.destroy();
  }
}

/** A gateway YAML with one s3 connector `s3` on the bucket; the secret stays in the environment (S3_TEST_SECRET). */
function writeGatewayConfig(info, dir, bucket) {
  const file = path.join(dir, 'gateway-s3.yaml');
  fs.writeFileSync(
    file,
    `connectors:\n  - ${JSON.stringify({ id: 'fs', typeId: 'filesystem', description: 'local', params: { root: path.join(dir, 'repository') } })}\n` +
      `  - ${JSON.stringify({ id: 's3', typeId: 's3', description: 'bench', params: engine.connectorParams(info, bucket) })}\n`,
  );
  return file;
}

/** SigV4 over node:crypto, as @smithy/signature-v4 wants its hash (the SDK's own is not a direct dependency). */
class Sha256 {
  constructor(secret) {
    this.hash = secret ? require('node:crypto').createHmac('sha256', secret) : require('node:crypto').createHash('sha256');
  }
  update(data) {
    this.hash.update(data);
  }
  async digest() {
    return this.hash.digest();
  }
}

/**
 * A presigned URL of `method` on the object, valid for an hour, for clients that are not the SDK (curl,
 * nginx). Signed over an unsigned payload, as @aws-sdk/s3-request-presigner does: S3 servers refuse a
 * presigned request whose signature covers the empty body's hash.
 */
async function presignedUrl(info, method, bucket, key) {
  const { SignatureV4 } = require('@smithy/signature-v4');
  const endpoint = new URL(info.endpoint);
  const signer = new SignatureV4({ service: 's3', region: info.region, sha256: Sha256, uriEscapePath: false, credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey } });
  const signed = await signer.presign(
    { method, protocol: endpoint.protocol, hostname: endpoint.hostname, port: Number(endpoint.port), path: `/${bucket}/${key}`, headers: { host: endpoint.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, query: {} },
    { expiresIn: 3600 },
  );
  return `${endpoint.origin}${signed.path}?${new URLSearchParams(signed.query)}`;
}

module.exports = { startS3, s3Client: engine.directClient, createBucket, writeGatewayConfig, presignedUrl };
