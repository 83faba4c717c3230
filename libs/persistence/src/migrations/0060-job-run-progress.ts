import { Kysely } from 'kysely';

/**
 * Progress counters of a run, read from its row like the others: `discovered`, the documents its listing has
 * found so far (the status record's `total`), counted as the docs tasks that carry them are inserted; and
 * `bytes_written`, the listed sizes of its written documents, counted with their outcomes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').addColumn('discovered', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('job_runs').addColumn('bytes_written', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').dropColumn('bytes_written').execute();
  await db.schema.alterTable('job_runs').dropColumn('discovered').execute();
}
