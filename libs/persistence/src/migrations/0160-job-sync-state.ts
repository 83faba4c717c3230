import { Kysely } from 'kysely';

/**
 * What a sync job last wrote per source document (issue 36): the next run skips a document whose
 * source stamp is unchanged, moves one whose path changed, refuses to overwrite one changed at the
 * target (its stamp differs from `target_stamp`), and deletes or archives at the target the
 * documents no longer listed. `size` + `modified` + `checksum` find renames on sources whose ids are
 * paths (the indexes below).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_sync_state')
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('rel_path', 'text', (c) => c.notNull())
    .addColumn('source_stamp', 'text', (c) => c.notNull())
    .addColumn('version_label', 'varchar(255)')
    .addColumn('size', 'bigint')
    .addColumn('modified', 'bigint')
    .addColumn('checksum', 'varchar(64)')
    .addColumn('target_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('target_stamp', 'text')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_sync_state_pk', ['job_id', 'doc_id'])
    .execute();
  await db.schema.createIndex('job_sync_state_shape').on('job_sync_state').columns(['job_id', 'size', 'modified']).execute();
  await db.schema.createIndex('job_sync_state_stamp').on('job_sync_state').columns(['job_id', 'source_stamp']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_sync_state').execute();
}
