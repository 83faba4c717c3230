#!/usr/bin/env node
// `npm start` builds first when dist/ is missing or older than any source file.
const fs = require('node:fs');
const path = require('node:path');
const { execSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist/apps/api/src/main.js');

function newestMtime(dir) {
  let newest = 0;
  for (const entryName of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entryName.name);
    if (entryName.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entryName.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

const built = fs.existsSync(entry) ? fs.statSync(entry).mtimeMs : 0;
const sources = Math.max(newestMtime(path.join(root, 'apps')), newestMtime(path.join(root, 'libs')));
if (built < sources) {
  process.stderr.write('Building the gateway (dist/ is missing or stale)...\n');
  execSync('npx nest build api', { cwd: root, stdio: 'inherit' });
}
