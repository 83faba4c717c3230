import { Kysely } from 'kysely';

/**
 * The groups of a user (comma-separated principal names, as roles are): what permission-trimmed
 * search matches in `acl_read` besides the user name. Numbered 0033 so the jobs work of the same
 * session keeps 0031-0032 for itself.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('groups', 'text', (column) => column.notNull().defaultTo('')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('groups').execute();
}
