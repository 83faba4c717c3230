import { lstatSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { FolderChecks, copiedAnswer, copyDocumentSync, targetPathOf, type CopyTargetFolder, type DirectCopied, type DirectCopyAnswer, type DirectCopyRequest, type DirectCopyResult, type FirstRecordRequest } from './direct-copy';
import { errnoOf } from './fs-calls';
import { joinRel } from './paths';
import { firstRecord } from './record-format';
import { GET_RECORD, NAMES_WITH_RECORDS, PUT_RECORD, openRecordFile } from './record-sql';

/**
 * The copy thread's side of the target's records. On the event loop, a copied document's record
 * cost more than its file: the look-up for a record at the name, building the record, and its
 * share of a commit, some 25 µs of the ~100 µs a job spent per small document on the main thread
 * (decision 0012). Here the thread does them beside the file calls, with a connection of
 * its own to the target's database: WAL lets it write while the event loop reads, and a writer
 * waits for the other (busy_timeout). The checks are createFile's: a record at the name with its
 * file there refuses (409); a record without a file (a document deleted by hand) is left to the
 * streaming path, which clears it. First records are not fsynced (RecordDatabase: a power cut
 * that takes one back leaves a file without history).
 */
export class ThreadRecords {
  private readonly connections = new Map<string, Connection>();
  private pending: Array<{ id: number; connection: Connection; folder: string; name: string; record: string }> = [];
  /** The names looked up together for this message (lookUp), and those of them that have a record. */
  private looked = new Map<Connection, Map<string, Set<string>>>();

  /**
   * Looks up at once, one query per folder, whether the names of one message have records (check()
   * then reads the answer). Nothing else writes a record at those names until they are answered: the
   * connector holds each one's document lock while its copy is in flight. A look-up that fails is
   * left to check()'s own.
   */
  lookUp(requests: ReadonlyArray<Pick<DirectCopyRequest, 'into' | 'name'>>): void {
    this.looked = new Map();
    const byFolder = new Map<Connection, Map<string, string[]>>();
    for (const request of requests) {
      const connection = this.connection(request.into);
      if (!connection) continue;
      const folders = groupOf(byFolder, connection, () => new Map<string, string[]>());
      // Stryker disable next-line ArrayDeclaration: a name more in a look-up is one more name answered, never a wrong answer
      groupOf(folders, request.into.rel, () => []).push(request.name);
    }
    for (const [connection, folders] of byFolder) {
      const found = new Map<string, Set<string>>();
      for (const [folder, names] of folders) {
        try {
          found.set(folder, new Set(connection.namesWithRecords.all(folder, JSON.stringify(names)).map((row) => row.name)));
        } catch {
          // check() asks again, name by name
        }
      }
      this.looked.set(connection, found);
    }
  }

  /** The message is answered: its look-up no longer holds (its names' locks are released). */
  endMessage(): void {
    this.looked = new Map();
  }

  /** What stands at the target's name in the records, before anything is copied: undefined when it is free. */
  check(request: Pick<DirectCopyRequest, 'into' | 'name'>): DirectCopyResult | undefined {
    const connection = this.connection(request.into);
    if (!connection) return { step: 'fallback' };
    try {
      const known = this.looked.get(connection)?.get(request.into.rel);
      const taken = known ? known.has(request.name) : connection.get.get(request.into.rel, request.name) !== undefined;
      if (!taken) return undefined;
    } catch {
      // The records cannot be read here (busy past its timeout, damaged): the streaming path reports it.
      return { step: 'fallback' };
    }
    try {
      return lstatSync(targetPathOf(request), { throwIfNoEntry: false }) === undefined ? { step: 'fallback' } : { step: 'exists' };
    } catch (e) {
      return { step: 'target', code: errnoOf(e) };
    }
  }

  /** Queues the first record of a document just placed, committed by the next commit(). */
  add(id: number, placed: PlacedRecord, stat: Extract<DirectCopyResult, { step: 'copied' }>['stat']): void {
    const { into, name, record } = placed;
    const connection = this.connection(into)!;
    const json = JSON.stringify(firstRecord(joinRel(into.rel, name), stat, { createdBy: record.createdBy, mimeType: record.mimeType, properties: record.properties }));
    this.pending.push({ id, connection, folder: into.rel, name, record: json });
  }

  /** Commits what add() queued, one transaction per database; answers the ids whose commit failed, with SQLite's error. */
  commit(): Map<number, { message: string; code?: string }> {
    const failed = new Map<number, { message: string; code?: string }>();
    const byConnection = new Map<Connection, typeof this.pending>();
    for (const p of this.pending) groupOf(byConnection, p.connection, () => []).push(p);
    this.pending = [];
    for (const [connection, rows] of byConnection) {
      try {
        connection.putAll(rows);
      } catch (e) {
        // Stryker disable next-line OptionalChaining: what SQLite throws is always an Error
        const error = { message: (e as Error)?.message ?? String(e), code: (e as { code?: string })?.code };
        for (const row of rows) failed.set(row.id, error);
      }
    }
    return failed;
  }

  /** Closes the connection of a connector instance (its close()); a later request opens a new one. */
  close(key: string): void {
    this.connections.get(key)?.db.close();
    this.connections.delete(key);
  }

  /**
   * The instance's connection, opened on first use; undefined when the database cannot be opened (the
   * streaming path then reports why). Keyed by the instance alone: each one has a single database.
   */
  private connection(into: CopyTargetFolder): Connection | undefined {
    const { key, database } = into.records;
    let connection = this.connections.get(key);
    if (connection) return connection;
    let db: BetterSqlite3.Database;
    try {
      // The connector made the database when it started: never create one here.
      db = openRecordFile(database, { fileMustExist: true });
    } catch {
      return undefined;
    }
    const put = db.prepare<[string, string, string]>(PUT_RECORD);
    connection = {
      db,
      get: db.prepare<[string, string], { record: string }>(GET_RECORD),
      namesWithRecords: db.prepare<[string, string], { name: string }>(NAMES_WITH_RECORDS),
      putAll: db.transaction((rows: ReadonlyArray<{ folder: string; name: string; record: string }>) => {
        for (const row of rows) put.run(row.folder, row.name, row.record);
      }),
    };
    this.connections.set(key, connection);
    return connection;
  }
}

function groupOf<K, V>(groups: Map<K, V>, key: K, make: () => V): V {
  let group = groups.get(key);
  if (group === undefined) groups.set(key, (group = make()));
  return group;
}

interface Connection {
  db: BetterSqlite3.Database;
  get: BetterSqlite3.Statement<[string, string], { record: string }>;
  namesWithRecords: BetterSqlite3.Statement<[string, string], { name: string }>;
  putAll: (rows: ReadonlyArray<{ folder: string; name: string; record: string }>) => void;
}

/** Where a copied document was placed and what its first record says (its folder shared by the documents placed in it). */
export interface PlacedRecord {
  into: CopyTargetFolder;
  name: string;
  record: FirstRecordRequest;
}

/** A document copied by the copy thread, on its way to the records thread: the record to write when it was placed. */
export type CopiedItem = [id: number, result: DirectCopyAnswer] | [id: number, result: DirectCopied, placed: PlacedRecord];

/**
 * The copy thread's part of one message of requests: each copied (records checked first,
 * copyDocumentSync with the message's folder checks), handed on `every` at a time to the records
 * thread (`forward`), which writes the placed documents' records and answers (recordBatch).
 */
export function copyBatch(
  batch: ReadonlyArray<[number, DirectCopyRequest]>,
  records: ThreadRecords,
  forward: (items: CopiedItem[]) => void,
  every: number,
): void {
  let items: CopiedItem[] = [];
  const folders = new FolderChecks();
  // Stryker disable next-line ArrayDeclaration,ConditionalExpression: without the look-up each name is looked up alone (check()): the same answers, more queries
  records.lookUp(batch.flatMap(([, request]) => (request.record ? [request] : [])));
  try {
    for (const [id, request] of batch) {
      const { record } = request;
      const result = (record && records.check(request)) || copyDocumentSync(request, folders);
      items.push(result.step === 'copied' && record ? [id, result, { into: request.into, name: request.name, record }] : [id, result.step === 'copied' ? copiedAnswer(result) : result]);
      if (items.length === every) {
        forward(items);
        items = [];
      }
    }
    if (items.length > 0) forward(items);
  } finally {
    records.endMessage();
  }
}

/**
 * The records thread's part: the first records of one group of copied documents committed
 * together, then the group answered (a document whose record could not be committed: `record`,
 * with SQLite's error).
 */
export function recordBatch(items: readonly CopiedItem[], records: ThreadRecords, post: (answers: Array<[number, DirectCopyAnswer]>) => void): void {
  for (const item of items) if (item.length === 3) records.add(item[0], item[2], item[1].stat);
  const failed = records.commit();
  post(items.map(([id, result]): [number, DirectCopyAnswer] => [id, failed.has(id) ? { step: 'record', ...failed.get(id)! } : 'stat' in result ? copiedAnswer(result) : result]));
}

/**
 * Both parts in one thread (copyBatch handing each group straight to recordBatch): what the
 * two threads do together, one group after the other.
 */
export function answerBatch(
  batch: ReadonlyArray<[number, DirectCopyRequest]>,
  records: ThreadRecords,
  post: (answers: Array<[number, DirectCopyAnswer]>) => void,
  answerEvery: number,
): void {
  copyBatch(batch, records, (items) => recordBatch(items, records, post), answerEvery);
}
