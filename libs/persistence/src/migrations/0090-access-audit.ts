import { Kysely, PostgresAdapter, type ColumnDefinitionBuilder } from 'kysely';

/** A 64-bit key the database assigns: bigint identity on PostgreSQL, the rowid alias (always 64-bit) on SQLite. */
function generatedKey(db: Kysely<unknown>): ['bigint' | 'integer', (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return pg ? ['bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()] : ['integer', (c) => c.primaryKey().autoIncrement()];
}

/**
 * The access audit (issue 38): one row per content read the gateway served. Append-only: rows are
 * inserted in batches and only the retention sweep deletes (by `time`). The key orders the rows for
 * cursor paging; `time`, `username` and `document_id` carry the administrator's filters
 * (document ids are not indexed: up to 4096 characters, beyond what a PostgreSQL b-tree entry holds).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const [keyType, key] = generatedKey(db);
  await db.schema
    .createTable('access_audit')
    .addColumn('id', keyType, key)
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('username', 'varchar(255)', (c) => c.notNull())
    .addColumn('link_id', 'varchar(64)')
    .addColumn('client_address', 'varchar(64)')
    .addColumn('operation', 'varchar(32)', (c) => c.notNull())
    .addColumn('connector_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('path', 'text')
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('result', 'varchar(16)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('access_audit_time').on('access_audit').column('time').execute();
  await db.schema.createIndex('access_audit_username').on('access_audit').columns(['username', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('access_audit').execute();
}
