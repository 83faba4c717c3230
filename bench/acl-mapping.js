'use strict';
// Permission mapping per document (issue 34, second performance line, ACL half): a job's aclMapping of
// 1,000 principals (read from a CSV file, as real migrations give them) applied to 10,000 documents'
// ACLs of 6 entries each, one in six principals outside the map. In-process micro-bench of the pure
// mapping (apps/api/src/jobs/mapping/acl-mapping.ts, loaded with ts-node's transpiler): what copyAcls
// adds per document beyond the connectors' own getAcl/applyAcl calls.
//
// Reference, alternating with it in the same run: the floor of a filesystem → filesystem document copy,
// 1 KiB read from one file and written to another (the job-vs-cp small shape's documents), in-process,
// synchronous. Target: mapping ≤ 0.1 × that floor's CPU time per document (CPU, not wall: the machine is
// shared); a real job's document costs several times the floor, so the bound is a strict one. The CSV read and the compile happen once per run and
// process: printed beside, not per document.
// BENCH_ROUNDS (default 7), BENCH_ACL_PRINCIPALS (default 1000), BENCH_ACL_DOCS (default 10000).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, benchmark, median, printResult, printVerdict } = require('./lib/harness');

const NAME = 'acl-mapping';
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const PRINCIPALS = Number(process.env.BENCH_ACL_PRINCIPALS || 1000);
const DOCS = Number(process.env.BENCH_ACL_DOCS || 10_000);
const ENTRIES = 6;

async function main() {
  if (!process[Symbol.for('ts-node.register.instance')]) require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions.paths });
  const { compileAclMapping, mapAclEntries } = require(path.join(ROOT, 'apps/api/src/jobs/mapping/acl-mapping.ts'));
  const { readMappingCsv } = require(path.join(ROOT, 'apps/api/src/jobs/mapping/acl-mapping-csv.ts'));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-acl-'));
  try {
    const csv = path.join(dir, 'users.csv');
    fs.writeFileSync(csv, ['source,target', ...Array.from({ length: PRINCIPALS }, (_, i) => `user${i},user${i}@contoso.com`)].join('\n') + '\n');
    let t = process.hrtime.bigint();
    const principals = await readMappingCsv(csv, 'principalsFile');
    const csvMs = Number(process.hrtime.bigint() - t) / 1e6;
    t = process.hrtime.bigint();
    const mapping = compileAclMapping({ principalsFile: 'users.csv', groups: { GROUP_EVERYONE: 'Gateway Visitors' }, unmapped: 'drop' }, 'cmis', 'sharepoint', { principals });
    const compileMs = Number(process.hrtime.bigint() - t) / 1e6;

    // Documents' ACLs as the CMIS connector reads them; every sixth principal is outside the map.
    const perms = ['cmis:read', 'cmis:write', 'cmis:all', 'cmis:read,cmis:write'];
    const acls = Array.from({ length: DOCS }, (_, d) =>
      Array.from({ length: ENTRIES }, (_, e) => {
        const n = (d * 7 + e * 131) % PRINCIPALS;
        return `${e === 5 ? `stranger${n}` : e === 4 ? 'GROUP_EVERYONE' : `user${n}`}:${perms[(d + e) % perms.length]}`;
      }),
    );

    const floorSrc = path.join(dir, 'src.bin');
    const floorDst = path.join(dir, 'dst.bin');
    fs.writeFileSync(floorSrc, Buffer.alloc(1024, 7));
    const floorDocs = Math.min(DOCS, 500);

    let checksum = 0;
    // Wall and CPU time per document: on a shared, loaded machine the CPU time is the steadier figure.
    const timed = (docs, body) => {
      const wall = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      body();
      const used = process.cpuUsage(cpu);
      return { wallUs: Number(process.hrtime.bigint() - wall) / 1e3 / docs, cpuUs: (used.user + used.system) / docs };
    };
    const mapRound = () =>
      timed(DOCS, () => {
        for (const entries of acls) {
          const { mapped, unmapped } = mapAclEntries(mapping, entries);
          checksum += Object.keys(mapped).length + unmapped.principals.length;
        }
      });
    const floorRound = () =>
      timed(floorDocs, () => {
        for (let i = 0; i < floorDocs; i++) fs.writeFileSync(floorDst, fs.readFileSync(floorSrc));
      });

    mapRound();
    floorRound(); // warm-up
    const mapUs = [];
    const floorUs = [];
    for (let r = 0; r < ROUNDS; r++) {
      mapUs.push(mapRound());
      floorUs.push(floorRound());
    }
    const mapCpu = median(mapUs.map((r) => r.cpuUs));
    const floorCpu = median(floorUs.map((r) => r.cpuUs));
    const ratio = mapCpu / floorCpu;
    const expectedMapped = acls.slice(0, 1).map((e) => Object.keys(mapAclEntries(mapping, e).mapped).length)[0];
    printResult(NAME, {
      principals: PRINCIPALS,
      docs: DOCS,
      entries_per_doc: ENTRIES,
      mapping_cpu_us_per_doc_median: mapCpu,
      mapping_cpu_us_per_doc_rounds: mapUs.map((r) => r.cpuUs.toFixed(2)).join('/'),
      mapping_wall_us_per_doc_median: median(mapUs.map((r) => r.wallUs)),
      fs_copy_floor_cpu_us_per_doc_median: floorCpu,
      fs_copy_floor_wall_us_per_doc_median: median(floorUs.map((r) => r.wallUs)),
      mapping_over_floor_cpu: ratio,
      csv_read_ms: csvMs,
      compile_ms: compileMs,
      mapped_principals_first_doc: expectedMapped,
      checksum,
      load: os.loadavg()[0].toFixed(1),
    });
    return printVerdict(NAME, ratio <= 0.1, `mapping/fs-copy-floor CPU per document <= 0.1 (${PRINCIPALS} principals in the map)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

benchmark(module, main);
