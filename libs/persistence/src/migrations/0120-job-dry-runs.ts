import { Kysely } from 'kysely';

/**
 * Dry runs (issue 34 §3): `job_runs.dry_run` is 1 on a run that planned instead of writing (its counters say what
 * a real run would have done); `job_audit.plan` is the planned action of such a run's outcome records (`create`,
 * `skip`, `overwrite`, `version`, `rename`, `fail`), null on every record of a real run; `job_run_unmapped` counts,
 * per run, the documents on which a mapping noted each distinct unmapped property, type or principal.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('job_runs').addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('job_audit').addColumn('plan', 'text').execute();
  await db.schema
    .createTable('job_run_unmapped')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('name', 'varchar(1024)', (c) => c.notNull())
    .addColumn('documents', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_run_unmapped_pk', ['run_id', 'kind', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_run_unmapped').execute();
  await db.schema.alterTable('job_audit').dropColumn('plan').execute();
  await db.schema.alterTable('job_runs').dropColumn('dry_run').execute();
}
