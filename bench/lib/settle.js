'use strict';
// ext4 skips recently freed inodes when it allocates new ones (ialloc's recently_deleted): after a
// benchmark deletes tens of thousands of files, creating files on the same filesystem costs several
// times more for some minutes (~60 s after a delete, 300 s while their inode table block is dirty;
// decision 0013). Measured then, a copy benchmark times the previous run's deletions, and the side that
// creates more inodes pays most (job-verify's small shape once read 4.5 × "in favour" of the job with
// rclone taking 7 s for what takes it 0.8 s). The benchmarks that create and delete many files record
// when they last deleted (one marker for all of them: they share the filesystem) and wait before measuring.
// BENCH_SETTLE_S=0 skips the wait (a tmpfs, or a run that accepts the noise).
const fs = require('node:fs');
const path = require('node:path');
const { workDir } = require('./harness');

const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 360) * 1000;
const deletedAtFile = () => path.join(workDir('settle'), 'outputs-deleted-at');

/** Waits until BENCH_SETTLE_S have passed since a benchmark last removed outputs (removeOutputs). */
async function settleAfterLastDelete(bench) {
  let last;
  try {
    last = Number(fs.readFileSync(deletedAtFile(), 'utf8'));
  } catch {
    return;
  }
  const wait = last + SETTLE_MS - Date.now();
  if (wait <= 0) return;
  console.log(`[bench] ${bench}: outputs were deleted ${Math.round((Date.now() - last) / 1000)} s ago; waiting ${Math.round(wait / 1000)} s for ext4 to reuse those inodes (BENCH_SETTLE_S)`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}

/** Files and folders in `dir`, counted up to `limit` (a few large files freed leave no inodes worth waiting for). */
function countEntries(dir, limit) {
  let count = 0;
  const pending = [dir];
  while (pending.length > 0 && count < limit) {
    const folder = pending.pop();
    let entries;
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      count++;
      if (entry.isDirectory()) pending.push(path.join(folder, entry.name));
    }
  }
  return count;
}

/** Removes output folders, and records when if they held many files (MANY_FILES or more). */
const MANY_FILES = 1000;
function removeOutputs(...dirs) {
  let entries = 0;
  for (const dir of dirs) {
    if (entries < MANY_FILES) entries += countEntries(dir, MANY_FILES);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (entries >= MANY_FILES) fs.writeFileSync(deletedAtFile(), String(Date.now()));
}

module.exports = { settleAfterLastDelete, removeOutputs };
