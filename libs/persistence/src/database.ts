import * as fs from 'node:fs';
import * as path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider, type Migration } from 'kysely';
import type { DatabaseSchema } from './schema';
import { MIGRATIONS } from './migrations';

export type DatabaseEngine = 'sqlite' | 'postgres';

export interface DatabaseOptions {
  /** postgres://... selects PostgreSQL; otherwise SQLite at sqliteFile. */
  databaseUrl?: string;
  sqliteFile: string;
}

export interface Database {
  readonly engine: DatabaseEngine;
  readonly db: Kysely<DatabaseSchema>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * pg is required only for a PostgreSQL DATABASE_URL: ~4 MB of idle RSS the embedded SQLite
 * default does without (issue 16).
 */
function loadPg(): typeof import('pg') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as typeof import('pg');
  // PostgreSQL returns int8 as strings to avoid precision loss; our int8 columns
  // hold epoch milliseconds and counters, all far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  return pg;
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const url = options.databaseUrl?.trim();
  let engine: DatabaseEngine;
  let db: Kysely<DatabaseSchema>;
  if (url && /^postgres(ql)?:\/\//i.test(url)) {
    engine = 'postgres';
    const { Pool } = loadPg();
    const pool = new Pool({ connectionString: url, max: 10 });
    // An idle connection the server closes (restart, pg_terminate_backend, DROP DATABASE ... FORCE,
    // or one still closing after pool.end() resolved) is dropped by the pool and replaced on next
    // use; without a listener the pool's 'error' event would throw and end the process.
    pool.on('error', () => undefined);
    db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  } else if (url) {
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql:// (got '${url.split(':')[0]}:')`);
  } else {
    engine = 'sqlite';
    fs.mkdirSync(path.dirname(options.sqliteFile), { recursive: true });
    const sqlite = new BetterSqlite3(options.sqliteFile);
    sqlite.pragma('journal_mode = WAL');
    // SQLite's recommended pairing with WAL: commits stay atomic and the file cannot be corrupted;
    // a power cut may lose the last commits, but not every commit waits for an fsync (job audits).
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: reusingStatements(sqlite) }) });
  }

  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error).message ?? error)}`);
  }

  return {
    engine,
    db,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** Statements kept prepared: the job engine repeats a few dozen statements per task. */
const PREPARED_KEPT = 256;

/**
 * better-sqlite3 behind Kysely, reusing prepared statements. Kysely's SQLite driver prepares
 * every query again (parse and plan: about 1% of a filesystem job's CPU, plus the
 * statement objects to collect). A statement still iterating (a streamed select) is busy and
 * cannot run twice at once, so that caller gets a fresh one.
 */
function reusingStatements(sqlite: BetterSqlite3.Database): { prepare(sql: string): BetterSqlite3.Statement; close(): void } {
  const kept = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      const found = kept.get(sql);
      if (found && !found.busy) {
        // Map order is insertion order: re-inserting makes it the most recently used.
        kept.delete(sql);
        kept.set(sql, found);
        return found;
      }
      const statement = sqlite.prepare(sql);
      if (!found) {
        if (kept.size >= PREPARED_KEPT) kept.delete(kept.keys().next().value!);
        kept.set(sql, statement);
      }
      return statement;
    },
    close() {
      kept.clear();
      sqlite.close();
    },
  };
}
