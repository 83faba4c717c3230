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

module.exports = { startS3, s3Client: engine.directClient, createBucket, writeGatewayConfig };
