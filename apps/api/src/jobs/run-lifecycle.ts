import type { JobRunRecord, JobsRepository } from '@gateway/persistence';
import type { JobStatus } from './job-states';

type Trx = Parameters<Parameters<JobsRepository['withRunLock']>[1]>[1];

/** Closes the active time segment of a run. */
export function closeSegment(run: JobRunRecord, now: number): { active_ms: number; segment_start: null } {
  return { active_ms: run.activeMs + (run.segmentStart !== null ? Math.max(0, now - run.segmentStart) : 0), segment_start: null };
}

/**
 * Moves a run on once its work allows it, under the run lock:
 * RUNNING → COMPLETED(_WITH_ERRORS) when no task is left, PAUSING → PAUSED and
 * ABORTING → ABORTED when no task is active any more. Returns the new status.
 */
export async function settle(repo: JobsRepository, trx: Trx, run: JobRunRecord, now = Date.now()): Promise<JobStatus> {
  const status = run.status as JobStatus;
  if (status === 'RUNNING') {
    if ((await repo.countTasks(trx, run.id, ['pending', 'active'])) > 0) return status;
    const next: JobStatus = run.failed > 0 ? 'COMPLETED_WITH_ERRORS' : 'COMPLETED';
    await repo.updateRun(trx, run.id, { status: next, end_time: now, ...closeSegment(run, now) });
    return next;
  }
  if (status === 'PAUSING' || status === 'ABORTING') {
    if ((await repo.countTasks(trx, run.id, ['active'])) > 0) return status;
    const next: JobStatus = status === 'PAUSING' ? 'PAUSED' : 'ABORTED';
    await repo.updateRun(trx, run.id, {
      status: next,
      cancel: 0,
      ...(next === 'ABORTED' ? { end_time: now } : {}),
      ...closeSegment(run, now),
    });
    return next;
  }
  return status;
}
