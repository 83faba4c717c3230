import type { Generated } from 'kysely';

/** Timestamps are epoch milliseconds stored as 64-bit integers on both engines. */
export interface UsersTable {
  username: string;
  password_hash: string;
  /** Comma-separated role names. */
  roles: string;
  /** Comma-separated group names (principals of permission-trimmed search); '' for none. */
  groups: Generated<string>;
  created_at: number;
}

/** running → ready | stopped | failed; only running moves. */
export type UserFileState = 'running' | 'ready' | 'stopped' | 'failed';

/** A file the gateway stores for a user (an export output) under <data>/user-files. */
export interface UserFilesTable {
  id: string;
  owner: string;
  file_name: string;
  type: string;
  mime_type: string;
  state: UserFileState;
  size: Generated<number>;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
  entries_total: Generated<number>;
  entries_done: Generated<number>;
  bytes_done: Generated<number>;
  error_count: Generated<number>;
  message: string | null;
  /** The node building a running export, and the end of its lease (epoch ms); null before either was recorded. */
  node_id: string | null;
  lease_expires_at: number | null;
}

/** A time-limited download link to a user file (internal = 1) or a repository document. */
export interface DownloadLinksTable {
  key: string;
  owner: string;
  /** 1 or 0. */
  internal: number;
  connector_id: string;
  doc_id: string;
  file_name: Generated<string>;
  created_at: number;
  expires_at: number;
  used: Generated<number>;
}

export interface DatabaseSchema {
  users: UsersTable;
  user_files: UserFilesTable;
  download_links: DownloadLinksTable;
}
