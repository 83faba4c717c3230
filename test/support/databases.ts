import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { openDatabase, type Database } from '@gateway/persistence';
import { MEDIUM_POSTGRES_ENV } from '../medium/env';

export type DatabaseKind = 'SQLite' | 'PostgreSQL';

/** The two databases the gateway runs on; medium specs run every case on each: `describe.each(DATABASE_KINDS)('… (%s)', (kind) => …)`. */
export const DATABASE_KINDS: readonly DatabaseKind[] = ['SQLite', 'PostgreSQL'];

function postgresAdminUrl(): string {
  const url = process.env[MEDIUM_POSTGRES_ENV];
  // Not a skip: a medium spec run outside its project would otherwise test one database and pass.
  if (!url) throw new Error(`${MEDIUM_POSTGRES_ENV} is not set: run medium specs in the jest project "medium" (its global setup starts PostgreSQL)`);
  return url;
}

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: postgresAdminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const urlOf = (name: string) => {
  const url = new URL(postgresAdminUrl());
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * A PostgreSQL database migrated once per spec file (by the gateway's own openDatabase), copied for each test by
 * CREATE DATABASE … TEMPLATE: a fresh database costs a file copy, not the migrations again.
 */
let template: Promise<string> | undefined;
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `gw_medium_tpl_${randomBytes(6).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE ${name}`));
    const migrated = await openDatabase({ databaseUrl: urlOf(name), sqliteFile: '' });
    await migrated.close(); // a template must have no connection while it is copied
    return name;
  })();
  return template;
}

/** A fresh, migrated database of that kind before each test (SQLite in a temporary folder, a new PostgreSQL database), removed after it. */
export function useDatabase(kind: DatabaseKind): () => Database {
  let folder: string;
  let postgresName: string | undefined;
  let database: Database;
  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'gateway-medium-'));
    if (kind === 'PostgreSQL') {
      const from = await migratedTemplate();
      postgresName = `gw_medium_${randomBytes(6).toString('hex')}`;
      await admin((c) => c.query(`CREATE DATABASE ${postgresName} TEMPLATE ${from}`));
    }
    database = await openDatabase({ databaseUrl: postgresName && urlOf(postgresName), sqliteFile: join(folder, 'gateway.db') });
  });
  afterEach(async () => {
    await database.close();
    if (postgresName) {
      const name = postgresName;
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
    rmSync(folder, { recursive: true, force: true });
  });
  afterAll(async () => {
    if (kind !== 'PostgreSQL' || !template) return;
    const name = await template;
    template = undefined;
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  return () => database;
}
