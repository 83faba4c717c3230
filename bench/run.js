'use strict';
// `npm run bench` runs every benchmark; `npm run bench -- auth-overhead` runs one.
const path = require('node:path');
const fs = require('node:fs');

const all = fs
  .readdirSync(__dirname)
  .filter((f) => f.endsWith('.js') && f !== 'run.js')
  .map((f) => path.basename(f, '.js'))
  .sort();

async function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !all.includes(w));
  if (unknown.length) {
    console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${all.join(', ')}`);
    process.exit(2);
  }
  let ok = true;
  for (const name of wanted.length ? wanted : all) {
    console.log(`[bench] running ${name}`);
    ok = (await require(`./${name}`)()) && ok;
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
