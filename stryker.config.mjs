// Mutation testing of the modules whose bugs are security or data-loss bugs (`npm run test:mutation`).
// Not part of `npm test`: some 2,000 mutants, well over 20 minutes on two idle cores (hours on a busy
// machine). Target: a mutation score of at least 85 % on each module; a mutant judged equivalent is disabled on its line with the reason beside it
// (`// Stryker disable next-line <mutator>: <reason>`). One module alone: `npx stryker run --mutate <file>`.
import { writeFileSync } from 'node:fs';

const mutate = [
  // No path from a request escapes a connector's root.
  'libs/connector-filesystem/src/paths.ts',
  // ... nor a job's direct copy between two filesystem connectors (no link followed, no file replaced).
  'libs/connector-filesystem/src/direct-copy.ts',
  // ... and the copy thread's records: a name the gateway holds is refused, a leftover record left to createFile.
  'libs/connector-filesystem/src/direct-copy-records.ts',
  // Range and conditional requests on every download.
  'apps/api/src/common/download.ts',
  // Zip entry names: no traversal, no clash, nothing a desktop unzipper refuses.
  'apps/api/src/files/zip-entry-names.ts',
  // Authentication: the verification cache and the login lock-out.
  'apps/api/src/auth/verification-cache.ts',
  'apps/api/src/auth/login-lockout.ts',
  // Jobs: the state table and how a run is settled.
  'apps/api/src/jobs/job-states.ts',
  'apps/api/src/jobs/run-lifecycle.ts',
  // The search query parser and its translators to each engine's syntax, named one by one so a new
  // file joins the measured set by decision, not by glob.
  'libs/search-query/src/parser.ts',
  'libs/search-query/src/values.ts',
  'libs/search-query/src/ast.ts', // SearchSyntaxError: the parameter and position a 400 names
  'libs/search-query/src/schema.ts', // which field names reach an engine
  'libs/search-query/src/leaf-values.ts', // the translators' own check of every value
  'libs/search-query/src/words.ts', // word boundaries, and the MongoDB patterns rebuilding them
  'libs/search-query/src/solr.ts',
  'libs/search-query/src/elasticsearch.ts',
  'libs/search-query/src/mongo.ts',
  // The raw-query guards: what a POST .../query body may not carry to an engine.
  'libs/search-query/src/raw-guards.ts',
  // Permission trimming (issue 14): the filter every trimmed query gets, and what a raw query may not carry past it.
  'libs/search-query/src/acl-trim.ts',
];

// The typescript checker compiles each mutant within this project: the mutated files and what they import
// (about 50 files). Given the whole tree (500 files, tests and benchmarks included) it was the run's
// longest part by far. Written here so the list above stays the only list.
const CHECKED_PROJECT = 'tsconfig.mutation.json';
writeFileSync(CHECKED_PROJECT, `${JSON.stringify({ extends: './tsconfig.json', compilerOptions: { incremental: false }, include: [], files: mutate }, null, 2)}\n`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'jest.unit.config.js',
    // Each mutant runs only the unit tests that import its file (jest --findRelatedTests).
    enableFindRelatedTests: true,
  },
  checkers: ['typescript'],
  tsconfigFile: CHECKED_PROJECT,
  coverageAnalysis: 'perTest',
  // The machine is shared: two cores at most.
  concurrency: 2,
  mutate,
  ignorePatterns: ['dist', 'data', 'coverage', 'bench/.work', 'reports', '*.tsbuildinfo'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false },
  thresholds: { high: 90, low: 85, break: null },
  timeoutMS: 10_000,
};
