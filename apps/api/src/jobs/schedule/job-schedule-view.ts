import type { JobSchedule } from '../../config/job-schedule.dto';
import { CronSchedule } from './cron-schedule';

/** The next start of a schedule after `now`, ISO 8601 UTC; null when disabled (or, for a definition stored before a check changed, unreadable). */
export function nextRunOf(schedule: JobSchedule, now: number): string | null {
  if (!schedule.enabled) return null;
  try {
    const next = CronSchedule.compiled(schedule.cron, schedule.timeZone).nextAfter(now);
    return next === undefined ? null : new Date(next).toISOString();
  } catch {
    return null;
  }
}
