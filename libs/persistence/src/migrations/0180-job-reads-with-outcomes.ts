import { Kysely } from 'kysely';

/**
 * A document's read (`r`) is no longer an audit record of its own (decision 0109): its claim keeps the
 * source path (`job_run_docs.source_path`) while it is unfinished, and its outcome's audit record the
 * time it was read (`job_audit.read_at`). One audit row per document and run instead of two. The `r`
 * records of earlier runs stay in job_audit and are still answered.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_run_docs').addColumn('source_path', 'text').execute();
  await db.schema.alterTable('job_audit').addColumn('read_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_audit').dropColumn('read_at').execute();
  await db.schema.alterTable('job_run_docs').dropColumn('source_path').execute();
}
