import type { JobRecord, JobRunRecord, ScheduleState } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';
import type { JobDto } from '../config/job-definition.dto';
import { JOB_STATES, flagsOf, isActive, type JobStatus } from './job-states';
import { nextRunOf } from './schedule/job-schedule-view';
import type { JobStatusDto } from './job-status.dto';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** ISO 8601 local date-time without zone, to the second. */
export function localDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Compact elapsed time: 0.0s, 12.3s, 2m05s, 1h02m03s. */
export function compactDuration(ms: number): string {
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${pad(m)}m${pad(s)}s` : `${m}m${pad(s)}s`;
}

/** ISO 8601 duration in whole seconds: PT0S, PT45S, PT2M5S, PT1H2M3S. */
export function isoDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (total === 0) return 'PT0S';
  return `PT${h > 0 ? `${h}H` : ''}${m > 0 ? `${m}M` : ''}${s > 0 ? `${s}S` : ''}`;
}

/** Active time after which the throughput is trusted for an eta. */
const ETA_AFTER_MS = 5000;

/**
 * The status record. `listingComplete`: the run has no listing task left (JobStore.openListings), so its
 * `discovered` documents are all it will take; only then do `percent` and `eta` mean anything.
 */
export function statusRecord(job: Pick<JobRecord, 'id' | 'name' | 'group'>, run: JobRunRecord | undefined, now = Date.now(), listingComplete = false): JobStatusDto {
  const status: JobStatus = run ? run.status : 'NEW';
  const elapsed = run ? run.activeMs + (run.segmentStart !== null && isActive(run.status) ? Math.max(0, now - run.segmentStart) : 0) : 0;
  const finished = run ? run.written + run.skipped + run.failed : 0;
  const total = run?.discovered ?? 0;
  const complete = run !== undefined && listingComplete;
  const remaining = Math.max(0, total - finished);
  const etaKnown = complete && status === 'RUNNING' && elapsed >= ETA_AFTER_MS && finished > 0;
  return {
    jobId: job.id,
    jobName: job.name,
    jobGroup: job.group,
    jobRunId: run?.id ?? null,
    dryRun: run?.dryRun ?? false,
    status,
    statusName: JOB_STATES[status].name,
    startTime: run ? localDateTime(run.startTime) : null,
    endTime: run?.endTime ? localDateTime(run.endTime) : null,
    time: compactDuration(elapsed),
    perSec: elapsed > 0 ? (finished / (elapsed / 1000)).toFixed(2) : '0.00',
    read: run?.read ?? 0,
    written: run?.written ?? 0,
    skipped: run?.skipped ?? 0,
    failed: run?.failed ?? 0,
    removed: run?.removed ?? 0,
    total,
    bytesRead: run?.bytesRead ?? 0,
    bytesWritten: run?.bytesWritten ?? 0,
    listingComplete: complete,
    percent: complete ? (total === 0 ? 100 : Math.min(100, Math.floor((finished / total) * 1000) / 10)) : null,
    eta: etaKnown ? isoDuration(remaining / (finished / (elapsed / 1000))) : null,
    ...flagsOf(status),
  };
}

/** A definition as the API shows it; `now` and the schedule's `state` (JobSchedulesRepository.states) give nextRun and scheduleState. */
export function jobView(job: JobRecord<JobDefinition>, now: number, state?: ScheduleState): JobDto {
  const def = job.definition;
  const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    jobId: job.id,
    jobName: job.name,
    jobGroup: job.group,
    origin: job.origin,
    source: def.source,
    target: def.target,
    options: def.options,
    ...(def.schedule ? { schedule: def.schedule } : {}),
    nextRun: def.schedule ? nextRunOf(def.schedule, now) : null,
    scheduleState: def.schedule ? { lastDue: isoOrNull(state?.lastDue), lastSkipped: isoOrNull(state?.lastSkipped), queued: isoOrNull(state?.queued) } : null,
    createdDate: job.createdAt,
    modifiedDate: job.updatedAt,
  };
}
