'use strict';
// job-sync-feed: a sync job's second run from Graph through its delta feed against the same run made by a full
// re-listing, both through the gateway as shipped (issue 36: "the same second run with Graph's delta feed as the
// source completes >= 10 x faster than a full re-listing of the 100,000 items").
// The Graph simulator holds BENCH_ITEMS documents (default 100,000 × 1 KiB) in BENCH_FOLDERS folders (100); one
// sync job (mode sync, deletions delete, recursive) copies them to a filesystem connector (its first run untimed).
// Then, BENCH_ROUNDS times (default 1), alternating:
//   feed:    the change set (0.4 % new content, 0.15 % each deleted, renamed, moved to another folder, added, through
//            the Graph API), then a run: it reads the delta feed from the token of the run before;
//   listing: another change set of the same size, the simulator's delta history dropped (every token answers 410
//            Gone, as the service does after some time), then a run: it falls back to listing every folder, as a
//            job without a feed does.
// Both runs do the same writes, moves and deletions; the listing run also lists the 100 folders page by page and
// compares every document with the job's sync state. Printed: each run's time and counters, the folder listings
// the simulator saw in each (its request log), the ratio listing/feed, and a check that the target equals the
// source (names and sizes) after the last run.
const crypto = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { startGateway, startEngine, median, printResult, printVerdict, benchmark } = require('./lib/harness');
const { loadGraphTypeScript, bounded } = require('./lib/graph-bench');
const { api, runJob } = require('./lib/jobs');

const ITEMS = Number(process.env.BENCH_ITEMS || 100_000);
const FOLDERS = Number(process.env.BENCH_FOLDERS || 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 1);
const TARGET = 10;

/** Every file under `dir`, by relative path, with its size. */
function filesUnder(dir, rel = '', out = new Map()) {
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) filesUnder(dir, r, out);
    else out.set(r, fs.statSync(path.join(dir, r)).size);
  }
  return out;
}

async function main() {
  const ts = loadGraphTypeScript();
  const graph = await startEngine('graph');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-job-sync-feed-'));
  let gw;
  try {
    const info = graph.info;
    const control = new ts.SimulatorControl(info.url, info.caFile);
    const direct = new ts.GraphSetup(info);
    const perFolder = Math.ceil(ITEMS / FOLDERS);
    const folderName = `bench-sync-feed-${crypto.randomBytes(3).toString('hex')}`;
    await control.seed({ folder: folderName, folders: FOLDERS, filesPerFolder: perFolder, bytes: 1024 });

    const dst = path.join(work, 'dst');
    fs.mkdirSync(dst);
    const params = { ...info.connectorParams, clientSecret: '${BENCH_GRAPH_SECRET}' };
    const config = path.join(work, 'gateway.yaml');
    fs.writeFileSync(config, `connectors:\n  - ${JSON.stringify({ id: 'graph', typeId: 'graph', description: 'Graph simulator', params })}\n  - {id: dst, typeId: filesystem, params: {root: ${dst}}}\n`);
    gw = await startGateway({ GATEWAY_CONFIG: config, BENCH_GRAPH_SECRET: info.clientSecret });
    const jobId = (await api(gw, 'POST', '/admin/jobs', {
      jobName: 'sync-feed',
      source: { connectorId: 'graph', folderPath: `/${folderName}`, recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { mode: 'sync', deletions: 'delete' },
    })).results.jobId;

    const expectDone = (run, what) => {
      if (run.status.status !== 'COMPLETED') throw new Error(`${what}: ${run.status.status} ${JSON.stringify(run.status)}`);
      return run;
    };
    const first = expectDone(await runJob(gw, jobId, 200), 'first run');
    console.log(`[bench] job-sync-feed: first run (untimed) ${ITEMS} documents in ${(first.ms / 1000).toFixed(1)} s`);

    // The documents as Graph has them now, by id (folder id, name): picks for a change set.
    const bearer = await direct.accessToken();
    const ca = fs.readFileSync(info.caFile);
    const top = (await direct.call('GET', `/root:/${folderName}`)).json;
    const folders = (await direct.call('GET', `/items/${top.id}/children?$top=1000`)).json.value.filter((i) => i.folder);
    const currentDocuments = async () => {
      const documents = [];
      for (const folder of folders) {
        let next = `/items/${folder.id}/children?$top=1000`;
        while (next) {
          const page = (await direct.call('GET', next)).json;
          for (const item of page.value) if (item.file) documents.push({ id: item.id, name: item.name, folder });
          next = page['@odata.nextLink'] ? page['@odata.nextLink'].slice(page['@odata.nextLink'].indexOf('/items/')) : undefined;
        }
      }
      return documents;
    };
    const putContent = (itemPath) =>
      new Promise((resolve, reject) => {
        const bytes = crypto.randomBytes(1024);
        const req = https.request(`${info.graphUrl}/drives/${info.driveId}${itemPath}`, { method: 'PUT', ca, headers: { authorization: `Bearer ${bearer}`, 'content-length': bytes.length } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`PUT ${itemPath}: ${res.statusCode}`))));
        });
        req.on('error', reject);
        req.end(bytes);
      });
    const ok = async (answer) => {
      const res = await answer;
      if (res.status >= 300) throw new Error(`Graph answered ${res.status}: ${JSON.stringify(res.json)}`);
    };
    const changed = Math.round(ITEMS * 0.004);
    const each = Math.round(ITEMS * 0.0015);
    const changeSet = async (round) => {
      const documents = await currentDocuments();
      const stride = Math.floor(documents.length / (changed + 3 * each));
      const picks = Array.from({ length: changed + 3 * each }, (_, i) => documents[i * stride + round]);
      await bounded(picks.slice(0, changed), 8, (d) => putContent(`/items/${d.id}/content`));
      await bounded(picks.slice(changed, changed + each), 8, (d) => ok(direct.call('DELETE', `/items/${d.id}`)));
      await bounded(picks.slice(changed + each, changed + 2 * each), 8, (d) => ok(direct.call('PATCH', `/items/${d.id}`, { name: `r${round}-${d.name}` })));
      await bounded(picks.slice(changed + 2 * each, changed + 3 * each), 8, (d) => {
        const to = folders[(folders.findIndex((f) => f.id === d.folder.id) + 1) % folders.length];
        return ok(direct.call('PATCH', `/items/${d.id}`, { parentReference: { id: to.id }, name: `m${round}-${d.name}` }));
      });
      await bounded(Array.from({ length: each }, (_, i) => folders[i % folders.length]), 8, (folder) => putContent(`/items/${folder.id}:/added-${crypto.randomBytes(4).toString('hex')}.bin:/content`));
    };
    /** One timed run and the folder listings (children requests) the simulator saw during it. */
    const timedRun = async (what) => {
      const mark = await control.mark();
      const run = expectDone(await runJob(gw, jobId, 20), what);
      const requests = (await control.requests(mark)).requests;
      const listings = requests.filter((r) => /\/children(\?|$)/.test(r.path)).length;
      const deltas = requests.filter((r) => /\/delta(\?|$)/.test(r.path)).length;
      const s = run.status;
      console.log(`[bench] job-sync-feed: ${what} ${run.ms.toFixed(0)} ms (written ${s.written}, skipped ${s.skipped}, removed ${s.removed}, read ${s.read}; ${listings} folder listings, ${deltas} delta requests)`);
      return { ms: run.ms, listings, deltas, status: s };
    };

    const feed = [];
    const listing = [];
    for (let r = 0; r < ROUNDS; r++) {
      await changeSet(2 * r);
      feed.push(await timedRun(`round ${r + 1} feed`));
      await changeSet(2 * r + 1);
      await control.expireDeltaTokens();
      listing.push(await timedRun(`round ${r + 1} listing`));
    }

    // The target equals the source: every document's path and size.
    const source = new Map((await currentDocuments()).map((d) => [`${d.folder.name}/${d.name}`, 1024]));
    const target = filesUnder(path.join(dst, 'out'));
    const missing = [...source.keys()].filter((k) => target.get(k) !== 1024).length;
    const extra = [...target.keys()].filter((k) => !source.has(k)).length;

    const ratio = median(listing.map((x) => x.ms)) / median(feed.map((x) => x.ms));
    printResult('job-sync-feed', {
      items: ITEMS,
      folders: FOLDERS,
      changesPerRun: changed + 4 * each,
      feedMedianMs: median(feed.map((x) => x.ms)).toFixed(0),
      listingMedianMs: median(listing.map((x) => x.ms)).toFixed(0),
      feedFolderListings: feed.map((x) => x.listings).join('/'),
      listingFolderListings: listing.map((x) => x.listings).join('/'),
      ratio: ratio.toFixed(1),
      targetMissingOrWrongSize: missing,
      targetExtra: extra,
    });
    return printVerdict('job-sync-feed', ratio >= TARGET && missing === 0 && extra === 0 && feed.every((x) => x.listings === 0), `listing run / feed run >= ${TARGET}, the feed run lists no folder, the target equals the source`);
  } finally {
    await gw?.stop();
    await graph.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

benchmark(module, main);
