'use strict';
// The CSV report of a 1,000,000-document run (GET /api/job/service/{id}/report?format=csv), streamed from
// the built gateway as shipped. The run is seeded straight into the job tables of a temporary data folder's
// SQLite database (as the engine leaves them: a job_run_docs row per document, an `r` audit record and one
// for its outcome), so the benchmark measures the report path, not a copy. Prints rows/s and the gateway's
// peak RSS while it streams. Target: ≥ 100,000 rows/s and peak RSS < 200 MB (issue 35).
// BENCH_REPORT_DOCS (1,000,000), BENCH_ROUNDS (3); BENCH_REPORT_DATA_DIR: a data folder kept between runs (seeded once).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const { gatewayApi, median, printResult, printVerdict, rssBytes, sampleRss, startGateway } = require('./lib/harness');

const DOCS = Number(process.env.BENCH_REPORT_DOCS || 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const ROWS_PER_S_TARGET = 100_000;
const RSS_TARGET_MB = 200;
const JOB_ID = 1;
const RUN_ID = `${JOB_ID}_1`;

/** Outcome of document i: mostly processed, a few of each other kind (r: read, never finished). */
function outcomeOf(i) {
  const k = i % 200;
  return k < 2 ? 'e' : k < 4 ? 'd' : k === 4 ? 's' : k === 5 ? 'r' : 'p';
}

/** The run of job 1 as the engine leaves it, with counters that match its documents. */
function seed(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const now = Date.now();
  const count = { p: 0, e: 0, d: 0, s: 0, r: 0 };
  const insertDoc = db.prepare('insert into job_run_docs (run_id, doc_id, rel_path, state, outcome, claimed_at) values (?, ?, ?, ?, ?, ?)');
  const insertAudit = db.prepare('insert into job_audit (job_id, run_id, doc_id, record_type, source_path, target_id, message, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < DOCS; i++) {
      const rel = `d${String(Math.floor(i / 1000)).padStart(4, '0')}/report, "quarterly" ${i}.pdf`;
      const sourcePath = `/in/${rel}`;
      const docId = Buffer.from(sourcePath).toString('base64url');
      const outcome = outcomeOf(i);
      count[outcome]++;
      const at = now - (DOCS - i);
      insertDoc.run(RUN_ID, docId, rel, outcome === 'r' ? 'claimed' : 'done', outcome === 'r' ? null : outcome, at);
      insertAudit.run(JOB_ID, RUN_ID, docId, 'r', sourcePath, null, null, at);
      if (outcome === 'r') continue;
      const targetId = outcome === 'p' || outcome === 'd' ? Buffer.from(`/out/${rel}`).toString('base64url') : null;
      const message = outcome === 'e' ? 'Upstream answered 503: Service Unavailable' : outcome === 's' ? "Excluded by pattern '*.pdf'" : null;
      insertAudit.run(JOB_ID, RUN_ID, docId, outcome, sourcePath, targetId, message, at + 1);
    }
    const counters = { read: DOCS, written: count.p, skipped: count.d + count.s, failed: count.e };
    db.prepare(
      `insert into job_runs (id, job_id, run_number, kind, status, message, started_by, attempt, cancel, start_time, end_time, active_ms,
         segment_start, read, written, skipped, failed, removed, failed_base, updated_at, discovered, bytes_written)
       values (?, ?, 1, 'start', 'COMPLETED_WITH_ERRORS', null, 'admin', 1, 0, ?, ?, ?, null, ?, ?, ?, ?, 0, 0, ?, ?, 0)`,
    ).run(RUN_ID, JOB_ID, now - DOCS, now, DOCS, counters.read, counters.written, counters.skipped, counters.failed, now, DOCS);
    db.prepare('update jobs set run_count = 1 where id = ?').run(JOB_ID);
  })();
  db.close();
  return count;
}

/** Streams the CSV report; counts its lines as they come (the client stays light: it shares the machine). */
async function streamReport(gw) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(`${gw.baseUrl}/api/job/service/${JOB_ID}/report?format=csv&runId=${RUN_ID}`, { headers: { Authorization: gw.auth } });
  if (res.status !== 200) throw new Error(`report: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { rows: lines - 1, bytes, seconds };
}

module.exports = async function main() {
  const kept = process.env.BENCH_REPORT_DATA_DIR;
  const dataDir = kept ? path.resolve(kept) : fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-report-'));
  const configFile = path.join(dataDir, 'gateway.yaml');
  const seeded = path.join(dataDir, `.seeded-${DOCS}`);
  const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configFile };
  try {
    if (!fs.existsSync(seeded)) {
      fs.mkdirSync(path.join(dataDir, 'src'), { recursive: true });
      fs.writeFileSync(configFile, `connectors:\n  - {id: src, typeId: filesystem, params: {root: ${path.join(dataDir, 'src')}}}\n`);
      // The first start creates the schema and the job definition; the run is seeded while no gateway is up.
      const first = await startGateway(env);
      await gatewayApi(first, 'POST', '/admin/jobs', { jobName: 'report', source: { connectorId: 'src', folderPath: '/' }, target: { connectorId: 'src', folderPath: '/out' } });
      await first.stop();
      const t0 = Date.now();
      const count = seed(path.join(dataDir, 'gateway.sqlite'));
      fs.writeFileSync(seeded, '');
      console.log(`[bench] job-report: seeded ${DOCS} documents (${JSON.stringify(count)}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    const gw = await startGateway(env);
    try {
      const status = (await gatewayApi(gw, 'GET', `/job/service/${JOB_ID}/status`)).results;
      if (status.read !== DOCS) throw new Error(`the seeded run reads ${status.read} documents, not ${DOCS}`);
      const idleMb = rssBytes(gw.pid) / 1e6;
      const rates = [];
      let peakMb = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const sampler = sampleRss(gw.pid, 20);
        const { rows, bytes, seconds } = await streamReport(gw);
        const roundPeak = sampler.stop() / 1e6;
        if (rows !== DOCS) throw new Error(`the report has ${rows} rows, not ${DOCS}`);
        rates.push(rows / seconds);
        peakMb = Math.max(peakMb, roundPeak);
        printResult(`job-report round ${round}`, { rows, mb: bytes / 1e6, seconds, rows_per_s: Math.round(rows / seconds), peak_rss_mb: roundPeak });
      }
      const rate = median(rates);
      printResult(`job-report (${DOCS} documents, CSV)`, { rows_per_s_median: Math.round(rate), idle_rss_mb: idleMb, peak_rss_mb: peakMb, load1: os.loadavg()[0] });
      return printVerdict('job-report', rate >= ROWS_PER_S_TARGET && peakMb < RSS_TARGET_MB, `CSV report rows/s >= ${ROWS_PER_S_TARGET} (median) and gateway peak RSS < ${RSS_TARGET_MB} MB`);
    } finally {
      await gw.stop();
    }
  } finally {
    if (!kept) fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

if (require.main === module) {
  module.exports().then((ok) => process.exit(ok ? 0 : 1), (e) => (console.error(e), process.exit(2)));
}
