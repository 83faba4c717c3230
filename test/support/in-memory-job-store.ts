import type {
  AuditRecord,
  AuditRecordType,
  ClaimedDoc,
  DocOutcome,
  DocToClaim,
  FailedDoc,
  IndexStateRecord,
  JobOrigin,
  JobRecord,
  JobRunRecord,
  JobTaskRecord,
  LockedRun,
  RemovedDoc,
  ReportOutcome,
  ReportQuery,
  ReportRow,
  RunChange,
  RunKind,
  RunPlanReader,
  RunStatus,
  TaskSpec,
  TaskState,
  UnmappedCount,
} from '@gateway/persistence';
import type { JobDefinition } from '../../apps/api/src/config/job-definition.dto';
import type { JobStore } from '../../apps/api/src/jobs/job-store';

interface DocRow {
  relPath: string;
  state: 'claimed' | 'done';
  outcome: ClaimedDoc['outcome'];
  claimedAt: number;
  /** The source path it was read from (its `r` record while unfinished). */
  sourcePath: string | null;
}

/** A run record in state RUNNING with every counter at zero; `patch` sets the rest. */
export function runRecord(patch: Partial<JobRunRecord> = {}): JobRunRecord {
  return {
    id: '1_1',
    jobId: 1,
    runNumber: 1,
    kind: 'start',
    status: 'RUNNING',
    message: null,
    startedBy: 'admin',
    attempt: 1,
    cancel: false,
    startTime: 0,
    endTime: null,
    activeMs: 0,
    segmentStart: 0,
    read: 0,
    written: 0,
    skipped: 0,
    failed: 0,
    removed: 0,
    failedBase: 0,
    discovered: 0,
    bytesWritten: 0,
    bytesRead: 0,
    dryRun: false,
    ...patch,
  };
}

/**
 * The job store in memory, for unit tests: the same contract as JobsRepository, checked case by case beside it
 * on SQLite and PostgreSQL (apps/api/src/jobs/job-store.medium-spec.ts), one transition at a time, and a transition
 * or a run plan that throws leaves nothing behind.
 */
export class InMemoryJobStore implements JobStore {
  readonly jobs = new Map<number, JobRecord<JobDefinition>>();
  readonly runs = new Map<string, JobRunRecord>();
  /** runId → task key → task. */
  readonly tasks = new Map<string, Map<string, JobTaskRecord>>();
  /** runId → doc id → row. */
  readonly docs = new Map<string, Map<string, DocRow>>();
  /** With `plan`: a dry run's planned action (migration 0120's column). */
  readonly audit: Array<AuditRecord & { plan: string | null; readAt: number | null }> = [];
  /** Per run, documents by unmapped kind and name (job_run_unmapped). */
  private readonly unmapped = new Map<string, Map<string, UnmappedCount>>();
  /** jobId → doc id → what an indexing job last wrote. */
  readonly indexState = new Map<number, Map<string, IndexStateRecord>>();
  /** Transitions made, by run (what a test can check was locked). */
  transitions = 0;
  private nextJobId = 1;
  private lock: Promise<unknown> = Promise.resolve();

  /** Adds a job directly (tests start from a defined job). */
  addJob(definition: JobDefinition, origin: JobOrigin = 'api', now = 0): JobRecord<JobDefinition> {
    const job = { id: this.nextJobId++, name: definition.jobName, group: definition.jobGroup, origin, definition, runCount: 0, createdAt: now, updatedAt: now };
    this.jobs.set(job.id, job);
    return job;
  }

  /** Adds a run in any state directly, as the job's latest. */
  addRun(jobId: number, patch: Partial<JobRunRecord> = {}): JobRunRecord {
    const job = this.jobs.get(jobId)!;
    job.runCount++;
    const run = runRecord({ id: `${jobId}_${job.runCount}`, jobId, runNumber: job.runCount, ...patch });
    this.runs.set(run.id, run);
    this.tasks.set(run.id, new Map());
    this.docs.set(run.id, new Map());
    return run;
  }

  taskStates(runId: string): Record<string, TaskState> {
    return Object.fromEntries([...(this.tasks.get(runId) ?? new Map<string, JobTaskRecord>()).values()].map((t) => [t.key, t.state]));
  }

  async insertJob(job: { name: string; group: string; origin: JobOrigin; definition: JobDefinition; now: number }): Promise<number | undefined> {
    if ([...this.jobs.values()].some((j) => j.name === job.name)) return undefined;
    const id = this.nextJobId++;
    this.jobs.set(id, { id, name: job.name, group: job.group, origin: job.origin, definition: job.definition, runCount: 0, createdAt: job.now, updatedAt: job.now });
    return id;
  }

  async updateJob(id: number, job: { name: string; group: string; definition: JobDefinition; now: number }): Promise<boolean> {
    if ([...this.jobs.values()].some((j) => j.name === job.name && j.id !== id)) return false;
    const existing = this.jobs.get(id);
    if (existing) Object.assign(existing, { name: job.name, group: job.group, definition: job.definition, updatedAt: job.now });
    return true;
  }

  async setOrigin(id: number, origin: JobOrigin): Promise<void> {
    const job = this.jobs.get(id);
    if (job) job.origin = origin;
  }

  async deleteJob(id: number): Promise<void> {
    for (const run of [...this.runs.values()].filter((r) => r.jobId === id)) {
      this.runs.delete(run.id);
      this.tasks.delete(run.id);
      this.docs.delete(run.id);
      this.unmapped.delete(run.id);
    }
    this.audit.splice(0, this.audit.length, ...this.audit.filter((a) => a.jobId !== id));
    this.indexState.delete(id);
    this.jobs.delete(id);
  }

  async findJob(id: number): Promise<JobRecord<JobDefinition> | undefined> {
    const job = this.jobs.get(id);
    return job && { ...job };
  }

  async findJobByName(name: string): Promise<JobRecord<JobDefinition> | undefined> {
    const job = [...this.jobs.values()].find((j) => j.name === name);
    return job && { ...job };
  }

  async listJobs(group?: string): Promise<Array<JobRecord<JobDefinition>>> {
    return [...this.jobs.values()].filter((j) => group === undefined || j.group === group).map((j) => ({ ...j }));
  }

  async createRun(
    jobId: number,
    input: { kind: RunKind; startedBy: string; now: number; dryRun?: boolean },
    plan: (previous: JobRunRecord | undefined, reader: RunPlanReader) => Promise<TaskSpec[]>,
  ): Promise<JobRunRecord> {
    return this.locked(async () => {
      const job = this.jobs.get(jobId);
      if (!job) throw new Error(`Job ${jobId} not found`);
      const previous = this.runs.get(`${jobId}_${job.runCount}`);
      const tasks = await plan(previous && { ...previous }, { failedDocs: (runId, after, limit) => this.failedDocs(runId, after, limit) });
      const run = this.addRun(jobId, { kind: input.kind, startedBy: input.startedBy, startTime: input.now, segmentStart: input.now, dryRun: input.dryRun === true });
      if (!input.dryRun) job.updatedAt = input.now;
      run.discovered += this.insertTasksOf(run.id, tasks);
      for (const old of this.runs.values()) {
        if (old.jobId === jobId && old.runNumber < run.runNumber - 1) {
          this.docs.set(old.id, new Map());
          this.tasks.set(old.id, new Map());
        }
      }
      return { ...run };
    });
  }

  async findRun(runId: string): Promise<JobRunRecord | undefined> {
    const run = this.runs.get(runId);
    return run && { ...run };
  }

  async latestRun(jobId: number): Promise<JobRunRecord | undefined> {
    const job = this.jobs.get(jobId);
    return job ? this.findRun(`${jobId}_${job.runCount}`) : undefined;
  }

  async latestRuns(jobIds: number[]): Promise<Map<number, JobRunRecord>> {
    const out = new Map<number, JobRunRecord>();
    for (const id of jobIds) {
      const run = await this.latestRun(id);
      if (run) out.set(id, run);
    }
    return out;
  }

  async runsWithStatus(statuses: RunStatus[]): Promise<JobRunRecord[]> {
    return [...this.runs.values()].filter((r) => statuses.includes(r.status)).map((r) => ({ ...r }));
  }

  async transition<T>(runId: string, fn: (locked: LockedRun) => Promise<T>): Promise<T> {
    return this.locked(async () => {
      const stored = this.runs.get(runId);
      if (!stored) throw new Error(`Run ${runId} not found`);
      this.transitions++;
      const savedTasks = new Map([...this.tasks.get(runId)!].map(([k, t]) => [k, { ...t }]));
      const savedDocs = new Map([...this.docs.get(runId)!].map(([k, d]) => [k, { ...d }]));
      const savedAudit = this.audit.length;
      const savedState = new Map([...this.indexState].map(([k, m]) => [k, new Map(m)]));
      let run: JobRunRecord = { ...stored };
      const locked: LockedRun = {
        get run() {
          return run;
        },
        change: async (patch: RunChange) => {
          const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
          run = { ...run, ...defined };
        },
        countTasks: async (states) => [...this.tasks.get(runId)!.values()].filter((t) => states.includes(t.state)).length,
        setTaskState: async (key, state) => {
          const task = this.tasks.get(runId)!.get(key);
          if (task) task.state = state;
        },
        resetActiveTasks: async () => {
          for (const t of this.tasks.get(runId)!.values()) if (t.state === 'active') t.state = 'pending';
        },
        insertTasks: async (tasks) => {
          run.discovered += this.insertTasksOf(runId, tasks);
        },
        claimDocs: async (jobId, docs, now) => this.claimIn(run, jobId, docs, now),
        finishDocs: async (jobId, outcomes, now) => this.finishIn(run, jobId, outcomes, now),
        recordRemoved: async (jobId, docs, now) => this.removedIn(run, jobId, docs, now),
      };
      try {
        const result = await fn(locked);
        this.runs.set(runId, { ...locked.run });
        return result;
      } catch (e) {
        this.tasks.set(runId, savedTasks);
        this.docs.set(runId, savedDocs);
        this.audit.splice(savedAudit);
        this.indexState.clear();
        for (const [k, m] of savedState) this.indexState.set(k, m);
        throw e;
      }
    });
  }

  async findTask(runId: string, key: string): Promise<JobTaskRecord | undefined> {
    const task = this.tasks.get(runId)?.get(key);
    return task && { ...task };
  }

  async unfinishedTaskKeys(runId: string): Promise<string[]> {
    return [...(this.tasks.get(runId)?.values() ?? [])].filter((t) => t.state !== 'done').map((t) => t.key).sort();
  }

  async openListings(runIds: readonly string[]): Promise<Set<string>> {
    return new Set(runIds.filter((id) => [...(this.tasks.get(id)?.values() ?? [])].some((t) => t.kind === 'enum' && t.state !== 'done')));
  }

  async claimDocs(jobId: number, runId: string, docs: readonly DocToClaim[], now: number): Promise<Map<string, ClaimedDoc>> {
    return this.locked(async () => this.claimIn(this.runs.get(runId)!, jobId, docs, now));
  }

  async finishDocs(jobId: number, runId: string, outcomes: readonly DocOutcome[], now: number): Promise<JobRunRecord> {
    return this.locked(async () => {
      const run = this.runs.get(runId)!;
      this.finishIn(run, jobId, outcomes, now);
      return { ...run };
    });
  }

  /** Claims into `run` (the stored record, or a transition's copy). */
  private claimIn(run: JobRunRecord, jobId: number, docs: readonly DocToClaim[], now: number): Map<string, ClaimedDoc> {
    const rows = this.docs.get(run.id)!;
    const out = new Map<string, ClaimedDoc>();
    for (const d of docs) {
      if (out.has(d.docId)) continue;
      const row = rows.get(d.docId);
      if (row) {
        out.set(d.docId, { docId: d.docId, state: row.state, outcome: row.outcome, claimedAt: row.claimedAt, fresh: false });
        continue;
      }
      // The read is the claim's (its source path and time), then its outcome record's (readAt), as the repository keeps it.
      rows.set(d.docId, { relPath: d.relPath, state: 'claimed', outcome: null, claimedAt: now, sourcePath: d.sourcePath });
      run.read++;
      out.set(d.docId, { docId: d.docId, state: 'claimed', outcome: null, claimedAt: now, fresh: true });
    }
    return out;
  }

  private finishIn(run: JobRunRecord, jobId: number, outcomes: readonly DocOutcome[], now: number): void {
    const rows = this.docs.get(run.id)!;
    for (const o of outcomes) {
      const row = rows.get(o.docId);
      if (!row || row.state !== 'claimed') continue;
      row.state = 'done';
      row.outcome = o.outcome;
      if (o.outcome === 'p') {
        run.written++;
        run.bytesWritten += o.bytes ?? 0;
      }
      else if (o.outcome === 'e') run.failed++;
      else run.skipped++;
      if (o.removed) run.removed++;
      run.bytesRead += o.bytesRead ?? 0;
      this.addAudit(jobId, run.id, o.docId, o.outcome, o.sourcePath, o.targetId ?? null, o.message ?? null, now, o.checksum ?? null, o.verified ?? null, o.plan ?? null, row.claimedAt);
      for (const u of o.unmapped ?? []) {
        const counts = this.unmapped.get(run.id) ?? new Map<string, UnmappedCount>();
        this.unmapped.set(run.id, counts);
        const key = JSON.stringify([u.kind, u.name]);
        const count = counts.get(key) ?? { kind: u.kind, name: u.name, documents: 0 };
        count.documents++;
        counts.set(key, count);
      }
    }
  }

  private removedIn(run: JobRunRecord, jobId: number, docs: readonly RemovedDoc[], now: number): void {
    const rows = this.docs.get(run.id)!;
    const state = this.indexState.get(jobId);
    for (const d of docs) {
      state?.delete(d.docId);
      if (rows.has(d.docId)) continue;
      rows.set(d.docId, { relPath: d.sourcePath ?? d.docId, state: 'done', outcome: 'p', claimedAt: now, sourcePath: null });
      run.removed++;
      this.addAudit(jobId, run.id, d.docId, 'p', d.sourcePath, d.targetId, d.message, now);
    }
  }

  async indexStates(jobId: number, docIds: readonly string[]): Promise<Map<string, IndexStateRecord>> {
    const state = this.indexState.get(jobId);
    const out = new Map<string, IndexStateRecord>();
    for (const id of docIds) {
      const row = state?.get(id);
      if (row) out.set(id, { ...row });
    }
    return out;
  }

  async saveIndexStates(jobId: number, runId: string, rows: ReadonlyArray<Omit<IndexStateRecord, 'runId'>>): Promise<void> {
    const state = this.indexState.get(jobId) ?? new Map<string, IndexStateRecord>();
    for (const r of rows) state.set(r.docId, { ...r, runId });
    this.indexState.set(jobId, state);
  }

  async goneFromSource(jobId: number, runId: string, limit: number): Promise<IndexStateRecord[]> {
    const seen = this.docs.get(runId) ?? new Map<string, DocRow>();
    return [...(this.indexState.get(jobId)?.values() ?? [])]
      .filter((r) => !seen.has(r.docId))
      .sort((a, b) => (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0))
      .slice(0, limit)
      .map((r) => ({ ...r }));
  }

  async failedDocs(runId: string, after: string | undefined, limit: number): Promise<FailedDoc[]> {
    return [...(this.docs.get(runId) ?? new Map<string, DocRow>()).entries()]
      .filter(([id, row]) => row.outcome === 'e' && (after === undefined || id > after))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([docId, row]) => ({ docId, relPath: row.relPath }));
  }

  async reportRows(jobId: number, runId: string, query: ReportQuery): Promise<ReportRow[]> {
    const wanted = new Set(query.outcomes ?? []);
    return [...(this.docs.get(runId) ?? new Map<string, DocRow>()).entries()]
      .map(([docId, row]) => {
        const outcome: ReportOutcome = row.outcome ?? 'r';
        return { docId, row, outcome };
      })
      .filter(({ docId, outcome }) => (wanted.size === 0 || wanted.has(outcome)) && (query.after === undefined || docId > query.after))
      .sort((a, b) => (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0))
      .slice(0, query.limit)
      .map(({ docId, row, outcome }) => {
        const audit = this.audit.find((a) => a.jobId === jobId && a.runId === runId && a.docId === docId && a.recordType === outcome);
        return {
          docId,
          relPath: row.relPath,
          outcome,
          sourcePath: audit?.sourcePath ?? row.sourcePath,
          targetId: audit?.targetId ?? null,
          message: audit?.message ?? null,
          checksum: audit?.checksum ?? null,
          verified: audit?.verified ?? null,
          plan: audit?.plan ?? null,
          readAt: row.claimedAt,
          finishedAt: outcome === 'r' ? null : (audit?.createdAt ?? null),
        };
      });
  }

  async reportCounts(runId: string): Promise<Record<ReportOutcome, number>> {
    const counts: Record<ReportOutcome, number> = { p: 0, r: 0, e: 0, d: 0, s: 0 };
    for (const row of (this.docs.get(runId) ?? new Map<string, DocRow>()).values()) counts[row.outcome ?? 'r']++;
    return counts;
  }

  async unmappedCounts(runId: string): Promise<UnmappedCount[]> {
    return [...(this.unmapped.get(runId)?.values() ?? [])]
      .map((c) => ({ ...c }))
      .sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : 1) : a.kind < b.kind ? -1 : 1));
  }

  async latestAudit(jobId: number, docId: string, recordType: AuditRecordType): Promise<AuditRecord | undefined> {
    if (recordType === 'r') return this.latestRead(jobId, docId);
    return [...this.audit].reverse().find((a) => a.jobId === jobId && a.docId === docId && a.recordType === recordType && a.plan === null);
  }

  /** The latest read: an unfinished claim, or an outcome record's readAt, whichever is later. */
  private latestRead(jobId: number, docId: string): AuditRecord | undefined {
    const read = (runId: string, sourcePath: string | null, createdAt: number): AuditRecord => ({ jobId, runId, docId, recordType: 'r', sourcePath, targetId: null, message: null, createdAt, checksum: null, verified: null });
    const audited = [...this.audit].reverse().find((a) => a.jobId === jobId && a.docId === docId && a.readAt !== null);
    let latest = audited && read(audited.runId, audited.sourcePath, audited.readAt!);
    for (const [runId, rows] of this.docs) {
      const row = rows.get(docId);
      if (this.runs.get(runId)?.jobId !== jobId || row?.state !== 'claimed') continue;
      if (!latest || row.claimedAt >= latest.createdAt) latest = read(runId, row.sourcePath, row.claimedAt);
    }
    return latest;
  }

  async pruneAudit(before: number): Promise<number> {
    const kept = this.audit.filter((a) => a.createdAt >= before);
    const removed = this.audit.length - kept.length;
    this.audit.splice(0, this.audit.length, ...kept);
    return removed;
  }

  /** Returns the documents of the tasks new to the run (the run's `discovered` grows by them). */
  private insertTasksOf(runId: string, tasks: readonly TaskSpec[]): number {
    const rows = this.tasks.get(runId)!;
    let documents = 0;
    for (const t of tasks) {
      if (rows.has(t.key)) continue;
      rows.set(t.key, { ...t, runId, state: 'pending' });
      documents += t.documents ?? 0;
    }
    return documents;
  }

  private addAudit(
    jobId: number,
    runId: string,
    docId: string,
    recordType: AuditRecordType,
    sourcePath: string | null,
    targetId: string | null,
    message: string | null,
    createdAt: number,
    checksum: string | null = null,
    verified: string | null = null,
    plan: string | null = null,
    readAt: number | null = null,
  ): void {
    this.audit.push({ jobId, runId, docId, recordType, sourcePath, targetId, message, createdAt, checksum, verified, plan, readAt });
  }

  /** One store operation at a time, like the run lock (SQLite's write lock). */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.lock.then(fn);
    this.lock = result.catch(() => undefined);
    return result;
  }
}
