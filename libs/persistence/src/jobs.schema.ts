import type { Generated } from 'kysely';

/** Job service tables (migration 0010-jobs), merged into DatabaseSchema. Timestamps are epoch ms. */
export interface JobsTable {
  id: Generated<number>;
  name: string;
  job_group: string;
  /** 'api' (admin API) or 'config' (the configuration file, its source of truth). */
  origin: string;
  /** JSON of the definition: source, target, options. */
  definition: string;
  run_count: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface JobRunsTable {
  /** `<jobId>_<run number>` */
  id: string;
  job_id: number;
  run_number: number;
  /** 'start' or 'runerrors'. */
  kind: string;
  status: string;
  message: string | null;
  started_by: string;
  /** Incremented by every resume; queued work of an older attempt is ignored. */
  attempt: number;
  /** 1 when in-flight documents are to be cancelled (kill). */
  cancel: Generated<number>;
  start_time: number;
  end_time: number | null;
  active_ms: Generated<number>;
  /** Start of the current active segment (null while not active). */
  segment_start: number | null;
  read: Generated<number>;
  written: Generated<number>;
  skipped: Generated<number>;
  failed: Generated<number>;
  removed: Generated<number>;
  /** `failed` when the run was last resumed: options.maxErrors counts failures after it. */
  failed_base: Generated<number>;
  /** Documents the run's tasks carry so far (migration 0060-job-run-progress). */
  discovered: Generated<number>;
  /** Listed sizes of the documents written (migration 0060-job-run-progress). */
  bytes_written: Generated<number>;
  /** Bytes streamed from the source by the documents finished (migration 0065-job-run-bytes-read). */
  bytes_read: Generated<number>;
  /** 1 on a dry run (migration 0120-job-dry-runs): it planned, wrote nothing. */
  dry_run: Generated<number>;
  updated_at: number;
}

export interface JobRunTasksTable {
  run_id: string;
  task_key: string;
  /** 'enum' (list one folder page) or 'docs' (copy a batch of documents). */
  kind: string;
  payload: string;
  /** 'pending' | 'active' | 'done' */
  state: string;
  updated_at: number;
}

export interface JobRunDocsTable {
  run_id: string;
  doc_id: string;
  rel_path: string;
  /** 'claimed' (read, not finished) | 'done' */
  state: string;
  /** p, e, d or s once done. */
  outcome: string | null;
  claimed_at: number;
  /** Migration 0180: the source path it was read from (what its `r` record says while it is unfinished). */
  source_path: string | null;
}

export interface JobAuditTable {
  id: Generated<number>;
  job_id: number;
  run_id: string;
  doc_id: string;
  record_type: string;
  source_path: string | null;
  target_id: string | null;
  message: string | null;
  created_at: number;
  /** Migration 0110: a written document's SHA-256 and how its copy was verified. */
  checksum: string | null;
  verified: string | null;
  /** Migration 0120: a dry run's planned action (create, skip, overwrite, version, rename, fail); null on a real run's records. */
  plan: string | null;
  /** Migration 0180: on an outcome's record, when the document was read (its claim): the `r` record of that run. */
  read_at: number | null;
}

/** Per run, the documents on which a mapping noted each unmapped name (migration 0120-job-dry-runs). */
export interface JobRunUnmappedTable {
  run_id: string;
  /** 'property', 'type', 'principal' or 'permission' */
  kind: string;
  name: string;
  documents: number;
}

/** An indexing job's last write per source document (migration 0040-job-index-state). */
export interface JobIndexStateTable {
  job_id: number;
  doc_id: string;
  source_path: string | null;
  /** What identifies the indexed state: target, etag or modified + size, version label. */
  stamp: string;
  /** The run that wrote it (a resumed run recognises its own earlier writes). */
  run_id: string;
  updated_at: number;
}

declare module './schema' {
  interface DatabaseSchema {
    jobs: JobsTable;
    job_runs: JobRunsTable;
    job_run_tasks: JobRunTasksTable;
    job_run_docs: JobRunDocsTable;
    job_audit: JobAuditTable;
    job_index_state: JobIndexStateTable;
    job_run_unmapped: JobRunUnmappedTable;
  }
}
