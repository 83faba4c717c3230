'use strict';
// The node arguments of `npm start` (package.json), so that tests and benchmarks run the built
// gateway exactly as a user does: the V8 settings on that line (apps/api/README.md, "Idle RSS")
// shape the gateway's memory, and a test run without them would measure another program.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

/** ['--flag', ..., '<ROOT>/dist/apps/api/src/main.js']: `npm start` without its leading `node`. */
function startArgs() {
  const start = require(path.join(ROOT, 'package.json')).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || !words[words.length - 1].endsWith('main.js')) {
    throw new Error(`package.json scripts.start is not "node [flags] <main.js>": ${start}`);
  }
  return [...words.slice(1, -1), path.join(ROOT, words[words.length - 1])];
}

module.exports = { startArgs };
