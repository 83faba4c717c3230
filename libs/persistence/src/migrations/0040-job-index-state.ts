import { Kysely } from 'kysely';

/**
 * What an indexing job last wrote to its index, per source document (issue 14): the next run
 * re-indexes only documents whose stamp (target, etag or modification time and size, version
 * label) changed, and deletes from the index those no longer listed at the source.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_index_state')
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('source_path', 'text')
    .addColumn('stamp', 'text', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_index_state_pk', ['job_id', 'doc_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_index_state').execute();
}
