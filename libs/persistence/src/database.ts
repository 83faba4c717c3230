import * as fs from 'node:fs';
import * as path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider, type Migration } from 'kysely';
import type { Client, PoolClient } from 'pg';
import { settlesWithin } from '@gateway/concurrency';
import type { DatabaseSchema } from './schema';
import { MIGRATIONS } from './migrations';

export type DatabaseEngine = 'sqlite' | 'postgres';

export interface DatabaseOptions {
  /** postgres://... selects PostgreSQL; otherwise SQLite at sqliteFile. */
  databaseUrl?: string;
  sqliteFile: string;
  /** PostgreSQL: how long getting a connection may take (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** PostgreSQL: how long one query may wait for its answer (DATABASE_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_QUERY_TIMEOUT_MS = 60_000;
/** How long closing the database may wait for its connections before it cuts them (then as long again). */
export const CLOSE_GRACE_MS = 5_000;

/** pg's network-level codes, and PostgreSQL's connection-exception / shutdown / cannot-connect states. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03']);
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/**
 * Whether an error thrown by a query means the database cannot be reached (a 503, not a bug): the
 * server is down, restarting, or stopped answering within the time-outs above.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // Not `instanceof Error`: socket errors come from Node's own realm, which differs from the caller's
  // under a sandbox such as jest's.
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
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
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first use, not at load: idle RSS (issue 16)
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
  /** PostgreSQL: the pool's connections, so a shutdown can cut those a silent server holds open. */
  const sockets = new Set<PoolClient>();
  if (url && /^postgres(ql)?:\/\//i.test(url)) {
    engine = 'postgres';
    const { Pool } = loadPg();
    const pool = new Pool({
      connectionString: url,
      max: 10,
      // Without these a PostgreSQL that stops answering (network black hole, frozen host) holds every
      // request that touches the database forever; with them the request fails (503) and the pool
      // replaces the connection once the server is back.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      query_timeout: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    // An idle connection the server closes (restart, pg_terminate_backend, DROP DATABASE ... FORCE,
    // or one still closing after pool.end() resolved) is dropped by the pool and replaced on next
    // use; without a listener the pool's 'error' event would throw and end the process.
    pool.on('error', () => undefined);
    // A connection lost while checked out (between a transaction's queries, or before its first) emits
    // 'error' on its client, outside any query: unheard, that ends the process. The query or the
    // transaction using it fails on its own, and the pool drops the broken client when it is released.
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
      sockets.add(client);
    });
    pool.on('remove', (client) => sockets.delete(client));
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
      // pool.end() waits for every connection to close; one whose server stopped answering (a black-holed
      // network, a frozen host) would hold the gateway's shutdown forever. Past the grace it is cut.
      const destroyed = db.destroy();
      if (await settlesWithin(destroyed, CLOSE_GRACE_MS)) return;
      for (const client of sockets) (client as unknown as Client).connection?.stream.destroy();
      await settlesWithin(destroyed, CLOSE_GRACE_MS);
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
