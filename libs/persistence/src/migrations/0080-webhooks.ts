import { Kysely, PostgresAdapter, type ColumnDefinitionBuilder } from 'kysely';

/** An integer key the database assigns: identity on PostgreSQL, rowid alias on SQLite. */
function generatedKey(db: Kysely<unknown>): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return (c) => (pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement());
}

/**
 * Webhooks (issue 35): the endpoints and the events each wants; the run events (the outbox, written in
 * the transaction that changes the run's status, so an event exists exactly when its change committed);
 * one delivery row per event and endpoint, claimed by a lease (`claimed_until`) so that any node may send
 * it and a killed node's claim runs out; and the attempts, the history `GET …/deliveries` lists.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('origin', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('webhook_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_subscriptions_pk', ['webhook_id', 'event'])
    .execute();
  await db.schema.createIndex('webhook_subscriptions_event').on('webhook_subscriptions').column('event').execute();

  await db.schema
    .createTable('run_events')
    .addColumn('seq', 'integer', generatedKey(db))
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('event', 'varchar(64)', (c) => c.notNull())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('run_events_created').on('run_events').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'integer', generatedKey(db))
    .addColumn('webhook_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_seq', 'integer', (c) => c.notNull())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'varchar(256)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  // The due deliveries, and the per-job order check (an earlier pending delivery of the same endpoint and job).
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_chain').on('webhook_deliveries').columns(['webhook_id', 'job_id', 'state', 'event_seq']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'integer', generatedKey(db))
    .addColumn('delivery_id', 'integer', (c) => c.notNull())
    .addColumn('webhook_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event', 'varchar(64)', (c) => c.notNull())
    .addColumn('job_id', 'integer', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_attempts_webhook').on('webhook_attempts').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_attempts_time').on('webhook_attempts').column('attempted_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'run_events', 'webhook_subscriptions', 'webhooks']) await db.schema.dropTable(t).execute();
}
