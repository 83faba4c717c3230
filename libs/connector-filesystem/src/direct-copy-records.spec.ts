import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ThreadRecords, answerBatch, copyBatch, recordBatch, type CopiedItem } from './direct-copy-records';
import type { DirectCopyRequest, DirectCopyAnswer } from './direct-copy';
import { RecordDatabase } from './record-database';

/** The copy thread's records, on a real target database: what a job's direct copy leaves in the records, and when. */
describe('ThreadRecords and answerBatch', () => {
  let dir: string;
  let src: string;
  let dst: string;
  let database: string;
  let records: ThreadRecords;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'copy-records-')));
    src = path.join(dir, 'src');
    dst = path.join(dir, 'dst');
    mkdirSync(src, { recursive: true });
    mkdirSync(path.join(dst, 'out'), { recursive: true });
    mkdirSync(path.join(dst, '.gateway', 'tmp'), { recursive: true });
    database = path.join(dst, '.gateway', 'metadata.db');
    new RecordDatabase(database).close();
    records = new ThreadRecords();
  });
  afterEach(() => {
    records.close('k');
    rmSync(dir, { recursive: true, force: true });
  });

  let staged = 0;
  /** src/<name> -> out/<name>, as the connector's copyFrom asks it. */
  function request(name: string, change: Partial<NonNullable<DirectCopyRequest['record']> & { database: string; key: string }> = {}): DirectCopyRequest {
    const { database: file = database, key = 'k', ...record } = change;
    return {
      source: path.join(src, name),
      sourceFolders: [],
      into: { path: path.join(dst, 'out'), parents: [], rel: 'out', records: { database: file, key } },
      name,
      staged: path.join(dst, '.gateway', 'tmp', `s${staged++}`),
      cloneMode: 0,
      maxBytes: 1024,
      record: { createdBy: 'alice', mimeType: 'text/plain', ...record },
    };
  }
  /** The records as the event loop's connection reads them. */
  function stored(): Map<string, Record<string, unknown>> {
    const db = new BetterSqlite3(database, { readonly: true });
    try {
      const rows = db.prepare<[], { folder: string; name: string; record: string }>('SELECT folder, name, record FROM documents').all();
      return new Map(rows.map((r) => [`${r.folder}/${r.name}`, JSON.parse(r.record) as Record<string, unknown>]));
    } finally {
      db.close();
    }
  }
  function run(batch: DirectCopyRequest[], answerEvery = 8): { answers: Map<number, DirectCopyAnswer>; groups: Array<{ ids: number[]; recorded: number }> } {
    const answers = new Map<number, DirectCopyAnswer>();
    const groups: Array<{ ids: number[]; recorded: number }> = [];
    answerBatch(
      batch.map((r, i) => [i, r]),
      records,
      (group) => {
        groups.push({ ids: group.map(([id]) => id), recorded: stored().size });
        for (const [id, result] of group) answers.set(id, result);
      },
      answerEvery,
    );
    return { answers, groups };
  }

  it('copies each document and writes its first record: author, declared type, the placed file identity', () => {
    writeFileSync(path.join(src, 'a.txt'), 'alpha');
    const { answers } = run([request('a.txt')]);
    expect(answers.get(0)).toMatchObject({ step: 'copied' });
    expect(readFileSync(path.join(dst, 'out', 'a.txt'), 'utf8')).toBe('alpha');
    const placed = lstatSync(path.join(dst, 'out', 'a.txt'), { bigint: true });
    const record = stored().get('out/a.txt')!;
    expect(record).toMatchObject({
      format: 1,
      path: 'out/a.txt',
      createdBy: 'alice',
      lastVersion: 1,
      properties: {},
      current: { ino: placed.ino.toString(), size: 5, mtimeNs: placed.mtimeNs.toString() },
    });
    expect(record.versions).toEqual([{ n: 1, size: 5, modified: expect.any(String), modifiedBy: 'alice', mimeType: 'text/plain' }]);
    expect(Date.now() - Date.parse(record.created as string)).toBeLessThan(60_000);
  });

  it('records no media type when none was declared', () => {
    writeFileSync(path.join(src, 'b.bin'), 'b');
    run([request('b.bin', { mimeType: undefined })]);
    expect((stored().get('out/b.bin')!.versions as object[])[0]).not.toHaveProperty('mimeType');
  });

  it('answers in groups, each only once its records are committed, and no empty group', () => {
    for (let i = 0; i < 7; i++) writeFileSync(path.join(src, `f${i}`), `${i}`);
    const { groups, answers } = run([0, 1, 2, 3, 4].map((i) => request(`f${i}`)), 2);
    expect(groups).toEqual([
      { ids: [0, 1], recorded: 2 },
      { ids: [2, 3], recorded: 4 },
      { ids: [4], recorded: 5 },
    ]);
    expect([...answers.values()].every((a) => a.step === 'copied')).toBe(true);
    expect(run([5, 6].map((i) => request(`f${i}`)), 2).groups).toEqual([{ ids: [0, 1], recorded: 7 }]);
  });

  it('split over two threads, as the workers run it: the copy side writes no record, the records side writes each group\'s and answers it', () => {
    for (let i = 0; i < 3; i++) writeFileSync(path.join(src, `g${i}`), `${i}`);
    const writer = new ThreadRecords();
    try {
      const forwarded: CopiedItem[][] = [];
      const batch: Array<[number, DirectCopyRequest]> = [
        [0, request('g0')],
        [1, request('g1')],
        [2, { ...request('g2'), record: undefined }],
        [3, request('missing')],
      ];
      copyBatch(batch, records, (items) => forwarded.push(items), 2);
      // Placed, not yet recorded: the copy side leaves the records to the other thread.
      expect(readdirSync(path.join(dst, 'out')).sort()).toEqual(['g0', 'g1', 'g2']);
      expect(stored().size).toBe(0);
      expect(forwarded.map((group) => group.map(([id]) => id))).toEqual([
        [0, 1],
        [2, 3],
      ]);
      // A record goes on only with a copy that asked for one; a failed copy goes on as it ended.
      expect(forwarded[0].map(([, , record]) => record?.name)).toEqual(['g0', 'g1']);
      expect(forwarded[1][0]).toMatchObject([2, { step: 'copied' }]);
      expect(forwarded[1][1]).toEqual([3, { step: 'source', code: 'ENOENT' }]);
      const answered: Array<{ group: Array<[number, DirectCopyAnswer]>; recorded: number }> = [];
      for (const items of forwarded) recordBatch(items, writer, (group) => answered.push({ group, recorded: stored().size }));
      expect(answered).toMatchObject([
        { group: [[0, { step: 'copied' }], [1, { step: 'copied' }]], recorded: 2 },
        { group: [[2, { step: 'copied' }], [3, { step: 'source', code: 'ENOENT' }]], recorded: 2 },
      ]);
      const placed = lstatSync(path.join(dst, 'out', 'g1'), { bigint: true });
      expect(stored().get('out/g1')).toMatchObject({ createdBy: 'alice', current: { ino: placed.ino.toString(), size: 1 } });
      expect(stored().has('out/g2')).toBe(false);
    } finally {
      writer.close('k');
    }
  });

  it('answers a message\'s names from its look-up: a record written meanwhile by another connection is not looked for again', () => {
    writeFileSync(path.join(src, 'late.txt'), 'late');
    const late = request('late.txt');
    records.lookUp([late]);
    const other = new BetterSqlite3(database);
    other.prepare('INSERT INTO documents (folder, name, record) VALUES (?, ?, ?)').run('out', 'late.txt', '{}');
    other.close();
    writeFileSync(path.join(dst, 'out', 'late.txt'), 'by hand');
    expect(records.check(late)).toBeUndefined();
    records.lookUp([]);
    expect(records.check(late)).toEqual({ step: 'exists' });
  });

  it('reports the errno of the look at a name whose record exists but whose path cannot be looked at', () => {
    writeFileSync(path.join(src, 'z.txt'), 'z');
    run([request('z.txt')]);
    // Its record's key is out/z.txt; its path, through the file out/z.txt, cannot be looked at.
    const blocked = request('z.txt');
    expect(records.check({ ...blocked, into: { ...blocked.into, path: path.join(dst, 'out', 'z.txt') } })).toEqual({ step: 'target', code: 'ENOTDIR' });
  });

  it('refuses a name with a record and a file (409), copying nothing and leaving both as they were', () => {
    writeFileSync(path.join(src, 'c.txt'), 'new');
    run([request('c.txt')]);
    const before = stored().get('out/c.txt');
    writeFileSync(path.join(src, 'c.txt'), 'newer');
    const { answers } = run([request('c.txt', { createdBy: 'bob' })]);
    expect(answers.get(0)).toEqual({ step: 'exists' });
    expect(readFileSync(path.join(dst, 'out', 'c.txt'), 'utf8')).toBe('new');
    expect(stored().get('out/c.txt')).toEqual(before);
    expect(readdirSync(path.join(dst, '.gateway', 'tmp'))).toEqual([]);
  });

  it('leaves a name whose record has no file (deleted by hand) to the streaming path, writing nothing', () => {
    writeFileSync(path.join(src, 'd.txt'), 'd');
    run([request('d.txt')]);
    rmSync(path.join(dst, 'out', 'd.txt'));
    const before = stored().get('out/d.txt');
    const { answers } = run([request('d.txt', { createdBy: 'bob' })]);
    expect(answers.get(0)).toEqual({ step: 'fallback' });
    expect(existsSync(path.join(dst, 'out', 'd.txt'))).toBe(false);
    expect(stored().get('out/d.txt')).toEqual(before);
  });

  it('checks a name by itself when no look-up of its message answered for it, and looks up names of several folders in one message', () => {
    writeFileSync(path.join(src, 'x.txt'), 'x');
    run([request('x.txt')]);
    const alone = new ThreadRecords();
    try {
      expect(alone.check(request('x.txt'))).toEqual({ step: 'exists' });
      expect(alone.check(request('free.txt'))).toBeUndefined();
    } finally {
      alone.close('k');
    }
    mkdirSync(path.join(dst, 'other'));
    writeFileSync(path.join(src, 'y.txt'), 'y');
    const x = request('x.txt');
    const elsewhere = { ...x, into: { ...x.into, path: path.join(dst, 'other'), rel: 'other' } };
    const { answers } = run([request('x.txt'), elsewhere, request('y.txt')]);
    expect([0, 1, 2].map((i) => answers.get(i)!.step)).toEqual(['exists', 'copied', 'copied']);
    expect([...stored().keys()].sort()).toEqual(['other/x.txt', 'out/x.txt', 'out/y.txt']);
  });

  it('leaves the copy to the streaming path when the database cannot be opened, creating none', () => {
    writeFileSync(path.join(src, 'e.txt'), 'e');
    const missing = path.join(dst, '.gateway', 'missing.db');
    const { answers } = run([request('e.txt', { database: missing, key: 'other' })]);
    expect(answers.get(0)).toEqual({ step: 'fallback' });
    expect(existsSync(path.join(dst, 'out', 'e.txt'))).toBe(false);
    expect(existsSync(missing)).toBe(false);
  });

  it('answers `record` with SQLite error for every document of a group whose commit failed; the other groups keep theirs', () => {
    const db = new BetterSqlite3(database);
    db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON documents WHEN NEW.name = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`);
    db.close();
    for (const name of ['ok1', 'bad', 'ok2', 'ok3']) writeFileSync(path.join(src, name), name);
    const { answers } = run(['ok1', 'bad', 'ok2', 'ok3'].map((n) => request(n)), 2);
    expect(answers.get(0)).toEqual({ step: 'record', message: 'refused by a trigger', code: 'SQLITE_CONSTRAINT_TRIGGER' });
    expect(answers.get(1)).toEqual({ step: 'record', message: 'refused by a trigger', code: 'SQLITE_CONSTRAINT_TRIGGER' });
    expect(answers.get(2)).toMatchObject({ step: 'copied' });
    expect(answers.get(3)).toMatchObject({ step: 'copied' });
    expect([...stored().keys()].sort()).toEqual(['out/ok2', 'out/ok3']);
  });

  it('writes no record for a request without one (copyDocumentSync alone), and none for a copy that failed', () => {
    writeFileSync(path.join(src, 'g.txt'), 'g');
    const { record: _record, ...bare } = request('g.txt');
    const { answers } = run([bare, request('missing.txt')]);
    expect(answers.get(0)).toMatchObject({ step: 'copied' });
    expect(answers.get(1)).toEqual({ step: 'source', code: 'ENOENT' });
    expect(stored().size).toBe(0);
  });

  it('close(key) closes only that key\'s connections (another instance goes on with the database it opened)', () => {
    writeFileSync(path.join(src, 'k1'), 'k');
    writeFileSync(path.join(src, 'k2'), 'k');
    run([request('k1', { key: 'other' })]);
    const kept = path.join(dir, 'kept.db');
    // The instance 'other' holds the database it opened; one put in its place after is not its database.
    renameSync(database, kept);
    for (const suffix of ['-wal', '-shm']) if (existsSync(database + suffix)) renameSync(database + suffix, kept + suffix);
    new RecordDatabase(database).close();
    records.close('k');
    run([request('k2', { key: 'other' })]);
    expect(stored().size).toBe(0);
    records.close('other');
  });

  it('after close(key), writes into the database at the path again (a connector started anew on the same root)', () => {
    writeFileSync(path.join(src, 'h1'), 'h');
    writeFileSync(path.join(src, 'h2'), 'h');
    run([request('h1')]);
    for (const suffix of ['', '-wal', '-shm']) rmSync(database + suffix, { force: true });
    new RecordDatabase(database).close();
    records.close('k');
    run([request('h2')]);
    expect([...stored().keys()]).toEqual(['out/h2']);
  });
});
