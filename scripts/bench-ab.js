'use strict';
// A/B of the benchmarks against an earlier build, on this machine, in one run:
//   node scripts/bench-ab.js <dir of the earlier tree> [bench ...]
// The earlier tree is a worktree of the commit to compare with, built (`npx nest build api`), with its
// node_modules (`git worktree add --detach ../ab-old <commit> && cp -al node_modules ../ab-old/`).
// Each benchmark present in both trees (default: all of them but soak, which runs 30 minutes and judges
// leaks, not speed) runs in the earlier tree, then in this one, then again in this one and in the earlier
// one (A B B A: drift of the machine's load weighs on both sides alike), each by its own tree's
// `bench/run.js`, so each side runs with its own harness and start command (the earlier one as its
// benchmarks ran then). Every `[bench] <name>:` line is printed, tagged `old`/`new`, and written to
// `bench/.work/ab-<date>.log`. `BENCH_AB_PASSES=1` runs A B only. Other BENCH_* variables pass to both.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const NEW = path.resolve(__dirname, '..');
const OLD = path.resolve(process.argv[2] || '');
const PASSES = Number(process.env.BENCH_AB_PASSES || 2);

function benchesOf(root) {
  return fs
    .readdirSync(path.join(root, 'bench'))
    .filter((f) => f.endsWith('.js') && f !== 'run.js')
    .map((f) => path.basename(f, '.js'));
}

function runOne(root, tag, name, log) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['bench/run.js', name], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let rest = '';
    const lines = [];
    const onData = (chunk) => {
      rest += chunk;
      const parts = rest.split('\n');
      rest = parts.pop();
      for (const line of parts) {
        if (!line.startsWith(`[bench] ${name}:`) && !line.startsWith(`[bench] ${name} `)) continue;
        const tagged = `${tag} ${line}`;
        lines.push(tagged);
        console.log(tagged);
        fs.appendFileSync(log, tagged + '\n');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => fs.appendFileSync(log + '.stderr', chunk));
    child.on('close', (code) => {
      const end = `${tag} [ab] ${name}: exit=${code} seconds=${Math.round((Date.now() - started) / 1000)}`;
      console.log(end);
      fs.appendFileSync(log, end + '\n');
      resolve(lines);
    });
  });
}

async function main() {
  if (!fs.existsSync(path.join(OLD, 'bench/run.js')) || !fs.existsSync(path.join(OLD, 'dist/apps/api/src/main.js'))) {
    console.error('usage: node scripts/bench-ab.js <built worktree of the earlier commit> [bench ...]');
    process.exit(2);
  }
  const inBoth = benchesOf(NEW).filter((b) => benchesOf(OLD).includes(b) && b !== 'soak');
  const wanted = process.argv.slice(3);
  const unknown = wanted.filter((w) => !inBoth.includes(w));
  if (unknown.length) {
    console.error(`not in both trees: ${unknown.join(', ')}; in both: ${inBoth.join(', ')}`);
    process.exit(2);
  }
  fs.mkdirSync(path.join(NEW, 'bench/.work'), { recursive: true });
  const log = path.join(NEW, 'bench/.work', `ab-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  console.log(`[ab] old=${OLD} new=${NEW} log=${log}`);
  const order = PASSES >= 2 ? ['old', 'new', 'new', 'old'] : ['old', 'new'];
  for (const name of wanted.length ? wanted : inBoth) {
    for (const tag of order) await runOne(tag === 'old' ? OLD : NEW, tag, name, log);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
