import { Kysely, PostgresAdapter, type ColumnDefinitionBuilder } from 'kysely';

/** An integer key the database assigns: identity on PostgreSQL, rowid alias on SQLite. */
function generatedKey(db: Kysely<unknown>): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return (c) => (pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement());
}

/**
 * Job service: definitions, runs (with their counters, so status calls never
 * count audit rows), the run's work units (tasks) and per-document state (what
 * makes resume, run-errors and crash recovery exact), and the audit trail.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'integer', generatedKey(db))
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('job_group', 'varchar(200)', (c) => c.notNull())
    .addColumn('origin', 'varchar(16)', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('run_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('job_runs')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('run_number', 'integer', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(32)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('started_by', 'varchar(128)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('cancel', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('end_time', 'bigint')
    .addColumn('active_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('segment_start', 'bigint')
    .addColumn('read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('written', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('removed', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_base', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_runs_job').on('job_runs').columns(['job_id', 'run_number']).unique().execute();

  await db.schema
    .createTable('job_run_tasks')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('task_key', 'varchar(128)', (c) => c.notNull())
    .addColumn('kind', 'varchar(8)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(8)', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_run_tasks_pk', ['run_id', 'task_key'])
    .execute();
  await db.schema.createIndex('job_run_tasks_state').on('job_run_tasks').columns(['run_id', 'state']).execute();

  await db.schema
    .createTable('job_run_docs')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('rel_path', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(8)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(1)')
    .addColumn('claimed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_run_docs_pk', ['run_id', 'doc_id'])
    .execute();
  await db.schema.createIndex('job_run_docs_outcome').on('job_run_docs').columns(['run_id', 'outcome']).execute();

  await db.schema
    .createTable('job_audit')
    .addColumn('id', 'integer', generatedKey(db))
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('doc_id', 'varchar(1024)', (c) => c.notNull())
    .addColumn('record_type', 'varchar(1)', (c) => c.notNull())
    .addColumn('source_path', 'text')
    .addColumn('target_id', 'varchar(1024)')
    .addColumn('message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_audit_doc').on('job_audit').columns(['job_id', 'doc_id', 'record_type', 'id']).execute();
  await db.schema.createIndex('job_audit_created').on('job_audit').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['job_audit', 'job_run_docs', 'job_run_tasks', 'job_runs', 'jobs']) await db.schema.dropTable(t).execute();
}
