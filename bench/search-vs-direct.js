'use strict';
// Content search: the same mix of 20 select requests sent through the gateway
// (GET /api/search/<connector>/select) and sent directly to each engine in its
// own syntax (the body the connector's translator writes for the same request:
// Solr JSON request API, Elasticsearch and OpenSearch _search, MongoDB find + count
// + one aggregation per facet field), at concurrency 1 and 16, on the search
// contract's 520-document corpus. HTTP load: autocannon (Solr, Elasticsearch,
// OpenSearch, the gateway); MongoDB has no HTTP, so its direct side is the driver in a
// closed loop with the same concurrency. A warm-up run on both sides comes first. Targets (issue 40): on the HTTP
// engines, gateway throughput >= 0.5 x the bare relay's at c=1 and >= 0.6 x at c=16, and gateway p50 <= relay p50
// + 1 ms at c=1; on MongoDB (no HTTP, so no relay) gateway throughput >= 0.85 x the driver direct. BENCH_SEARCH_ENGINES picks the engines,
// BENCH_DURATION_S and BENCH_WARMUP_S the run lengths.
// Direct requests carry the engine's credentials as the connector does: Solr's Basic (BasicAuthPlugin),
// Elasticsearch's API key (the harness's authenticating proxy in front of it, test/engines/auth-proxy.ts,
// is on every side: gateway, direct and relay). The harness's OpenSearch checks none.
// For the HTTP engines it also measures a bare Node relay (lib/references.js startBareRelay) passing
// the direct requests on to the engine: the least any HTTP service in front of the engine costs here
// (every hop on this VM's loopback costs a send and a receive in the kernel). relay_* is that floor,
// gateway_rps_of_relay says how close the gateway gets to it.
// Permission trimming (issue 40: >= 0.9 x the untrimmed figure): each engine is also a second connection with
// `aclTrimming: true` on the same collection. Every document carries `acl_read` (half `__everyone__`, half the
// bench's user and a group), so the trimmed answers are the untrimmed ones (checked before measuring: the same
// numFound for every query of the mix) and what is measured is the filter, not smaller answers.
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const autocannon = require('autocannon');
const { ROOT, startGateway, gatewayApi, median, printResult, printVerdict, workDir, benchmark } = require('./lib/harness');
const { startBareRelay } = require('./lib/references');

const DURATION_S = Number(process.env.BENCH_DURATION_S || 8);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S || 3);
const CONCURRENCIES = [1, 16];
/** Gateway throughput of the relay's, per concurrency (HTTP engines), and of the driver direct (MongoDB). */
const OF_RELAY_TARGET = { 1: 0.5, 16: 0.6 };
const RELAY_P50_SLACK_MS = 1;
const MONGO_OF_DIRECT_TARGET = 0.85;
const TRIMMED_OF_UNTRIMMED_TARGET = 0.9;
const TRIMMED = (name) => `${name}-trimmed`;

/** The mix: the gateway's query strings (values unencoded). */
const MIX = [
  'q=*:*&rows=10&sort=id asc',
  'q=author:carol&rows=20&sort=id asc',
  'q=mime_type:application/pdf&rows=10&sort=size desc',
  'q=tags:urgent&rows=10&sort=id asc',
  'q=size:[1000 TO 20000]&rows=10&sort=id asc',
  'q=created:[2022-01-01T00:00:00Z TO *]&rows=10&sort=created desc',
  'q=*:*&facet=true&facet.field=mime_type,author&rows=0',
  'q=*:*&facet=true&facet.field=tags&fq=tags:final&rows=5&sort=id asc',
  'q=author:dave&fl=id,title,size&rows=10&sort=id asc',
  'q=*:* -tags:*&rows=10&sort=id asc',
  'q=author:gr*&rows=10&sort=id asc',
  'q=*:*&facet=true&facet.field=author&fq=author:((alice) OR (bob))&rows=10&sort=id asc',
  'q=*:*&rows=10&start=100&sort=id asc',
  'q=author:erin AND mime_type:text/plain&rows=10&sort=id asc',
  'q=*:*&facet=true&facet.field=mime_type&fq=mime_type:text/html&fq=mime_type:text/html&rows=10&sort=size asc',
  'q=size:[50000 TO *] AND author:bob&rows=10&sort=id asc',
  'q=report&rows=10&sort=id asc',
  'q=title:alpha&rows=10&sort=id asc',
  'q=content:"alpha bravo"&rows=10&sort=id asc',
  'q=title:winter OR title:summer&rows=10&sort=id asc',
];

/** A query string of the mix as parameters (its values are unencoded, so URLSearchParams cannot read it itself). */
function paramsOf(query) {
  return new URLSearchParams(query.split('&').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

/** The SearchRequest the gateway builds for a query string (same defaults as SearchService). */
function searchRequest(query, sq) {
  const p = paramsOf(query);
  const facetFields = p.get('facet.field') ? p.get('facet.field').split(',') : undefined;
  const fl = p.get('fl') ? p.get('fl').split(',') : undefined;
  return {
    query: sq.parseQuery(p.get('q'), 'q'),
    filters: p.getAll('fq').map((fq) => sq.parseQuery(fq, 'fq')),
    fields: fl && !fl.includes('id') ? ['id', ...fl] : fl,
    facetFields: p.get('facet') === 'true' ? facetFields : undefined,
    facetLimit: 100,
    start: Number(p.get('start') || 0),
    rows: Number(p.get('rows') || 10),
    sort: sq.parseSort(p.get('sort') || ''),
    schema: sq.DEFAULT_FIELD_SCHEMA,
  };
}

function cannon(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0) return reject(new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      resolve({ p50: result.latency.p50, rps: result.requests.average });
    });
  });
}

/** The trimmed connection answers every query of the mix as the untrimmed one does (numFound), or the comparison would be of other answers. */
async function sameAnswersTrimmed(gateway, name) {
  const numFound = async (connector, q) => (await gatewayApi(gateway, 'GET', `/search/${connector}/select?${paramsOf(q)}`)).results.numFound;
  for (const q of MIX) {
    const [plain, trimmed] = [await numFound(name, q), await numFound(TRIMMED(name), q)];
    if (plain !== trimmed) throw new Error(`${name}: '${q}' found ${plain} untrimmed and ${trimmed} trimmed: the corpus's acl_read does not show every document to the bench's user`);
  }
}

/**
 * Two measurements of `DURATION_S` each, taken as four half-length runs A B B A (the engines' JITs and caches keep
 * warming for minutes: whichever of two back-to-back runs came first measured up to a third slower); the mean
 * rps and p50 of each side.
 */
async function alternated(runA, runB) {
  const halves = [await runA(DURATION_S / 2), await runB(DURATION_S / 2), await runB(DURATION_S / 2), await runA(DURATION_S / 2)];
  const mean = (x, y) => ({ rps: (x.rps + y.rps) / 2, p50: (x.p50 + y.p50) / 2 });
  return [mean(halves[0], halves[3]), mean(halves[1], halves[2])];
}

/** A closed loop of `concurrency` workers calling `call` round-robin over the mix for DURATION_S. */
async function loop(calls, concurrency, duration) {
  const latencies = [];
  const end = performance.now() + duration * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const call = calls[next++ % calls.length];
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return { p50: median(latencies), rps: latencies.length / duration };
}

async function main() {
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths });
  const sq = require(path.join(ROOT, 'libs/search-query/src/index.ts'));
  const { SEARCH_FIXTURES, generateCorpus, useSearchEngines } = require(path.join(ROOT, 'test/contract/search-fixtures/index.ts'));
  const { MongoClient } = require('mongodb');

  const dir = workDir('search-vs-direct');
  const used = await useSearchEngines();
  const envs = {};
  let gateway;
  let mongo;
  const relays = {};
  let ok = true;
  try {
    // Every document visible to the bench's user (see the header): the trimmed connection answers what the untrimmed one does.
    const corpus = generateCorpus().map((doc, i) => ({ ...doc, [sq.ACL_FIELD]: i % 2 ? [sq.EVERYONE] : ['admin', `group-${i % 7}`] }));
    for (const fixture of SEARCH_FIXTURES) envs[fixture.name] = { typeId: fixture.typeId, env: await fixture.setup(used.engines, corpus) };
    const connectors = Object.entries(envs).flatMap(([name, { typeId, env }]) => [
      { id: name, typeId, description: name, params: env.params },
      { id: TRIMMED(name), typeId, description: `${name}, permission trimming`, params: { ...env.params, aclTrimming: true } },
    ]);
    const configFile = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(configFile, JSON.stringify({ connectors }));
    gateway = await startGateway({ GATEWAY_CONFIG: configFile, GATEWAY_AUTH_CACHE_SECONDS: '600' });
    const requests = MIX.map((q) => searchRequest(q, sq));
    /** The JSON headers of a direct request, with the engine's Authorization when it has one. */
    const headersOf = (engine) => ({ 'content-type': 'application/json', ...(used.engines[engine].authorization ? { authorization: used.engines[engine].authorization } : {}) });
    /** Elasticsearch and OpenSearch: one Query DSL, the same body to `<index>/_search`. */
    const queryDsl = (engine) => (concurrency, duration, url = used.engines[engine].url) =>
      cannon({
        url,
        connections: concurrency,
        duration,
        requests: requests.map((r) => ({ method: 'POST', path: `/${envs[engine].env.collection}/_search`, headers: headersOf(engine), body: JSON.stringify(sq.toElasticsearchRequest(r)) })),
      });

    const direct = {
      solr: (concurrency, duration, url = used.engines.solr.coreUrl) =>
        cannon({
          url,
          connections: concurrency,
          duration,
          requests: requests.map((r) => ({ method: 'POST', path: '/solr/gateway/select', headers: headersOf('solr'), body: JSON.stringify(sq.toSolrRequest(r)) })),
        }),
      elasticsearch: queryDsl('elasticsearch'),
      opensearch: queryDsl('opensearch'),
      // `principals`: the request as the connector trims it (the engine's own cost of the acl filter).
      mongodb: async (concurrency, duration, principals) => {
        mongo ??= new MongoClient(envs.mongodb.env.params.uri, { maxPoolSize: 32 });
        const collection = mongo.db(envs.mongodb.env.params.database).collection(envs.mongodb.env.collection);
        const calls = requests.map((r) => async () => {
          const m = principals ? sq.trimMongoRequest(sq.toMongoRequest(r), principals) : sq.toMongoRequest(r);
          await Promise.all([
            (async () => {
              // As the connector reads a page (libs/connector-mongodb findPage): missing values last.
              if (m.limit === 0) return [];
              const options = { projection: m.projection, sort: m.sort };
              if (!m.missingLast) return collection.find(m.filter, { ...options, skip: m.skip, limit: m.limit }).toArray();
              const withValue = await collection.countDocuments(m.missingLast.withValue);
              const finds = sq.missingLastFinds(m.missingLast, m.skip, m.limit, withValue);
              return (await Promise.all(finds.map((f) => collection.find(f.filter, { ...options, skip: f.skip, limit: f.limit }).toArray()))).flat();
            })(),
            collection.countDocuments(m.filter),
            ...(r.facetFields ?? []).map((f) => collection.aggregate(m.facetPipelines[f]).toArray()),
          ]);
        });
        return loop(calls, concurrency, duration);
      },
    };
    relays.solr = await startBareRelay(new URL(used.engines.solr.coreUrl).origin);
    relays.elasticsearch = await startBareRelay(used.engines.elasticsearch.url);
    relays.opensearch = await startBareRelay(used.engines.opensearch.url);
    const only = (process.env.BENCH_SEARCH_ENGINES || 'solr,elasticsearch,opensearch,mongodb').split(',');
    for (const name of only) {
      for (const concurrency of CONCURRENCIES) {
        const throughGateway = (duration, connector = name) =>
          cannon({
            url: gateway.baseUrl,
            connections: concurrency,
            duration,
            requests: MIX.map((q) => ({ method: 'GET', path: `/api/search/${connector}/select?${paramsOf(q)}`, headers: { authorization: gateway.auth } })),
          });
        if (concurrency === CONCURRENCIES[0]) {
          await sameAnswersTrimmed(gateway, name);
          // Warm-up (JIT, connection pools, engine caches) on both sides, not measured.
          await throughGateway(WARMUP_S);
          await throughGateway(WARMUP_S, TRIMMED(name));
          await direct[name](concurrency, WARMUP_S);
          if (relays[name]) await direct[name](concurrency, WARMUP_S, relays[name].url);
        }
        const [through, trimmed] = await alternated((d) => throughGateway(d), (d) => throughGateway(d, TRIMMED(name)));
        // MongoDB (FerretDB here) answers a dozen mixes a second, so the filter's cost is mostly the engine's: its own
        // trimmed/untrimmed, the connector's trimmed request sent direct.
        let engineTrimmed;
        if (name === 'mongodb') {
          const principals = sq.aclPrincipals('admin');
          const [plain, trim] = await alternated((d) => direct.mongodb(concurrency, d), (d) => direct.mongodb(concurrency, d, principals));
          engineTrimmed = trim.rps / plain.rps;
        }
        const straight = await direct[name](concurrency, DURATION_S);
        const relayed = relays[name] ? await direct[name](concurrency, DURATION_S, relays[name].url) : undefined;
        const trimmedOfUntrimmed = trimmed.rps / through.rps;
        const latency = through.p50 / straight.p50;
        const throughput = through.rps / straight.rps;
        const pass = relayed
          ? through.rps / relayed.rps >= OF_RELAY_TARGET[concurrency] && (concurrency !== 1 || through.p50 <= relayed.p50 + RELAY_P50_SLACK_MS)
          : throughput >= MONGO_OF_DIRECT_TARGET;
        const trimmedPass = trimmedOfUntrimmed >= TRIMMED_OF_UNTRIMMED_TARGET;
        ok = ok && pass && trimmedPass;
        printResult(`search-vs-direct ${name} c=${concurrency}`, {
          gateway_p50_ms: through.p50,
          direct_p50_ms: straight.p50,
          p50_ratio: latency,
          gateway_rps: through.rps,
          direct_rps: straight.rps,
          rps_ratio: throughput,
          ...(relayed
            ? {
                relay_p50_ms: relayed.p50,
                relay_rps: relayed.rps,
                relay_rps_of_direct: relayed.rps / straight.rps,
                gateway_rps_of_relay: through.rps / relayed.rps,
              }
            : {}),
          meets_target: pass,
          trimmed_p50_ms: trimmed.p50,
          trimmed_rps: trimmed.rps,
          trimmed_of_untrimmed: trimmedOfUntrimmed,
          ...(engineTrimmed !== undefined ? { engine_trimmed_of_untrimmed: engineTrimmed } : {}),
          trimmed_meets_target: trimmedPass,
        });
      }
    }
    return printVerdict(
      'search-vs-direct',
      ok,
      `gateway/relay throughput >= ${OF_RELAY_TARGET[1]} at c=1 and >= ${OF_RELAY_TARGET[16]} at c=16, p50 <= relay + ${RELAY_P50_SLACK_MS} ms at c=1 (HTTP engines); MongoDB gateway/driver >= ${MONGO_OF_DIRECT_TARGET}; aclTrimming: trimmed/untrimmed gateway throughput >= ${TRIMMED_OF_UNTRIMMED_TARGET}, every engine and concurrency`,
    );
  } finally {
    await gateway?.stop();
    for (const relay of Object.values(relays)) relay.stop();
    await mongo?.close();
    for (const { env } of Object.values(envs)) await env.teardown().catch(() => undefined);
    await used.release();
  }
}

benchmark(module, main);
