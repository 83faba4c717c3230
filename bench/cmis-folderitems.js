'use strict';
// Listing a 1,000-document CMIS folder: the gateway's folderitems (one request;
// the connector walks the server's pages) against a direct getChildren walk of
// the same folder paged the way the connector pages (same maxItems, filter and
// succinct JSON), alternating rounds. Prints the time ratio gateway/direct.
// Target: <= 1.3.
const { performance } = require('node:perf_hooks');
const { startGateway, startEngine, median, printResult, printVerdict, workDir, benchmark } = require('./lib/harness');
const { authOf, rootUrl, rootFolderId, createFolder, createSmallDocument, writeGatewayConfig } = require('./lib/cmis-engine');

const DOCS = Number(process.env.BENCH_DOCS || 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 25);
const PAGE_SIZE = Number(process.env.BENCH_CMIS_PAGE_SIZE || 100); // the connector's default pageSize
const TARGET = 1.3;
// The properties the connector asks for in listings (libs/connector-cmis/src/item-info.ts LISTING_FILTER).
const FILTER = [
  'cmis:objectId', 'cmis:baseTypeId', 'cmis:objectTypeId', 'cmis:name', 'cmis:path', 'cmis:description', 'cmis:createdBy',
  'cmis:creationDate', 'cmis:lastModifiedBy', 'cmis:lastModificationDate', 'cmis:changeToken', 'cmis:contentStreamLength',
  'cmis:contentStreamMimeType', 'cmis:versionSeriesId', 'cmis:versionLabel', 'cmis:isPrivateWorkingCopy',
  'cmis:isVersionSeriesCheckedOut', 'cmis:versionSeriesCheckedOutBy', 'cmis:versionSeriesCheckedOutId', 'cmis:checkinComment',
].join(',');

async function main() {
  const dir = workDir('cmis-folderitems');
  const cmis = await startEngine('cmis');
  let gateway;
  try {
    const folder = await createFolder(cmis.info, await rootFolderId(cmis.info), `bench-folderitems-${Date.now()}`);
    const folderId = folder['cmis:objectId'];
    for (let i = 0; i < DOCS; i += 20) {
      await Promise.all(Array.from({ length: Math.min(20, DOCS - i) }, (_, j) => createSmallDocument(cmis.info, folderId, `doc-${String(i + j).padStart(5, '0')}.txt`, `document ${i + j}\n`)));
    }
    gateway = await startGateway({ GATEWAY_CONFIG: writeGatewayConfig(cmis.info, dir, { pageSize: PAGE_SIZE }) });
    const gatewayHeaders = { Authorization: gateway.auth };
    const directHeaders = { authorization: authOf(cmis.info) };

    const listGateway = async () => {
      const started = performance.now();
      const res = await fetch(`${gateway.baseUrl}/api/repo/cmis/folderitems?id=${encodeURIComponent(folderId)}`, { headers: gatewayHeaders });
      if (!res.ok) throw new Error(`folderitems answered ${res.status}: ${await res.text()}`);
      const count = Object.keys((await res.json()).results).length;
      return { ms: performance.now() - started, count };
    };
    const listDirect = async () => {
      const started = performance.now();
      let count = 0;
      for (let skip = 0, more = true; more; ) {
        const q = new URLSearchParams({ objectId: folderId, cmisselector: 'children', maxItems: String(PAGE_SIZE), skipCount: String(skip), filter: FILTER, orderBy: 'cmis:name ASC', includeAllowableActions: 'false', includeRelationships: 'none', renditionFilter: 'cmis:none', includePathSegment: 'false', succinct: 'true' });
        const res = await fetch(`${rootUrl(cmis.info)}?${q}`, { headers: directHeaders });
        if (!res.ok) throw new Error(`getChildren answered ${res.status}: ${await res.text()}`);
        const page = await res.json();
        count += page.objects.length;
        skip += page.objects.length;
        more = page.hasMoreItems && page.objects.length > 0;
      }
      return { ms: performance.now() - started, count };
    };

    for (let i = 0; i < 3; i++) {
      await listGateway();
      await listDirect();
    }
    const g = [];
    const d = [];
    for (let i = 0; i < ROUNDS; i++) {
      const gr = await listGateway();
      const dr = await listDirect();
      if (gr.count !== DOCS || dr.count !== DOCS) throw new Error(`listed ${gr.count} (gateway) and ${dr.count} (direct) of ${DOCS}`);
      g.push(gr.ms);
      d.push(dr.ms);
    }
    const ratio = median(g) / median(d);
    printResult('cmis-folderitems', {
      docs: DOCS,
      page_size: PAGE_SIZE,
      server_pages: Math.ceil(DOCS / PAGE_SIZE),
      rounds: ROUNDS,
      gateway_ms: median(g),
      direct_ms: median(d),
      ratio,
    });
    return printVerdict('cmis-folderitems', ratio <= TARGET, `gateway/direct time <= ${TARGET}`);
  } finally {
    await gateway?.stop();
    await cmis.stop();
  }
}

benchmark(module, main);
