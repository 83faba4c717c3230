import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '@gateway/persistence';

/** A migrated SQLite database in a fresh temporary folder, opened before each test and removed after it. */
export function useTempDatabase(): () => Database {
  let folder: string;
  let database: Database;
  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'gateway-persistence-'));
    database = await openDatabase({ sqliteFile: join(folder, 'gateway.db') });
  });
  afterEach(async () => {
    await database.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return () => database;
}
