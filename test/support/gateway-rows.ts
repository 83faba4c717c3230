import BetterSqlite3 from 'better-sqlite3';
import { Client } from 'pg';

/** Where a gateway keeps its tables: its PostgreSQL (DATABASE_URL), else the SQLite file in its data folder. */
export interface GatewayDatabase {
  databaseUrl?: string;
  sqliteFile: string;
}

/**
 * Rows of a gateway's database, read beside the process (which may be stopped mid-transaction: SQLite's WAL and
 * PostgreSQL's MVCC both let a reader see the last commit). `?` placeholders on both engines.
 */
export async function gatewayRows(database: GatewayDatabase, sql: string, params: unknown[] = []): Promise<any[]> {
  if (database.databaseUrl) {
    const client = new Client({ connectionString: database.databaseUrl });
    await client.connect();
    try {
      let n = 0;
      return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows;
    } finally {
      await client.end();
    }
  }
  const db = new BetterSqlite3(database.sqliteFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}
