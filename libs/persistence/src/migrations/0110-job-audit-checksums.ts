import { Kysely } from 'kysely';

/**
 * A copied document's checksum with the record of its outcome: `checksum`, the SHA-256 (hex) of the bytes
 * read from the source as they streamed to the target, and `verified`, how the written copy was checked
 * (the job's `verify` option: the target's hash kind, `read-back`, `size` or `none`). Null on the other
 * records and on documents recorded before this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_audit').addColumn('checksum', 'text').execute();
  await db.schema.alterTable('job_audit').addColumn('verified', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_audit').dropColumn('verified').execute();
  await db.schema.alterTable('job_audit').dropColumn('checksum').execute();
}
