/**
 * The fuzzed gateway's connectors (test/fuzz/schemathesis.sh, issue 39): one of every kind the engine
 * harness starts in a few seconds, so the fuzzer meets a search connector on the content routes (501,
 * documented) and content connectors on the search routes, not the default filesystem only.
 *
 *   node -r ts-node/register/transpile-only test/fuzz/fuzz-connectors.ts <folder>
 *
 * Starts the engines, writes <folder>/gateway.yaml and <folder>/gateway.env (the secrets the YAML names),
 * prints "ready" and runs until SIGTERM, then stops the engines. The connector ids are the ones
 * schemathesis.toml's `connectors` dictionary gives `connectorId`: change both together.
 *
 * Every connector kind is here: two filesystems, S3 (MinIO), CMIS, SharePoint and Graph (the simulators),
 * and the four search kinds, each loaded with the search contract's corpus through its fixture (Solr,
 * Elasticsearch and OpenSearch are JVMs taking 5 to 12 s to start, once per npm test's fuzz step).
 * Left out: S3Proxy (MinIO is the S3 here) and Tika (no route of its own).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MongoClient } from 'mongodb';
import { createBucket, connectorParams, directClient } from '../contract/fixtures/s3-engine';
import { generateCorpus } from '../contract/search-fixtures/corpus';
import { fixture as elasticsearchFixture } from '../contract/search-fixtures/elasticsearch.fixture';
import { fixture as openSearchFixture } from '../contract/search-fixtures/opensearch.fixture';
import { fixture as solrFixture } from '../contract/search-fixtures/solr.fixture';
import { stopEngines } from '../engines/engines';
import { startEngines } from '../engines/start';

export const FUZZ_ENGINES = ['cmis', 'ferretdb', 'minio', 'sharepoint', 'graph', 'solr', 'elasticsearch', 'opensearch'] as const;

async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) throw new Error('usage: fuzz-connectors.ts <folder>');
  const log = (line: string) => process.stderr.write(`[engines] ${line}\n`);
  const engines = await startEngines(FUZZ_ENGINES, { log });
  const s3 = directClient(engines.minio);
  const bucket = await createBucket(s3, 'fuzz');
  s3.destroy();
  // The search connector's collection exists (a missing one is a connector down: /api/health/ready 503),
  // with a document for the search routes to find.
  const mongoUri = `${engines.ferretdb.uri}?directConnection=true`;
  const mongo = new MongoClient(mongoUri);
  try {
    await mongo.db('fuzz').createCollection('documents');
    await mongo.db('fuzz').collection('documents').insertOne({ _id: 'doc-1' as never, title: 'Quarterly report', content: 'hello fuzz', name: 'report.txt', path: '/report.txt' });
  } finally {
    await mongo.close();
  }
  // The JVM search engines, each with the search contract's corpus (their fixtures make the collection or index).
  const corpus = generateCorpus();
  const searchParams: Record<string, Record<string, unknown>> = {};
  for (const fixture of [solrFixture, elasticsearchFixture, openSearchFixture]) searchParams[fixture.typeId] = (await fixture.setup(engines, corpus)).params;
  const docsRoot = path.join(folder, 'docs-root');
  fs.mkdirSync(path.join(docsRoot, 'reports'), { recursive: true });
  fs.writeFileSync(path.join(docsRoot, 'reports', 'b.txt'), 'second filesystem\n');
  const connectors = [
    // Declared connectors replace the default one: 'fs' is declared on its folder (GATEWAY_DATA_DIR=<folder>/data).
    { id: 'fs', typeId: 'filesystem', params: { root: path.join(folder, 'data', 'repository') } },
    { id: 'docs', typeId: 'filesystem', params: { root: docsRoot } },
    { id: 's3', typeId: 's3', params: connectorParams(engines.minio, bucket) },
    {
      id: 'cmis',
      typeId: 'cmis',
      params: { url: engines.cmis.browserUrl, repositoryId: engines.cmis.repositoryId, user: engines.cmis.username, password: '${CMIS_PASSWORD}' },
    },
    { id: 'sharepoint', typeId: 'sharepoint', params: engines.sharepoint.connectorParams },
    { id: 'graph', typeId: 'graph', params: { ...engines.graph.connectorParams, clientSecret: '${GRAPH_SECRET}' } },
    { id: 'mongodb', typeId: 'mongodb', params: { uri: mongoUri, database: 'fuzz', collection: 'documents' } },
    ...Object.entries(searchParams).map(([typeId, params]) => ({ id: typeId, typeId, params })),
  ];
  fs.writeFileSync(path.join(folder, 'gateway.yaml'), `connectors:\n${connectors.map((c) => `  - ${JSON.stringify(c)}\n`).join('')}`);
  const env = { S3_TEST_SECRET: engines.minio.secretAccessKey, CMIS_PASSWORD: engines.cmis.password, GRAPH_SECRET: engines.graph.clientSecret };
  fs.writeFileSync(path.join(folder, 'gateway.env'), Object.entries(env).map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'\n`).join(''));
  process.stdout.write('ready\n');
  const keepAlive = setInterval(() => undefined, 1 << 30);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  clearInterval(keepAlive);
  await stopEngines();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
