import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import BetterSqlite3 from 'better-sqlite3';
import { TurnBatch } from '@gateway/concurrency';
import { errnoCode } from './fs-errors';
import { GET_RECORD, PUT_RECORD, RECORDS_OF_NAMES, openRecordFile } from './record-sql';

/**
 * The documents' metadata records, one SQLite database per repository
 * (`<root>/.gateway/metadata.db`), keyed by folder and name. One file instead
 * of a folder and a JSON file per document: creating a document no longer
 * creates two inodes for its record (the dearest call on ext4), and a listing
 * reads a page's records with one query.
 *
 * Writes are queued and committed together in one transaction per event-loop
 * turn (group commit): a job copying many small documents pays one commit for
 * all the records that became ready in the same turn. A write's promise
 * settles after its commit, so the caller (holding the document's lock) never
 * lets another writer read a record older than its own.
 *
 * Durability: WAL with synchronous=NORMAL, so a commit writes to the WAL
 * without waiting for the disk; a commit is atomic and the database cannot be
 * corrupted by a crash, but a power cut can take back the last commits. The
 * first record of a document replaces nothing, so that is accepted (the
 * document then reads as a file without history, as one dropped in by hand).
 * Every other write (a new version, check-out, properties) is `durable`: its
 * promise settles only once the WAL has been fsynced, in the thread pool, as
 * the JSON records were before. SQLite's own synchronous=FULL would do that
 * fsync inline and stall every request for the length of a disk flush.
 */

const SCHEMA_VERSION = 1;

type Operation =
  | { kind: 'put'; folder: string; name: string; record: string }
  | { kind: 'delete'; folder: string; name: string }
  | { kind: 'deleteTree'; folder: string };

interface Queued {
  op: Operation;
  durable: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class RecordDatabase {
  private readonly db: BetterSqlite3.Database;
  private readonly walFile: string;
  /** After the I/O callbacks of this turn: every document that got this far in the turn shares the commit. */
  private readonly queue = new TurnBatch<Queued>((batch) => this.commitBatch(batch));
  private readonly getStatement: BetterSqlite3.Statement<[string, string], { record: string }>;
  private readonly someStatement: BetterSqlite3.Statement<[string, string], { name: string; record: string }>;
  private readonly folderStatement: BetterSqlite3.Statement<[string], { name: string; record: string }>;
  private readonly putStatement: BetterSqlite3.Statement<[string, string, string]>;
  private readonly deleteStatement: BetterSqlite3.Statement<[string, string]>;
  private readonly deleteTreeStatement: BetterSqlite3.Statement<[string, string, string]>;
  private readonly commit: (batch: readonly Queued[]) => void;

  /** Opens (creating when missing) the database; throws SQLite's error when the file is not one. */
  constructor(readonly file: string) {
    this.walFile = `${file}-wal`;
    this.db = openRecordFile(file);
    try {
      if ((this.db.pragma('user_version', { simple: true }) as number) > SCHEMA_VERSION) {
        throw new Error(`its schema (${String(this.db.pragma('user_version', { simple: true }))}) is newer than this gateway understands (${SCHEMA_VERSION})`);
      }
      // WITHOUT ROWID: the key is the primary index, so a lookup reads one b-tree, not two.
      this.db.exec(`CREATE TABLE IF NOT EXISTS documents (
        folder TEXT NOT NULL,
        name TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (folder, name)
      ) WITHOUT ROWID`);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.getStatement = this.db.prepare(GET_RECORD);
    this.someStatement = this.db.prepare(RECORDS_OF_NAMES);
    this.folderStatement = this.db.prepare('SELECT name, record FROM documents WHERE folder = ?');
    this.putStatement = this.db.prepare(PUT_RECORD);
    this.deleteStatement = this.db.prepare('DELETE FROM documents WHERE folder = ? AND name = ?');
    // The folder itself and everything below it: 'a/' <= f < 'a0' ('0' follows '/' in UTF-8), in SQLite's byte order.
    this.deleteTreeStatement = this.db.prepare('DELETE FROM documents WHERE folder = ? OR (folder >= ? AND folder < ?)');
    this.commit = this.db.transaction((batch: readonly Queued[]) => {
      for (const { op } of batch) {
        if (op.kind === 'put') this.putStatement.run(op.folder, op.name, op.record);
        else if (op.kind === 'delete') this.deleteStatement.run(op.folder, op.name);
        else this.deleteTreeStatement.run(op.folder, `${op.folder}/`, `${op.folder}0`);
      }
    });
  }

  get(folder: string, name: string): string | undefined {
    return this.getStatement.get(folder, name)?.record;
  }

  /** The records of the given names in one folder (those that have one). */
  some(folder: string, names: readonly string[]): Map<string, string> {
    if (names.length === 0) return new Map();
    return new Map(this.someStatement.all(folder, JSON.stringify(names)).map((row) => [row.name, row.record]));
  }

  inFolder(folder: string): Map<string, string> {
    return new Map(this.folderStatement.all(folder).map((row) => [row.name, row.record]));
  }

  put(folder: string, name: string, record: string, durable: boolean): Promise<void> {
    return this.enqueue({ kind: 'put', folder, name, record }, durable);
  }

  delete(folder: string, name: string): Promise<void> {
    return this.enqueue({ kind: 'delete', folder, name }, false);
  }

  /** Forgets the records of a folder and of every folder below it. */
  deleteTree(folder: string): Promise<void> {
    return this.enqueue({ kind: 'deleteTree', folder }, false);
  }

  /** Inserts or replaces many records in one durable transaction (the migration from per-file records). */
  putAll(rows: ReadonlyArray<{ folder: string; name: string; record: string }>): void {
    this.db.pragma('synchronous = FULL');
    try {
      this.commit(rows.map((row) => ({ op: { kind: 'put', ...row }, durable: true, resolve: noop, reject: noop })));
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
  }

  /** Commits what is queued, then closes; later calls fail. */
  close(): void {
    if (!this.db.open) return;
    this.queue.flush();
    this.db.close();
  }

  private enqueue(op: Operation, durable: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.add({ op, durable, resolve, reject });
    });
  }

  private commitBatch(batch: Queued[]): void {
    try {
      this.commit(batch);
    } catch (e) {
      for (const q of batch) q.reject(e);
      return;
    }
    const durable = batch.filter((q) => q.durable);
    for (const q of batch) if (!q.durable) q.resolve();
    if (durable.length === 0) return;
    this.syncWal().then(
      () => durable.forEach((q) => q.resolve()),
      (e: unknown) => durable.forEach((q) => q.reject(e)),
    );
  }

  /**
   * fsync applies to the file, whichever descriptor asks, so a descriptor of our own on the WAL
   * makes SQLite's writes durable. SQLite takes no locks on the WAL file (they are on the -shm
   * and database files), so closing this descriptor releases none of its locks. No WAL file:
   * the last connection checkpointed it into the database, which a checkpoint fsyncs.
   */
  private async syncWal(): Promise<void> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.walFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return;
      throw e;
    }
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

function noop(): void {}
