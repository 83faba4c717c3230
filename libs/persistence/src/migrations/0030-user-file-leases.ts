import { Kysely } from 'kysely';

/**
 * Which node builds a running export, and until when its lease runs (epoch ms). The node renews the lease
 * while it works; once it has expired any node may fail the export (its node died). Rows written before
 * this migration have neither: they count as abandoned.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_files').addColumn('node_id', 'varchar(255)').execute();
  await db.schema.alterTable('user_files').addColumn('lease_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_files').dropColumn('lease_expires_at').execute();
  await db.schema.alterTable('user_files').dropColumn('node_id').execute();
}
