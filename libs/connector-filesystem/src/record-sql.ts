import BetterSqlite3 from 'better-sqlite3';

/**
 * How a connection to a repository's metadata database is opened, and the statements every
 * writer of first records uses: RecordDatabase on the event loop and the copy thread's
 * connection (direct-copy-records.ts). No imports beyond SQLite: the copy thread loads it.
 */

export const GET_RECORD = 'SELECT record FROM documents WHERE folder = ? AND name = ?';
/** Of some names of one folder (a JSON array), those with a record. */
const OF_NAMES = 'FROM documents WHERE folder = ? AND name IN (SELECT value FROM json_each(?))';
/** Their records (a listing's page). */
export const RECORDS_OF_NAMES = `SELECT name, record ${OF_NAMES}`;
/** Only whether they have one (the copy thread's look-up before copying). */
export const NAMES_WITH_RECORDS = `SELECT name ${OF_NAMES}`;
export const PUT_RECORD =
  'INSERT INTO documents (folder, name, record) VALUES (?, ?, ?) ON CONFLICT (folder, name) DO UPDATE SET record = excluded.record';

/** A connection with the settings RecordDatabase documents (WAL, synchronous=NORMAL, a writer waits up to 5 s for another). */
export function openRecordFile(file: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  const db = new BetterSqlite3(file, options);
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}
