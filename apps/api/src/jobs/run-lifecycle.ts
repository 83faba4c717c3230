import { Logger, type LoggerService } from '@nestjs/common';
import type { JobRunRecord, LockedRun, RunChange } from '@gateway/persistence';
import type { JobStatus } from './job-states';

const logger = new Logger('JobRuns');

/** One info line for a move of a run: the job, the run, its status and counters. */
export function logRun(log: Pick<LoggerService, 'log'>, message: string, run: JobRunRecord): void {
  const { jobId, id: runId, status, read, written, skipped, failed, removed, discovered } = run;
  log.log({ jobId, runId, status, read, written, skipped, failed, removed, total: discovered }, message);
}

const ENDED: Partial<Record<JobStatus, string>> = { FAILED: 'failed', COMPLETED: 'completed', COMPLETED_WITH_ERRORS: 'completed with errors' };

/** Closes the active time segment of a run. */
export function closeSegment(run: JobRunRecord, now: number): Pick<RunChange, 'activeMs' | 'segmentStart'> {
  return { activeMs: run.activeMs + (run.segmentStart !== null ? Math.max(0, now - run.segmentStart) : 0), segmentStart: null };
}

/** The reason of a run whose errors since its start (or last resume) reached options.maxErrors; undefined otherwise. */
export function limitReason(run: JobRunRecord, maxErrors: number): string | undefined {
  const failures = run.failed - run.failedBase;
  if (maxErrors <= 0 || failures < maxErrors) return undefined;
  return `${failures} documents failed; the job's limit is ${maxErrors} (options.maxErrors)`;
}

/**
 * A failing run: RUNNING, but bound to end FAILED — a task failed (its reason is
 * the run's message; a RUNNING run has no message otherwise) or the errors
 * reached options.maxErrors. It takes no new work; it turns FAILED in settle()
 * once no task of it is active, like PAUSING → PAUSED and ABORTING → ABORTED.
 *
 * Why not FAILED at once: FAILED allows resume, and a resume while the failed
 * attempt still has documents in flight would run two attempts of the same
 * tasks side by side (the old attempt's late results would land after the
 * resume: its task rows and its errors, which would count against the resumed
 * attempt's maxErrors). A FAILED run, like PAUSED and ABORTED, has nothing in
 * flight, so resume starts from a quiet run.
 */
export function failingReason(run: JobRunRecord, maxErrors: number): string | undefined {
  if (run.status !== 'RUNNING') return undefined;
  return run.message ?? limitReason(run, maxErrors);
}

/**
 * Moves a run on once its work allows it, under the run lock:
 * RUNNING → FAILED when it is failing (see failingReason) and no task is active;
 * RUNNING → COMPLETED(_WITH_ERRORS) when no task is left; PAUSING → PAUSED and
 * ABORTING → ABORTED when no task is active any more. Returns the new status.
 * `maxErrors` is the job's options.maxErrors (0 when the caller knows the limit cannot apply).
 */
export async function settle(locked: LockedRun, now = Date.now(), maxErrors = 0): Promise<JobStatus> {
  const before = locked.run.status;
  const next = await settleRun(locked, now, maxErrors);
  const ended = ENDED[next];
  if (ended && next !== before) logRun(logger, `Job ${locked.run.jobId} ${ended}: run ${locked.run.id}`, locked.run);
  return next;
}

async function settleRun(locked: LockedRun, now: number, maxErrors: number): Promise<JobStatus> {
  const run = locked.run;
  const status = run.status;
  if (status === 'RUNNING') {
    const failing = failingReason(run, maxErrors);
    if (failing !== undefined) {
      if ((await locked.countTasks(['active'])) > 0) {
        if (run.message === null) await locked.change({ message: failing });
        return status;
      }
      await locked.change({ status: 'FAILED', message: failing, endTime: now, ...closeSegment(run, now) });
      return 'FAILED';
    }
    if ((await locked.countTasks(['pending', 'active'])) > 0) return status;
    const next = run.failed > 0 ? 'COMPLETED_WITH_ERRORS' : 'COMPLETED';
    await locked.change({ status: next, endTime: now, ...closeSegment(run, now) });
    return next;
  }
  if (status === 'PAUSING' || status === 'ABORTING') {
    if ((await locked.countTasks(['active'])) > 0) return status;
    const next = status === 'PAUSING' ? 'PAUSED' : 'ABORTED';
    await locked.change({ status: next, cancel: false, ...(next === 'ABORTED' ? { endTime: now } : {}), ...closeSegment(run, now) });
    return next;
  }
  return status;
}
