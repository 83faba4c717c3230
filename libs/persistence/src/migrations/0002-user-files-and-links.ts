import { Kysely, sql } from 'kysely';

/**
 * User files (export outputs kept under <data>/user-files) and download links.
 * Timestamps are epoch milliseconds (bigint); booleans are 0/1 integers so
 * both engines read them back the same way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_files')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('owner', 'varchar(128)', (c) => c.notNull())
    .addColumn('file_name', 'varchar(1024)', (c) => c.notNull())
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('mime_type', 'varchar(255)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addColumn('entries_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('entries_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_done', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('error_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('message', 'varchar(1024)')
    .execute();
  await db.schema.createIndex('user_files_owner').on('user_files').column('owner').execute();
  await db.schema.createIndex('user_files_state').on('user_files').column('state').execute();
  await db.schema.createIndex('user_files_expires').on('user_files').column('expires_at').execute();

  await db.schema
    .createTable('download_links')
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('owner', 'varchar(128)', (c) => c.notNull())
    .addColumn('internal', 'integer', (c) => c.notNull())
    .addColumn('connector_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(4096)', (c) => c.notNull())
    .addColumn('file_name', 'varchar(1024)', (c) => c.notNull().defaultTo(sql`''`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('download_links_owner').on('download_links').column('owner').execute();
  await db.schema.createIndex('download_links_expires').on('download_links').column('expires_at').execute();
  // Internal links are looked up by the file they point at (deleting a file deletes its links).
  await db.schema.createIndex('download_links_doc').on('download_links').columns(['internal', 'doc_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('download_links').execute();
  await db.schema.dropTable('user_files').execute();
}
