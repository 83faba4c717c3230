'use strict';
// Shared by the benchmarks on the Graph simulator (graph-delta, job-sync-feed): the TypeScript pieces they drive
// in-process, and a bounded-width loop for the change sets they make through the Graph API.
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./harness');

/** The Graph connector type, the test fixture's direct Graph client and the simulator's control client (ts-node). */
function loadGraphTypeScript() {
  const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  require('tsconfig-paths').register({ baseUrl: ROOT, paths: tsconfig.compilerOptions.paths });
  if (!process[Symbol.for('ts-node.register.instance')]) require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  return {
    GraphConnectorType: require(path.join(ROOT, 'libs/connector-graph/src/index.ts')).GraphConnectorType,
    GraphSetup: require(path.join(ROOT, 'test/contract/fixtures/graph-engine.ts')).GraphSetup,
    SimulatorControl: require(path.join(ROOT, 'test/engines/simulators/common/control.ts')).SimulatorControl,
  };
}

/** Runs `task` over `items`, `width` at a time. */
async function bounded(items, width, task) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await task(items[next++]);
  }));
}

module.exports = { loadGraphTypeScript, bounded };
