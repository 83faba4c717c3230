import { Kysely } from 'kysely';

/**
 * Sync runs that follow a source's change feed (issue 36 §3, decision 0096). Per run: the change
 * token taken as it started (before its listing or its pass over the feed), used by a later run only
 * once this one is COMPLETED; the source folders it saw (id → path below the job's folder, or null:
 * gone), read by later runs for the folders' renames; and the documents its pass reported gone,
 * which its deletions task deletes at the target.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_sync_feed')
    .addColumn('run_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    // The source connector and folder the token is of: another source (a changed definition) lists again.
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    // 'full' (listed every folder) or 'feed' (read the changes since `since`).
    .addColumn('mode', 'varchar(8)', (c) => c.notNull())
    .addColumn('since', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_sync_feed_job').on('job_sync_feed').columns(['job_id']).execute();
  await db.schema
    .createTable('job_sync_feed_folders')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('folder_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('rel_path', 'text')
    .addPrimaryKeyConstraint('job_sync_feed_folders_pk', ['run_id', 'folder_id'])
    .execute();
  await db.schema.createIndex('job_sync_feed_folders_job').on('job_sync_feed_folders').columns(['job_id', 'folder_id']).execute();
  await db.schema
    .createTable('job_sync_feed_gone')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(1024)', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_sync_feed_gone_pk', ['run_id', 'doc_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_sync_feed_gone').execute();
  await db.schema.dropTable('job_sync_feed_folders').execute();
  await db.schema.dropTable('job_sync_feed').execute();
}
