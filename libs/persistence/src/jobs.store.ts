import type { ScheduledStartClaim } from './job-schedules.repository';
/** The job service's storage as the services see it: the records and the JobsStore contract that JobsRepository (jobs.repository.ts) implements over SQL. */

/** A run's status; the job service's state table (job-states.ts) adds NEW for a job without a run. */
export type RunStatus = 'RUNNING' | 'PAUSING' | 'PAUSED' | 'ABORTING' | 'ABORTED' | 'FAILED' | 'COMPLETED' | 'COMPLETED_WITH_ERRORS';
/** 'start' (every document of the source folder) or 'runerrors' (the failed documents of the previous run). */
export type RunKind = 'start' | 'runerrors';
export type TaskState = 'pending' | 'active' | 'done';
/** 'enum' lists one folder page; 'docs' copies a batch of documents. */
export type TaskKind = 'enum' | 'docs' | 'sweep';
/** p (processed/written), e (error), d (duplicate), s (skipped). */
export type DocOutcomeCode = 'p' | 'e' | 'd' | 's';
/** An audit record's type: r (read) or an outcome. */
export type AuditRecordType = 'r' | DocOutcomeCode;
export type JobOrigin = 'api' | 'config';

/** `D` is the definition's type: stored as JSON, handed back parsed. */
export interface JobRecord<D = unknown> {
  id: number;
  name: string;
  group: string;
  origin: JobOrigin;
  definition: D;
  runCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface JobRunCounters {
  read: number;
  written: number;
  skipped: number;
  failed: number;
  removed: number;
}

export interface JobRunRecord extends JobRunCounters {
  id: string;
  jobId: number;
  runNumber: number;
  kind: RunKind;
  status: RunStatus;
  message: string | null;
  startedBy: string;
  attempt: number;
  cancel: boolean;
  startTime: number;
  endTime: number | null;
  activeMs: number;
  segmentStart: number | null;
  /** `failed` when the run was last resumed: options.maxErrors counts failures after it. */
  failedBase: number;
  /** Documents carried by the run's docs tasks inserted so far: what its listing has discovered. */
  discovered: number;
  /** The sizes of the documents written (`bytes` of their `p` outcomes). */
  bytesWritten: number;
  /** Bytes the finished documents streamed from the source (`bytesRead` of their outcomes). */
  bytesRead: number;
  /** A dry run: its outcomes are plans (DocOutcome.plan), nothing was written; never the job's last real run. */
  dryRun: boolean;
}

/** What a transition may change on a run. */
export type RunChange = Partial<
  Pick<JobRunRecord, 'status' | 'message' | 'attempt' | 'failedBase' | 'cancel' | 'endTime' | 'activeMs' | 'segmentStart'>
>;

/** A task as planned: its payload is the task plan's business (opaque text here). */
export interface TaskSpec {
  key: string;
  kind: TaskKind;
  payload: string;
  /** Documents a docs task carries: added to the run's `discovered` when the task is new to the run. */
  documents?: number;
}

export interface JobTaskRecord extends TaskSpec {
  runId: string;
  state: TaskState;
}

export interface ClaimedDoc {
  docId: string;
  state: 'claimed' | 'done';
  outcome: DocOutcomeCode | null;
  claimedAt: number;
  /** Claimed by this call (read for the first time in this run). */
  fresh: boolean;
}

export interface DocToClaim {
  docId: string;
  relPath: string;
  sourcePath: string;
}

/** A document's result; applied at most once per (run, document). */
export interface DocOutcome {
  docId: string;
  outcome: DocOutcomeCode;
  sourcePath: string;
  targetId?: string;
  message?: string;
  /** The source document was removed after the copy. */
  removed?: boolean;
  /** A written document's size as listed: added to the run's bytesWritten. */
  bytes?: number;
  /** Bytes streamed from the source for this document, whatever its outcome: added to the run's bytesRead. */
  bytesRead?: number;
  /** SHA-256 (hex) of the content written, hashed as it streamed from the source. */
  checksum?: string;
  /** How the written copy was checked: the target's hash kind (`sha256`, `md5-etag`, `quickxor`), `read-back`, `size` or `none`. */
  verified?: string;
  /** A dry run's planned action for the document (`create`, `skip`, `overwrite`, `version`, `rename`, `fail`). */
  plan?: string;
  /** The distinct names a mapping could not map for this document: counted per run (JobsStore.unmappedCounts). */
  unmapped?: ReadonlyArray<{ kind: string; name: string }>;
}

/** How many documents of a run had a name of this kind unmapped. */
export interface UnmappedCount {
  kind: string;
  name: string;
  documents: number;
}

export interface AuditRecord {
  jobId: number;
  runId: string;
  docId: string;
  recordType: AuditRecordType;
  sourcePath: string | null;
  targetId: string | null;
  message: string | null;
  createdAt: number;
  checksum: string | null;
  verified: string | null;
}

/** What a run's report selects: an outcome, or `r`, documents read and not finished (in flight, or left by a pause, abort, failure or kill). */
export type ReportOutcome = DocOutcomeCode | 'r';

/** One document of a run's report: its per-document row, with the audit record of its outcome (of its read while unfinished). */
export interface ReportRow {
  docId: string;
  /** Path below the job's source folder. */
  relPath: string;
  outcome: ReportOutcome;
  /** From the audit record: null once retention pruned it. */
  sourcePath: string | null;
  targetId: string | null;
  message: string | null;
  /** SHA-256 of the written content and how the copy was verified (DocOutcome); null for other outcomes. */
  checksum: string | null;
  verified: string | null;
  /** A dry run's planned action (DocOutcome.plan); null on a real run's rows. */
  plan: string | null;
  /** When the run claimed (read) the document. */
  readAt: number;
  /** When its outcome was recorded; null while unfinished or once pruned. */
  finishedAt: number | null;
}

export interface ReportQuery {
  /** Empty or absent: every document. */
  outcomes?: readonly ReportOutcome[];
  /** Keyset paging: documents after this id, in id order. */
  after?: string;
  limit: number;
}

export interface FailedDoc {
  docId: string;
  relPath: string;
}

/**
 * A run under its lock (one transaction): what a transition sees and may do. `run` is the
 * row as read when the lock was taken, with the changes made through `change` applied.
 */
export interface LockedRun {
  readonly run: JobRunRecord;
  change(patch: RunChange): Promise<void>;
  countTasks(states: readonly TaskState[]): Promise<number>;
  setTaskState(key: string, state: TaskState): Promise<void>;
  /** Rows left active by a process that stopped go back to pending. */
  resetActiveTasks(): Promise<void>;
  /** Inserts tasks as pending; a key the run has already keeps its row. */
  insertTasks(tasks: readonly TaskSpec[]): Promise<void>;
  /** JobsStore.claimDocs inside this transition (a task claims its batch as it starts). */
  claimDocs(jobId: number, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>>;
  /** JobsStore.finishDocs inside this transition (a task's last outcomes as it ends); `run` shows the new counters. */
  finishDocs(jobId: number, outcomes: readonly DocOutcome[], now: number): Promise<void>;
  /**
   * Documents an indexing run deleted from its index, or a sync run deleted or archived at its target
   * (gone from the source): recorded done (`p`, with the message) in this run, counted in `removed`
   * only, and their index or sync state forgotten.
   * A document the run has already is left alone (counted once).
   */
  recordRemoved(jobId: number, docs: readonly RemovedDoc[], now: number): Promise<void>;
}

/** What an indexing job last wrote for one source document. */
export interface IndexStateRecord {
  docId: string;
  sourcePath: string | null;
  stamp: string;
  runId: string;
}

/** A document deleted from an index because it is gone from the source (an indexing run's sweep). */
export interface RemovedDoc {
  docId: string;
  sourcePath: string | null;
  targetId: string;
  message: string;
}

/** What createRun's plan may read under the job's lock. */
export interface RunPlanReader {
  failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]>;
}

/** The job service's storage, as the services see it (the repository below, or a test's in-memory fake). */
export interface JobsStore<D = unknown> {
  insertJob(job: { name: string; group: string; origin: JobOrigin; definition: D; now: number }): Promise<number | undefined>;
  updateJob(id: number, job: { name: string; group: string; definition: D; now: number }): Promise<boolean>;
  setOrigin(id: number, origin: JobOrigin): Promise<void>;
  deleteJob(id: number): Promise<void>;
  findJob(id: number): Promise<JobRecord<D> | undefined>;
  findJobByName(name: string): Promise<JobRecord<D> | undefined>;
  listJobs(group?: string): Promise<Array<JobRecord<D>>>;
  createRun(
    jobId: number,
    input: { kind: RunKind; startedBy: string; now: number; scheduled?: ScheduledStartClaim; dryRun?: boolean },
    plan: (previous: JobRunRecord | undefined, reader: RunPlanReader) => Promise<TaskSpec[]>,
  ): Promise<JobRunRecord>;
  findRun(runId: string): Promise<JobRunRecord | undefined>;
  latestRun(jobId: number): Promise<JobRunRecord | undefined>;
  latestRuns(jobIds: number[]): Promise<Map<number, JobRunRecord>>;
  runsWithStatus(statuses: RunStatus[]): Promise<JobRunRecord[]>;
  transition<T>(runId: string, fn: (locked: LockedRun) => Promise<T>): Promise<T>;
  findTask(runId: string, key: string): Promise<JobTaskRecord | undefined>;
  unfinishedTaskKeys(runId: string): Promise<string[]>;
  /** Of these runs, those with a listing (enum) task not done: their `discovered` may still grow. */
  openListings(runIds: readonly string[]): Promise<Set<string>>;
  claimDocs(jobId: number, runId: string, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>>;
  finishDocs(jobId: number, runId: string, outcomes: readonly DocOutcome[], now: number): Promise<JobRunRecord>;
  failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]>;
  /** A page of a run's report, in document id order; kept for the runs whose per-document state is kept (the latest two of a job). */
  reportRows(jobId: number, runId: string, query: ReportQuery): Promise<ReportRow[]>;
  /** The run's documents by report outcome (every key present). */
  reportCounts(runId: string): Promise<Record<ReportOutcome, number>>;
  /** The run's unmapped names (DocOutcome.unmapped) with the documents that had each, by kind and name. */
  unmappedCounts(runId: string): Promise<UnmappedCount[]>;
  /** The latest record of a real run (a dry run's plans are left out: recordstatus says what happened). */
  latestAudit(jobId: number, docId: string, recordType: AuditRecordType): Promise<AuditRecord | undefined>;
  pruneAudit(before: number): Promise<number>;
  /** Indexing jobs: the last indexed state of these source documents. */
  indexStates(jobId: number, docIds: readonly string[]): Promise<Map<string, IndexStateRecord>>;
  /** Indexing jobs: records what was written (after the index accepted it, before its outcome). */
  saveIndexStates(jobId: number, runId: string, rows: ReadonlyArray<Omit<IndexStateRecord, 'runId'>>, now: number): Promise<void>;
  /** Indexing jobs: indexed documents this run did not list (gone from the source), `limit` at a time. */
  goneFromSource(jobId: number, runId: string, limit: number): Promise<IndexStateRecord[]>;
}
