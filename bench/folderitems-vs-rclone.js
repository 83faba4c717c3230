'use strict';
// Listing a 10,000-file folder: the gateway's folderitems (every page, following
// X-Next-Cursor) against `rclone serve http` listing the same folder, alternating
// rounds. Target: the gateway takes at most 1.0 times as long.
const fs = require('node:fs');
const path = require('node:path');
const { startGateway, median, printResult, printVerdict, workDir, benchmark } = require('./lib/harness');
const { startRclone } = require('./lib/references');
const { timeGatewayListing, timeRcloneListing } = require('./lib/listing');

const FILES = Number(process.env.BENCH_FILES || 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const PAGE = process.env.BENCH_PAGE_LIMIT; // unset: the gateway's default (all items in one answer)

async function main() {
  const data = workDir('folderitems');
  const folder = path.join(data, 'repository', 'many');
  fs.mkdirSync(folder, { recursive: true });
  if (fs.readdirSync(folder).length !== FILES) {
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(folder, `doc-${String(i).padStart(5, '0')}.txt`), `document ${i}\n`);
  }

  const gateway = await startGateway({ GATEWAY_DATA_DIR: data });
  const rclone = await startRclone(path.join(data, 'repository'));
  try {
    const headers = { Authorization: gateway.auth };
    const folderId = (await (await fetch(`${gateway.baseUrl}/api/repo/fs/idbypath?folderPath=/&fileName=many`, { headers })).json()).results.id;

    const listGateway = () => timeGatewayListing(gateway, folderId, FILES, PAGE);
    const listRclone = () => timeRcloneListing(rclone, 'many', 'doc-', FILES);

    await listGateway();
    await listRclone();
    const g = [];
    const r = [];
    for (let i = 0; i < ROUNDS; i++) {
      g.push(await listGateway());
      r.push(await listRclone());
    }
    const ratio = median(g) / median(r);
    printResult('folderitems-vs-rclone', {
      files: FILES,
      page_limit: PAGE || 'none',
      gateway_s: median(g),
      rclone_s: median(r),
      ratio,
    });
    return printVerdict('folderitems-vs-rclone', ratio <= 1.0, 'gateway/rclone time <= 1.0');
  } finally {
    await gateway.stop();
    await rclone.stop();
  }
}

benchmark(module, main);
