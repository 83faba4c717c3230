import type { Migration } from 'kysely';
import * as m0001 from './0001-users';

/**
 * Every migration, in order. Written with Kysely's schema builder only, so the
 * same list runs unchanged on SQLite and PostgreSQL. Later features append here.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-users': m0001,
};
