import { Kysely } from 'kysely';

/**
 * One row per due start of a job's schedule (issue 35): what became of it (`started` with its run,
 * `skipped` or `queued` behind an active run, `missed` while no gateway ran, `failed` to start). The
 * primary key (job_id, due_at) is the claim: of the nodes that see a start fall due, only the one
 * whose insert lands handles it, so each due start runs once whatever the number of nodes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_schedule_starts')
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)')
    .addColumn('node_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_schedule_starts_pk', ['job_id', 'due_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_schedule_starts').execute();
}
