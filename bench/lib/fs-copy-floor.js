'use strict';
// The system calls the filesystem connector makes to copy one small document into another
// filesystem connector (a job's direct copy, copyFrom: openContent's checks on the source, then
// createFile's on the target without its lstat of the name, staged copy, hard link, first metadata
// record), made inline in one thread with nothing else: no HTTP, no
// job bookkeeping. It is what the connector's design costs by itself, the floor a job can
// approach; job-vs-cp prints it beside cp -r and rclone. Keep it in step with the connector
// (libs/connector-filesystem, README "What one copied document costs").
//   node bench/lib/fs-copy-floor.js <source tree> <target root>   -> prints {"ms":..,"files":..}
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const BetterSqlite3 = require('better-sqlite3');

const C = fs.constants;
// The connector's copy thread takes the requests of one event-loop turn (64 at most) as one message,
// checks each folder once per message, and hands the placed documents sixteen at a time
// (direct-copy.worker.ts FORWARD_EVERY) to its records thread, which commits each group's records
// together and answers it: here a group of 16 documents shares its record look-up, folder checks and
// its commit. The floor makes all its calls inline in one thread; a job makes the same calls on two
// (the copy thread: look-ups and files; the records thread: records, libs/connector-filesystem
// direct-copy.ts, direct-copy-records.ts) while the event loop keeps its bookkeeping, so a job can
// be faster than the floor.
const RECORDS_PER_COMMIT = 16;
const READ_COPY_MAX_BYTES = 64 * 1024;
const buffer = Buffer.allocUnsafe(READ_COPY_MAX_BYTES + 1);
const [src, out] = process.argv.slice(2);
const tmp = path.join(out, '.gateway', 'tmp');
fs.mkdirSync(tmp, { recursive: true });
fs.mkdirSync(path.join(out, '.gateway', 'docs'), { recursive: true });
const db = new BetterSqlite3(path.join(out, '.gateway', 'metadata.db'));
db.pragma('busy_timeout = 5000');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS documents (folder TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (folder, name)) WITHOUT ROWID');
// The copy thread looks up a message's names with one query per folder (direct-copy-records.ts lookUp).
const namesWithRecords = db.prepare('SELECT name FROM documents WHERE folder = ? AND name IN (SELECT value FROM json_each(?))');
const put = db.prepare('INSERT INTO documents (folder, name, record) VALUES (?, ?, ?) ON CONFLICT (folder, name) DO UPDATE SET record = excluded.record');
const commit = db.transaction((rows) => {
  for (const row of rows) put.run(...row);
});
const files = [];
for (const dir of fs.readdirSync(src)) for (const name of fs.readdirSync(path.join(src, dir))) files.push([dir, name]);

const t0 = process.hrtime.bigint();
let n = 0;
const made = new Set();
let pending = [];
let checked = new Set();
const check = (folder) => {
  if (!checked.has(folder)) {
    fs.lstatSync(folder);
    checked.add(folder);
  }
};
// The records at the group's target names, looked up first, one query per folder (a name with a record is refused or streamed).
const lookUp = (group) => {
  const byFolder = new Map();
  for (const [dir, name] of group) {
    const folderRel = `tree/${dir}`;
    if (!byFolder.has(folderRel)) byFolder.set(folderRel, []);
    byFolder.get(folderRel).push(name);
  }
  for (const [folderRel, names] of byFolder) {
    const taken = namesWithRecords.all(folderRel, JSON.stringify(names));
    if (taken.length > 0) throw new Error(`${folderRel}/${taken[0].name} has a record`);
  }
};
for (const [dir, name] of files) {
  if (n % RECORDS_PER_COMMIT === 0) lookUp(files.slice(n, n + RECORDS_PER_COMMIT));
  n++;
  const folderRel = `tree/${dir}`;
  // openContent: lstat, the folders between the root and the file are no links (source root: the
  // parent of <source tree>, as in job-vs-cp; once per group), open without following links, fstat
  const source = path.join(src, dir, name);
  fs.lstatSync(source);
  check(src);
  check(path.join(src, dir));
  const fd = fs.openSync(source, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  const opened = fs.fstatSync(fd);
  // the job's target folder, created once per folder
  const folder = path.join(out, folderRel);
  if (!made.has(folder)) {
    fs.mkdirSync(folder, { recursive: true });
    made.add(folder);
  }
  // copyFrom (direct-copy.ts): locate the folder (lstat, and its parent is no link; once per group),
  // stage a copy read from the checked descriptor, link into place (EEXIST if taken), stat
  check(folder);
  check(path.join(out, 'tree'));
  const target = path.join(folder, name);
  const staged = path.join(tmp, `u${n}`);
  const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
  const sfd = fs.openSync(staged, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, opened.mode & 0o777);
  fs.writeSync(sfd, buffer, 0, length);
  fs.closeSync(sfd);
  fs.linkSync(staged, target);
  const stat = fs.lstatSync(target, { bigint: true });
  fs.unlinkSync(staged);
  fs.closeSync(fd);
  // the first metadata record, committed with the others of its group
  pending.push([
    folderRel,
    name,
    JSON.stringify({ format: 1, path: `${folderRel}/${name}`, created: new Date().toISOString(), createdBy: 'admin', properties: {}, lastVersion: 1, versions: [{ n: 1, size: Number(stat.size), modified: new Date().toISOString(), modifiedBy: 'admin' }], current: { ino: String(stat.ino), size: Number(stat.size), mtimeNs: String(stat.mtimeNs) } }),
  ]);
  if (pending.length === RECORDS_PER_COMMIT) {
    commit(pending);
    pending = [];
    checked = new Set();
  }
}
if (pending.length > 0) commit(pending);
db.close();
execFileSync('sync');
console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6, files: files.length }));
