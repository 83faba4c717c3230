'use strict';
// The system calls the filesystem connector makes to copy one small document into another
// filesystem connector (openContent on the source, createFile on the target: checks, staged copy,
// hard link, first metadata record), made inline in one thread with nothing else: no HTTP, no
// database, no job bookkeeping. It is what the connector's design costs by itself, the floor a
// job can approach; job-vs-cp prints it beside cp -r.
//   node bench/lib/fs-copy-floor.js <source tree> <target root>   -> prints {"ms":..,"files":..}
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const C = fs.constants;
const [src, out] = process.argv.slice(2);
const tmp = path.join(out, '.gateway', 'tmp');
const docs = path.join(out, '.gateway', 'docs');
fs.mkdirSync(tmp, { recursive: true });
fs.mkdirSync(docs, { recursive: true });
const files = [];
for (const dir of fs.readdirSync(src)) for (const name of fs.readdirSync(path.join(src, dir))) files.push([dir, name]);

function absent(file) {
  if (fs.lstatSync(file, { throwIfNoEntry: false })) throw new Error(`${file} exists`);
}

const t0 = process.hrtime.bigint();
let n = 0;
const made = new Set();
for (const [dir, name] of files) {
  n++;
  // openContent: locate (lstat + realpath), open without following links, fstat
  const source = path.join(src, dir, name);
  fs.lstatSync(source, { bigint: true });
  fs.realpathSync.native(source);
  const fd = fs.openSync(source, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  fs.fstatSync(fd);
  // the job's target folder, created once per folder
  const folder = path.join(out, 'tree', dir);
  if (!made.has(folder)) {
    fs.mkdirSync(folder, { recursive: true });
    made.add(folder);
  }
  // createFile: locate the folder, refuse an existing name, stage a kernel copy in tmp/
  fs.lstatSync(folder, { bigint: true });
  fs.realpathSync.native(folder);
  const target = path.join(folder, name);
  absent(target);
  const staged = path.join(tmp, `u${n}`);
  fs.copyFileSync(source, staged, C.COPYFILE_EXCL | C.COPYFILE_FICLONE);
  // under the document lock: still absent, no stale record, link into place, stat
  absent(target);
  const recordDir = path.join(docs, dir, String(n));
  absent(recordDir);
  fs.linkSync(staged, target);
  const stat = fs.lstatSync(target, { bigint: true });
  // the first metadata record: temp file, its folder, rename into place
  const json = path.join(tmp, `j${n}`);
  const jfd = fs.openSync(json, 'wx');
  fs.writeSync(jfd, JSON.stringify({ format: 1, path: `${dir}/${name}`, created: new Date().toISOString(), createdBy: 'admin', lastVersion: 1, versions: [{ n: 1, size: Number(stat.size) }], current: { ino: String(stat.ino), mtimeNs: String(stat.mtimeNs) } }));
  fs.closeSync(jfd);
  fs.mkdirSync(recordDir, { recursive: true });
  fs.renameSync(json, path.join(recordDir, 'meta.json'));
  fs.unlinkSync(staged);
  fs.closeSync(fd);
}
execFileSync('sync');
console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6, files: files.length }));
