import { randomUUID } from 'node:crypto';
import type { Trx } from './jobs.rows';
import type { JobRunRecord, RunStatus } from './jobs.store';

/** The run events webhooks can subscribe to. */
export const RUN_EVENTS = ['run.started', 'run.completed', 'run.failed', 'run.completedWithErrors', 'run.aborted'] as const;
export type RunEventName = (typeof RUN_EVENTS)[number];

/** The status a run enters → its event. RUNNING is entered by a start, a run-errors run and every resume (a new attempt). */
const EVENT_OF_STATUS: Partial<Record<RunStatus, RunEventName>> = {
  RUNNING: 'run.started',
  COMPLETED: 'run.completed',
  COMPLETED_WITH_ERRORS: 'run.completedWithErrors',
  FAILED: 'run.failed',
  ABORTED: 'run.aborted',
};

/** The event of a move from `before` (undefined: a new run) to `after`; undefined for a move without one (pausing, pausing → paused). */
export function runEventOf(before: RunStatus | undefined, after: RunStatus): RunEventName | undefined {
  return before === after ? undefined : EVENT_OF_STATUS[after];
}

/** What an event says of its run, as it was when the event happened. */
export interface RunEventData {
  jobName: string;
  run: Pick<
    JobRunRecord,
    'id' | 'jobId' | 'runNumber' | 'kind' | 'status' | 'message' | 'attempt' | 'startTime' | 'endTime' | 'read' | 'written' | 'skipped' | 'failed' | 'removed' | 'discovered' | 'bytesWritten'
  > & { /** Absent from events recorded before dry runs (migration 0120). */ dryRun?: boolean };
}

/**
 * Writes the event of a run's move into the outbox, inside the transaction that records the move: one
 * `run_events` row and a pending delivery for each webhook subscribed to it. Nothing is written when no
 * webhook wants the event (a run's cost without webhooks is one indexed select per move).
 */
export async function recordRunEvent(trx: Trx, run: JobRunRecord, event: RunEventName, now: number): Promise<void> {
  const subscribers = await trx.selectFrom('webhook_subscriptions').select('webhook_id').where('event', '=', event).execute();
  if (subscribers.length === 0) return;
  const job = await trx.selectFrom('jobs').select('name').where('id', '=', run.jobId).executeTakeFirst();
  const { id, jobId, runNumber, kind, status, message, attempt, startTime, endTime, read, written, skipped, failed, removed, discovered, bytesWritten, dryRun } = run;
  const data: RunEventData = {
    jobName: job?.name ?? '',
    run: { id, jobId, runNumber, kind, status, message, attempt, startTime, endTime, read, written, skipped, failed, removed, discovered, bytesWritten, dryRun },
  };
  const row = await trx
    .insertInto('run_events')
    .values({ event_id: `evt_${randomUUID()}`, event, job_id: jobId, run_id: id, data: JSON.stringify(data), created_at: now })
    .returning('seq')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('webhook_deliveries')
    .values(
      subscribers.map((s) => ({
        webhook_id: s.webhook_id,
        event_seq: Number(row.seq),
        job_id: jobId,
        state: 'pending',
        next_attempt_at: now,
        claimed_by: null,
        created_at: now,
        ended_at: null,
      })),
    )
    .execute();
}
