import { Kysely } from 'kysely';

/**
 * `discovered`: the documents a run's listing has found so far (the status record's `total`), counted as the
 * docs tasks that carry them are inserted, so a status call reads it from the run row like the other counters.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').addColumn('discovered', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').dropColumn('discovered').execute();
}
