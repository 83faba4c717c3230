'use strict';
// graph-delta: what a sync run saves by reading Graph's change feed instead of listing every folder.
// The Graph simulator holds BENCH_ITEMS documents (default 100,000) in BENCH_FOLDERS folders (default
// 100) of one folder; after a token, 1 % of them change through the Graph API (0.4 % new content, 0.15 %
// each deleted, renamed, moved to another folder, and 0.15 % added). Then, alternating rounds, the Graph
// connector (in this process, its defaults: pages of 200) lists every folder page by page (listFolder, as
// a copy job walks a source) against one delta pass from the token (changeFeed.changesSince). Prints the
// medians and the ratio listing/delta. Target (issue 36): the delta pass >= 10x faster.
const crypto = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { startEngine, median, printResult, printVerdict, benchmark } = require('./lib/harness');
const { loadGraphTypeScript, bounded } = require('./lib/graph-bench');

const ITEMS = Number(process.env.BENCH_ITEMS || 100_000);
const FOLDERS = Number(process.env.BENCH_FOLDERS || 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const TARGET = 10;

async function main() {
  const ts = loadGraphTypeScript();
  const graph = await startEngine('graph');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-graph-delta-'));
  let connector;
  try {
    const info = graph.info;
    const perFolder = Math.ceil(ITEMS / FOLDERS);
    const folderName = `bench-delta-${crypto.randomBytes(3).toString('hex')}`;
    const seeded = Date.now();
    const direct = new ts.GraphSetup(info);
    await new ts.SimulatorControl(info.url, info.caFile).seed({ folder: folderName, folders: FOLDERS, filesPerFolder: perFolder, bytes: 1024 });
    console.log(`[bench] seeded ${FOLDERS} folders x ${perFolder} documents in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

    connector = await new ts.GraphConnectorType().create({ id: 'bench', typeId: 'graph', description: 'graph-delta', params: { ...info.connectorParams } }, { dataDir });
    const root = await connector.rootFolder();
    const top = (await connector.listFolder(root.folderId)).items.find((i) => i.name === folderName);
    const folders = (await connector.listFolder(top.id)).items;

    const listAll = async () => {
      const t = performance.now();
      const documents = [];
      for (const folder of (await connector.listFolder(top.id)).items) {
        let cursor;
        do {
          const page = await connector.listFolder(folder.id, { limit: 200, cursor });
          for (const item of page.items) documents.push({ id: item.id, name: item.name, folder });
          cursor = page.nextCursor;
        } while (cursor);
      }
      return { ms: performance.now() - t, count: documents.length, documents };
    };

    // The change set, through the Graph API by item id, after the token; picked across the folders.
    const { documents } = await listAll();
    const token = await connector.changeFeed.latestToken();
    const changed = Math.round(ITEMS * 0.004);
    const each = Math.round(ITEMS * 0.0015);
    const stride = Math.floor(documents.length / (changed + 3 * each));
    const picks = Array.from({ length: changed + 3 * each }, (_, i) => documents[i * stride]);
    const started = Date.now();
    const bearer = await direct.accessToken();
    const putContent = (itemPath) =>
      new Promise((resolve, reject) => {
        const bytes = crypto.randomBytes(1024);
        const req = https.request(`${info.graphUrl}/drives/${info.driveId}${itemPath}`, { method: 'PUT', ca: fs.readFileSync(info.caFile), headers: { authorization: `Bearer ${bearer}`, 'content-length': bytes.length } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`PUT ${itemPath}: ${res.statusCode}`))));
        });
        req.on('error', reject);
        req.end(bytes);
      });
    const expect2xx = async (answer) => {
      const res = await answer;
      if (res.status >= 300) throw new Error(`Graph answered ${res.status}: ${JSON.stringify(res.json)}`);
    };
    await bounded(picks.slice(0, changed), 8, (d) => putContent(`/items/${d.id}/content`));
    await bounded(picks.slice(changed, changed + each), 8, (d) => expect2xx(direct.call('DELETE', `/items/${d.id}`)));
    await bounded(picks.slice(changed + each, changed + 2 * each), 8, (d) => expect2xx(direct.call('PATCH', `/items/${d.id}`, { name: `renamed-${d.name}` })));
    await bounded(picks.slice(changed + 2 * each, changed + 3 * each), 8, (d) => {
      const target = folders[(folders.findIndex((f) => f.id === d.folder.id) + 1) % folders.length];
      return expect2xx(direct.call('PATCH', `/items/${d.id}`, { parentReference: { id: target.id }, name: `moved-${d.name}` }));
    });
    await bounded(Array.from({ length: each }, (_, i) => folders[i % folders.length]), 8, (folder) => putContent(`/items/${folder.id}:/added-${crypto.randomBytes(4).toString('hex')}.bin:/content`));
    console.log(`[bench] ${changed + 4 * each} changes made in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const deltaPass = async () => {
      const t = performance.now();
      let count = 0;
      for await (const page of connector.changeFeed.changesSince(token)) count += page.changes.length;
      return { ms: performance.now() - t, count };
    };
    // One warm-up each (token, connections, the simulator's indexes), then alternating rounds.
    const warmList = await listAll();
    const warmDelta = await deltaPass();
    const listMs = [];
    const deltaMs = [];
    for (let r = 0; r < ROUNDS; r++) {
      listMs.push((await listAll()).ms);
      deltaMs.push((await deltaPass()).ms);
    }
    const ratio = median(listMs) / median(deltaMs);
    printResult('graph-delta', {
      items: ITEMS,
      folders: FOLDERS,
      listed: warmList.count,
      changesReported: warmDelta.count,
      listingMedianMs: median(listMs).toFixed(0),
      deltaMedianMs: median(deltaMs).toFixed(0),
      ratio: ratio.toFixed(1),
    });
    return printVerdict('graph-delta', ratio >= TARGET, `full listing / delta pass >= ${TARGET}`);
  } finally {
    await connector?.close?.();
    await graph.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

benchmark(module, main);
