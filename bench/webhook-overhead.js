'use strict';
// A filesystem → filesystem job on a gateway with a webhook whose endpoint takes 5 s to answer each
// delivery (every run event subscribed), against the same job on a gateway without webhooks, both
// started together and run in alternating rounds (which gateway goes first alternates too). Deliveries
// come from the outbox on the delivery worker, off the job's path: the job must not notice them.
// Target: median docs/s with the webhook ≥ 0.98 × without. The gateways' CPU time per job is printed beside
// the wall times: on a loaded shared machine it is the steadier figure.
// BENCH_DOCS (10,000 files of a few bytes), BENCH_ROUNDS (7), BENCH_WEBHOOK_DELAY_MS (5,000).
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { workDir, median, printResult, printVerdict, processCpuMs } = require('./lib/harness');
const { startJobsGateway, defineJob, runJob } = require('./lib/jobs');

const DOCS = Number(process.env.BENCH_DOCS || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const DELAY_MS = Number(process.env.BENCH_WEBHOOK_DELAY_MS || 5000);
const TARGET = 0.98;

function makeTree(root) {
  const marker = path.join(root, `.done-${DOCS}`);
  if (fs.existsSync(marker)) return;
  fs.rmSync(root, { recursive: true, force: true });
  for (let i = 0; i < DOCS; i++) {
    const dir = path.join(root, 'tree', `d${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `document ${i}\n`);
  }
  fs.writeFileSync(marker, '');
}

/** The slow endpoint: answers 200 DELAY_MS after each request; counts what it received. */
async function slowEndpoint() {
  const received = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ event: req.headers['gateway-event'], id: req.headers['gateway-event-id'], at: Date.now() });
      setTimeout(() => res.writeHead(200).end(), DELAY_MS);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, received, close: () => (server.closeAllConnections(), server.close()) };
}

async function main() {
  const base = workDir('webhook-overhead');
  const srcRoot = path.join(base, 'src');
  makeTree(srcRoot);
  const endpoint = await slowEndpoint();
  const config = (dstRoot, webhooks) => {
    const file = path.join(base, `${path.basename(dstRoot)}.yaml`);
    fs.writeFileSync(
      file,
      `connectors:\n  - {id: src, typeId: filesystem, params: {root: ${srcRoot}}}\n  - {id: dst, typeId: filesystem, params: {root: ${dstRoot}}}\n` +
        (webhooks
          ? `webhooks:\n  - url: ${endpoint.url}\n    events: [run.started, run.completed, run.failed, run.completedWithErrors, run.aborted]\n    secret: bench-webhook-secret-0123\n`
          : ''),
    );
    return file;
  };
  const sides = {};
  for (const [name, webhooks] of [
    ['without', false],
    ['with', true],
  ]) {
    const dstRoot = path.join(base, `dst-${name}`);
    fs.rmSync(dstRoot, { recursive: true, force: true });
    fs.mkdirSync(dstRoot, { recursive: true });
    sides[name] = { gw: await startJobsGateway(srcRoot, dstRoot, { GATEWAY_CONFIG: config(dstRoot, webhooks) }), ms: [], cpuMs: [] };
  }
  try {
    let job = 0;
    const run = async (name) => {
      const { gw } = sides[name];
      const jobId = await defineJob(gw, `j${++job}`, '/tree', `/out-${job}`);
      const cpu0 = processCpuMs(gw.pid);
      const startedAt = Date.now();
      const { ms, status } = await runJob(gw, jobId, 50, { documents: DOCS * 0.95, pollMs: 5 });
      const cpuMs = processCpuMs(gw.pid) - cpu0;
      if (status.status !== 'COMPLETED' || status.written !== DOCS) throw new Error(`${name}: run ended ${status.status} with ${status.written}/${DOCS} written`);
      // Deliveries the endpoint was holding (5 s each) while this job ran.
      const overlapping = endpoint.received.filter((r) => r.at < startedAt + ms && r.at + DELAY_MS > startedAt).length;
      return { ms, cpuMs, overlapping };
    };
    // Untimed: V8 compiles the copy path on each gateway.
    for (const name of ['without', 'with']) await run(name);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      const line = {};
      for (const name of order) {
        const { ms, cpuMs, overlapping } = await run(name);
        sides[name].ms.push(ms);
        sides[name].cpuMs.push(cpuMs);
        line[`${name}_s`] = ms / 1000;
        line[`${name}_cpu_s`] = cpuMs / 1000;
        if (name === 'with') line.deliveries_during_job = overlapping;
      }
      line.load = require('node:os').loadavg()[0];
      printResult(`webhook-overhead round ${round + 1}`, line);
    }
    // Every event of the webhook gateway's runs arrives: 2 per run (started, completed), untimed runs included.
    const expected = 2 * (ROUNDS + 1);
    const deadline = Date.now() + expected * (DELAY_MS + 2000);
    while (endpoint.received.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const withoutDps = DOCS / (median(sides.without.ms) / 1000);
    const withDps = DOCS / (median(sides.with.ms) / 1000);
    const ratio = withDps / withoutDps;
    printResult(`webhook-overhead (${DOCS} documents, endpoint ${DELAY_MS} ms per delivery)`, {
      without_docs_per_s: Math.round(withoutDps),
      with_docs_per_s: Math.round(withDps),
      ratio,
      cpu_ratio: median(sides.without.cpuMs) / median(sides.with.cpuMs),
      deliveries: `${endpoint.received.length}/${expected}`,
      duplicate_ids: endpoint.received.length - new Set(endpoint.received.map((r) => r.id)).size,
    });
    const complete = endpoint.received.length === expected;
    return printVerdict('webhook-overhead', ratio >= TARGET && complete, `with/without webhook docs per s >= ${TARGET} (median of ${ROUNDS}), every event delivered`);
  } finally {
    for (const { gw } of Object.values(sides)) await gw.stop();
    endpoint.close();
  }
}

module.exports = main;
if (require.main === module) main().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
