'use strict';
// Indexing: 10,000 small text documents (BENCH_INDEX_DOCS; 100 folders of 100, 300-700 bytes of
// words each) from a filesystem connector into each engine (Solr, Elasticsearch, OpenSearch, MongoDB on
// FerretDB) through a gateway indexing job (POST /api/admin/jobs with the search connector as target,
// start, status polled until the run settles: listing, reading, native text extraction, the bulk writes,
// the final commit and the audit all inside the time), against a plain script that walks the same
// folder, reads the same files and sends the same documents straight to the engine's bulk API in
// batches of 500, one batch in flight, then commits (Solr update JSON + commit, Elasticsearch and OpenSearch
// _bulk + _refresh, MongoDB insertMany: the collection is fresh, and the connector too inserts the documents it
// does not find, replacing only those that exist). Both sides write into a fresh collection created beforehand (untimed) with the gateway's
// mapping. Rounds alternate which side goes first. Target per engine: gateway docs/s >= 0.5 x direct.
// Both sides send the engine's credentials: Solr's Basic (BasicAuthPlugin), Elasticsearch's API key (the
// harness's authenticating proxy, test/engines/auth-proxy.ts, is in front of it for both); OpenSearch checks none.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, median, printResult, printVerdict, workDir, startGateway, benchmark } = require('./lib/harness');
const { api, runJob } = require('./lib/jobs');

const DOCS = Number(process.env.BENCH_INDEX_DOCS || 10_000);
// Even, so each side goes first equally often: in the first runs the job's ratio was 0.44-0.54 when it went
// first and 0.86-0.88 when it went second (on a machine at load 26-32).
const ROUNDS = Number(process.env.BENCH_ROUNDS || 4);
const ENGINES = (process.env.BENCH_INDEX_ENGINES || 'solr,elasticsearch,opensearch,mongodb').split(',').map((s) => s.trim()).filter(Boolean);
const BATCH = 500;
const TARGET = 0.5;
const PER_FOLDER = 100;
const WORDS = ('alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo ' +
  'sierra tango uniform victor whiskey xray yankee zulu report invoice contract meeting budget quarterly summary').split(' ');

/** The source tree, made once and reused between runs of the bench (deterministic content). */
function makeTree(root) {
  const marker = path.join(root, `.complete-${DOCS}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < DOCS; i++) {
    const folder = path.join(root, 'docs', `f${String(Math.floor(i / PER_FOLDER)).padStart(3, '0')}`);
    if (i % PER_FOLDER === 0) fs.mkdirSync(folder, { recursive: true });
    const words = [];
    const length = 300 + (next() % 400);
    for (let n = 0; n < length; ) {
      const word = WORDS[next() % WORDS.length];
      words.push(word);
      n += word.length + 1;
    }
    fs.writeFileSync(path.join(folder, `doc-${String(i).padStart(5, '0')}.txt`), `Document ${i}\n${words.join(' ')}\n`);
  }
  fs.writeFileSync(marker, '');
}

/** The documents of the tree as the direct script builds them: read from disk, batch by batch. */
async function* directBatches(root) {
  const base = path.join(root, 'docs');
  let batch = [];
  for (const folder of fs.readdirSync(base).sort()) {
    const files = fs.readdirSync(path.join(base, folder)).sort();
    const docs = await Promise.all(
      files.map(async (name) => {
        const file = path.join(base, folder, name);
        const [content, stat] = await Promise.all([fs.promises.readFile(file, 'utf8'), fs.promises.stat(file)]);
        const docPath = `/docs/${folder}/${name}`;
        return {
          id: `direct:${docPath}`,
          title: name,
          name,
          path: docPath,
          mime_type: 'text/plain',
          size: stat.size,
          created: stat.birthtime.toISOString(),
          modified: stat.mtime.toISOString(),
          source_connector: 'direct',
          source_id: docPath,
          acl_read: ['__everyone__'],
          content,
        };
      }),
    );
    for (const doc of docs) {
      batch.push(doc);
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length) yield batch;
}

/** A call to a harness engine with its Authorization (Solr's Basic, Elasticsearch's API key; none for OpenSearch); the answer's text. */
async function call(engine, url, { method = 'GET', body, contentType = 'application/json' } = {}) {
  const headers = { 'content-type': contentType, ...(engine.authorization ? { authorization: engine.authorization } : {}) };
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

const post = (engine, url, body, contentType) => call(engine, url, { method: 'POST', body, contentType });

/** Elasticsearch and OpenSearch: _bulk per batch, then _refresh of the index. */
const bulkSender = (engine) => async (root, index) => {
  for await (const batch of directBatches(root)) {
    const body = batch.map((doc) => `${JSON.stringify({ index: { _index: index, _id: doc.id } })}\n${JSON.stringify(doc)}\n`).join('');
    const answer = JSON.parse(await post(engine, `${engine.url}/_bulk`, body, 'application/x-ndjson'));
    if (answer.errors) throw new Error(`_bulk refused items: ${JSON.stringify(answer.items.find((i) => Object.values(i)[0].error))}`);
  }
  await post(engine, `${engine.url}/${index}/_refresh`, '');
};

/** The direct senders: one bulk request per batch of 500, then the engine's commit. */
function directSenders(engines, mongo) {
  const { solr } = engines;
  return {
    solr: async (root, collection) => {
      for await (const batch of directBatches(root)) await post(solr, `${solr.url}/${collection}/update?commitWithin=1000&wt=json`, JSON.stringify(batch));
      await post(solr, `${solr.url}/${collection}/update?commit=true&wt=json`, '{}');
    },
    elasticsearch: bulkSender(engines.elasticsearch),
    opensearch: bulkSender(engines.opensearch),
    mongodb: async (root, collection) => {
      const target = mongo.db('bench_index').collection(collection);
      for await (const batch of directBatches(root)) {
        await target.insertMany(
          batch.map((doc) => ({ ...doc, _id: doc.id, created: new Date(doc.created), modified: new Date(doc.modified) })),
          { ordered: false },
        );
      }
    },
  };
}

async function count(engine, engines, mongo, collection) {
  if (engine === 'solr') return JSON.parse(await call(engines.solr, `${engines.solr.url}/${collection}/select?q=*:*&rows=0&wt=json`)).response.numFound;
  if (engine === 'elasticsearch' || engine === 'opensearch') return JSON.parse(await call(engines[engine], `${engines[engine].url}/${collection}/_count`)).count;
  return mongo.db('bench_index').collection(collection).countDocuments();
}

async function main() {
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths });
  const { useSearchEngines } = require(path.join(ROOT, 'test/contract/search-fixtures/search-engines.ts'));
  const { SolrConnectorType } = require(path.join(ROOT, 'libs/connector-solr/src/index.ts'));
  const { ElasticsearchConnectorType } = require(path.join(ROOT, 'libs/connector-elasticsearch/src/index.ts'));
  const { OpenSearchConnectorType } = require(path.join(ROOT, 'libs/connector-opensearch/src/index.ts'));
  const { MongoConnectorType } = require(path.join(ROOT, 'libs/connector-mongodb/src/index.ts'));
  const { MongoClient } = require('mongodb');

  const dir = workDir('index-vs-direct');
  const srcRoot = path.join(dir, 'src');
  makeTree(srcRoot);
  const used = await useSearchEngines();
  const { solr, elasticsearch, opensearch, ferretdb } = used.engines;
  // The harness's Solr home has no _default configset: ours is its `gateway` core's managed-schema conf.
  const configSet = 'bench-index';
  fs.cpSync(path.join(solr.dir, 'home', 'gateway', 'conf'), path.join(solr.dir, 'home', 'configsets', configSet, 'conf'), { recursive: true });
  const mongoUri = `${ferretdb.uri}?directConnection=true`;
  const params = {
    solr: { url: solr.url, configSet, user: solr.user, password: solr.password },
    elasticsearch: { url: elasticsearch.url, apiKey: elasticsearch.apiKey },
    opensearch: { url: opensearch.url },
    mongodb: { uri: mongoUri, database: 'bench_index', timeoutMs: 120_000 },
  };
  const types = { solr: new SolrConnectorType(), elasticsearch: new ElasticsearchConnectorType(), opensearch: new OpenSearchConnectorType(), mongodb: new MongoConnectorType() };
  const setup = {};
  for (const engine of Object.keys(params)) setup[engine] = await types[engine].create({ id: `setup-${engine}`, typeId: engine, description: '', params: params[engine] }, {});
  const mongo = new MongoClient(mongoUri, { maxPoolSize: 4 });
  const direct = directSenders(used.engines, mongo);

  const connectors = [
    { id: 'src', typeId: 'filesystem', params: { root: srcRoot } },
    ...Object.entries(params).map(([engine, p]) => ({ id: `index-${engine}`, typeId: engine, params: p })),
  ];
  const configFile = path.join(dir, 'gateway.yaml');
  fs.writeFileSync(configFile, JSON.stringify({ connectors }));
  const gateway = await startGateway({ GATEWAY_CONFIG: configFile, GATEWAY_AUTH_CACHE_SECONDS: '600' });
  const stamp = Date.now().toString(36);
  let ok = true;
  let jobs = 0;
  try {
    for (const engine of ENGINES) {
      const ratios = [];
      // Round 0 is a warm-up, untimed: each side indexes the tree once into collections of its own, so that
      // neither pays in a timed round what comes once (the engine's JVM compiling its indexing path, the
      // gateway's first job loading its modules). Without it the side that went first lost 30-40 %.
      for (let round = 0; round <= ROUNDS; round++) {
        const gwCollection = `bench_gw_${stamp}_${round}`;
        const directCollection = `bench_direct_${stamp}_${round}`;
        await setup[engine].index.ensureCollection(gwCollection);
        await setup[engine].index.ensureCollection(directCollection);
        const timed = {};
        const runGateway = async () => {
          const body = { jobName: `bench-index-${engine}-${++jobs}`, source: { connectorId: 'src', folderPath: '/docs' }, target: { connectorId: `index-${engine}`, collection: gwCollection } };
          const jobId = (await api(gateway, 'POST', '/admin/jobs', body)).results.jobId;
          const run = await runJob(gateway, jobId, Number(process.env.BENCH_POLL_MS || 100));
          if (run.status.status !== 'COMPLETED' || run.status.written !== DOCS) throw new Error(`${engine}: job ended ${JSON.stringify(run.status)}`);
          // Once the run has settled everything must be searchable. When it is not yet, the wait until it
          // is counts as the gateway's time, and is printed (visible_lag_s: should be 0).
          const t0 = process.hrtime.bigint();
          let visible = await count(engine, used.engines, mongo, gwCollection);
          timed.lag = 0;
          if (visible !== DOCS) {
            for (const deadline = Date.now() + 30_000; visible !== DOCS && Date.now() < deadline; ) {
              await new Promise((r) => setTimeout(r, 50));
              visible = await count(engine, used.engines, mongo, gwCollection);
            }
            timed.lag = Number(process.hrtime.bigint() - t0) / 1e6;
          }
          timed.gateway = run.ms + timed.lag;
        };
        const runDirect = async () => {
          const t0 = process.hrtime.bigint();
          await direct[engine](srcRoot, directCollection);
          timed.direct = Number(process.hrtime.bigint() - t0) / 1e6;
        };
        const order = round % 2 ? [runGateway, runDirect] : [runDirect, runGateway];
        for (const step of order) await step();
        const inDirect = await count(engine, used.engines, mongo, directCollection);
        const inGateway = await count(engine, used.engines, mongo, gwCollection);
        if (inDirect !== DOCS) throw new Error(`${engine}: ${inDirect} documents indexed directly (expected ${DOCS})`);
        // A job that lost documents is a defect, not a figure: said loudly, and the engine does not pass.
        if (inGateway !== DOCS) {
          console.log(`[bench] index-vs-direct ${engine} round ${round}: the job's collection holds ${inGateway} of ${DOCS} documents 30 s after the run settled`);
          ok = false;
        }
        if (round === 0) continue;
        const ratio = timed.direct / timed.gateway; // = gateway docs/s over direct docs/s
        ratios.push(ratio);
        printResult(`index-vs-direct ${engine} round ${round}`, {
          first: round % 2 ? 'gateway' : 'direct',
          gateway_s: timed.gateway / 1000,
          direct_s: timed.direct / 1000,
          visible_lag_s: timed.lag / 1000,
          gateway_docs_per_s: DOCS / (timed.gateway / 1000),
          direct_docs_per_s: DOCS / (timed.direct / 1000),
          ratio,
          load1: require('node:os').loadavg()[0],
        });
      }
      const m = median(ratios);
      const pass = m >= TARGET;
      ok &&= pass;
      printResult(`index-vs-direct ${engine}`, { docs: DOCS, rounds: ROUNDS, ratios: ratios.map((r) => r.toFixed(3)).join('/'), median_ratio: m, meets_target: pass });
    }
  } finally {
    await gateway.stop();
    await mongo.close();
    for (const connector of Object.values(setup)) await connector.close?.();
    await used.release();
  }
  return printVerdict('index-vs-direct', ok, `gateway/direct docs per s >= ${TARGET} (median, each engine)`);
}

benchmark(module, main);
