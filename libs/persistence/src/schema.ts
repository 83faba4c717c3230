import type { Generated } from 'kysely';

/** Timestamps are epoch milliseconds stored as 64-bit integers on both engines. */
export interface UsersTable {
  username: string;
  password_hash: string;
  /** Comma-separated role names. */
  roles: string;
  created_at: number;
}

export interface DatabaseSchema {
  users: UsersTable;
}
