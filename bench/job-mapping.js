'use strict';
// A copy job's property mapping (options.mapping, apps/api/src/jobs/mapping) against the same job
// without one: 10,000 documents of 1 KiB in 10 folders, filesystem → filesystem, each source
// document carrying 20 custom properties (the filesystem connector keeps them in its records).
// Alternating rounds in one gateway, each job into a folder of its own, medians of each:
//   none:    no mapping: the job copies content only (what every job did before `mapping`)
//   mapped:  20 properties mapped (renamed, 15 of them transformed: trim, uppercase, replace),
//            unmapped: drop. Per document this adds the read of the source's properties (the listing's
//            items do not carry them: the reads of a turn go in one getItems call, one records query per
//            folder), the mapping, and the 20 values written with the copy itself (the target declares
//            propertyUpdate.propertiesOnCreate: the records thread puts them in the first record):
//            what carrying properties costs on this pair, not the engine alone.
//   read:    20 rules naming properties the documents do not have: the read and the mapping,
//            no property written (splits the mapped job's extra cost into reading and writing).
//   engine:  the mapping engine by itself, in this process (the built mapDocument + checkAgainstTarget
//            over the same 20 properties), per document, beside the none job's time per document.
// Target (issue 34): mapped/none throughput >= 0.9. Printed: throughput ratio per round and median,
// the gateway's CPU per job (all its threads), the engine's share of a document's copy time. 2 shared cores: other work moves every figure.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT, workDir, median, printResult, printVerdict, benchmark, processCpuMs } = require('./lib/harness');
const { startJobsGateway, api, runJob } = require('./lib/jobs');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const FILES = Number(process.env.BENCH_MAPPING_FILES || 10_000);
const FOLDERS = 10;
const PROPERTIES = 20;
const TARGET = 0.9;
const names = Array.from({ length: PROPERTIES }, (_, i) => `p${String(i + 1).padStart(2, '0')}`);

function mapping(prefix = 'p') {
  const transforms = ['trim', 'uppercase', { replace: { from: '-', to: '_' } }, undefined];
  return {
    properties: Object.fromEntries(names.map((name) => [name.replace(/^p/, prefix), name.toUpperCase()]).map(([n, to], i) => [n, transforms[i % 4] ? { to, transform: transforms[i % 4] } : to])),
    unmapped: 'drop',
  };
}

function makeTree(root) {
  const marker = path.join(root, `.tree-${FILES}`);
  if (fs.existsSync(marker)) return false;
  fs.rmSync(root, { recursive: true, force: true });
  const block = Buffer.alloc(1024, 'x');
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, 'tree', `d${i % FOLDERS}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.txt`), block);
  }
  fs.writeFileSync(marker, '');
  return true;
}

/** Sets the 20 properties on every source document through the gateway (once per tree: the records keep them). */
async function seedProperties(gw, root) {
  const marker = path.join(root, `.props-${FILES}`);
  if (fs.existsSync(marker)) return;
  const t0 = Date.now();
  const tree = (await api(gw, 'GET', `/repo/src/idbypath?folderPath=/&fileName=tree`)).results.id;
  const ids = [];
  for (const folder of Object.values((await api(gw, 'GET', `/repo/src/folderitems?id=${encodeURIComponent(tree)}`)).results)) {
    const docs = (await api(gw, 'GET', `/repo/src/folderitems?id=${encodeURIComponent(folder.Id)}`)).results;
    for (const d of Object.values(docs)) ids.push(d.Id);
  }
  if (ids.length !== FILES) throw new Error(`listed ${ids.length} documents, expected ${FILES}`);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const i = next++;
      const query = names.map((n, k) => `${n}=${encodeURIComponent(`  value-${k}-of-${i}  `)}`).join('&');
      await api(gw, 'PUT', `/repo/src/updateProperties?fileId=${encodeURIComponent(ids[i])}&${query}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  fs.writeFileSync(marker, '');
  console.log(`[bench] job-mapping: set ${PROPERTIES} properties on ${FILES} documents in ${Math.round((Date.now() - t0) / 1000)} s (once per tree)`);
}

/** The engine alone: µs per document for mapDocument + checkAgainstTarget over 20 properties (the built module). */
function engineMicros() {
  const engine = require(path.join(ROOT, 'dist/apps/api/src/jobs/mapping/property-mapping.js'));
  const compiled = engine.compileMapping(mapping());
  const docs = Array.from({ length: FILES }, (_, i) => ({ typeId: 'file', properties: Object.fromEntries(names.map((n, k) => [n, `  value-${k}-of-${i}  `])) }));
  let written = 0;
  const once = () => {
    const t0 = process.hrtime.bigint();
    for (const doc of docs) written += Object.keys(engine.checkAgainstTarget(engine.mapDocument(compiled, doc), undefined).properties).length;
    return Number(process.hrtime.bigint() - t0) / 1e3 / docs.length;
  };
  once(); // warm-up: V8 optimises the loop
  const us = median([once(), once(), once()]);
  if (written !== FILES * PROPERTIES * 4) throw new Error(`the engine wrote ${written} values, expected ${FILES * PROPERTIES * 4}`);
  return us;
}

async function main() {
  const base = workDir('job-mapping');
  const srcRoot = path.join(base, 'src');
  const dstRoot = path.join(base, 'dst');
  makeTree(srcRoot);
  fs.rmSync(dstRoot, { recursive: true, force: true });
  fs.mkdirSync(dstRoot, { recursive: true });
  const gw = await startJobsGateway(srcRoot, dstRoot);
  const times = { none: [], mapped: [], read: [] };
  // The gateway's CPU per job (every thread: the event loop, the copy and records threads): steadier than wall time on a loaded machine.
  const cpu = { none: [], mapped: [], read: [] };
  const optionsOf = { none: {}, mapped: { mapping: mapping() }, read: { mapping: mapping('absent') } };
  try {
    await seedProperties(gw, srcRoot);
    const define = async (name, target, options) =>
      (await api(gw, 'POST', '/admin/jobs', { jobName: name, source: { connectorId: 'src', folderPath: '/tree' }, target: { connectorId: 'dst', folderPath: target }, options })).results.jobId;
    // Untimed: V8 warms the job path (job-vs-cp measured the first jobs of a gateway up to 2x slower).
    for (const kind of ['none', 'mapped']) await runJob(gw, await define(`warm-${kind}`, `/warm-${kind}`, optionsOf[kind]), 100);
    for (let round = 0; round < ROUNDS; round++) {
      const kinds = Object.keys(times);
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]);
      for (const kind of order) {
        const jobId = await define(`${kind}-${round}`, `/${kind}-${round}`, optionsOf[kind]);
        execFileSync('sync');
        const cpu0 = processCpuMs(gw.pid);
        const run = await runJob(gw, jobId, 100, { documents: Math.floor(FILES * 0.95), pollMs: 5 });
        if (run.status.status !== 'COMPLETED' || run.status.written !== FILES) throw new Error(`${kind} job ended ${run.status.status} with ${run.status.written}/${FILES} written: ${run.status.message}`);
        times[kind].push(run.ms);
        cpu[kind].push(processCpuMs(gw.pid) - cpu0);
      }
      console.log(
        `[bench] job-mapping round ${round + 1}: none=${Math.round(times.none[round])}ms mapped=${Math.round(times.mapped[round])}ms read=${Math.round(times.read[round])}ms ` +
          `mapped/none throughput=${(times.none[round] / times.mapped[round]).toFixed(3)} read/none=${(times.none[round] / times.read[round]).toFixed(3)} ` +
          `cpu none=${Math.round(cpu.none[round])}ms mapped=${Math.round(cpu.mapped[round])}ms read=${Math.round(cpu.read[round])}ms | load=${require('node:os').loadavg()[0].toFixed(1)}`,
      );
    }
    // One written document's properties, checked: the mapped job did carry them.
    const sample = (await api(gw, 'GET', `/repo/dst/idbypath?folderPath=/mapped-0/d0&fileName=f0.txt`)).results.id;
    const info = (await api(gw, 'GET', `/repo/dst/properties?id=${encodeURIComponent(sample)}`)).results;
    if (!JSON.stringify(info).includes('VALUE-1-OF-')) throw new Error(`the mapped copy lacks its mapped properties: ${JSON.stringify(info).slice(0, 500)}`);
  } finally {
    await gw.stop();
  }
  const us = engineMicros();
  // 80,000 copies: unlinking them takes minutes on this VM (discard on every freed extent), after the figures.
  console.log('[bench] job-mapping: removing the copies');
  fs.rmSync(dstRoot, { recursive: true, force: true });
  const ratio = median(times.none) / median(times.mapped);
  const nonePerDocUs = (median(times.none) * 1000) / FILES;
  printResult(`job-mapping (${FILES} documents of 1 KiB, ${PROPERTIES} properties)`, {
    none_ms: Math.round(median(times.none)),
    mapped_ms: Math.round(median(times.mapped)),
    none_rounds_ms: times.none.map(Math.round).join('/'),
    mapped_rounds_ms: times.mapped.map(Math.round).join('/'),
    read_rounds_ms: times.read.map(Math.round).join('/'),
    read_vs_none: Number((median(times.none) / median(times.read)).toFixed(3)),
    ratio_rounds: times.none.map((n, i) => (n / times.mapped[i]).toFixed(3)).join('/'),
    mapped_vs_none: Number(ratio.toFixed(3)),
    cpu_rounds_ms: ['none', 'mapped', 'read'].map((k) => `${k} ${cpu[k].map(Math.round).join('/')}`).join(', '),
    cpu_mapped_vs_none: Number((median(cpu.mapped) / median(cpu.none)).toFixed(3)),
    engine_us_per_doc: Number(us.toFixed(2)),
    none_us_per_doc: Math.round(nonePerDocUs),
    engine_share_of_copy: Number((us / nonePerDocUs).toFixed(4)),
  });
  return printVerdict('job-mapping', ratio >= TARGET, `mapped/none throughput >= ${TARGET}`);
}

benchmark(module, main);
