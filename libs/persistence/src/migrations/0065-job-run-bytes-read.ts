import { Kysely } from 'kysely';

/** `bytes_read`: the bytes a run's documents streamed from the source, counted with their outcomes (the status record's `bytesRead`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').addColumn('bytes_read', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').dropColumn('bytes_read').execute();
}
