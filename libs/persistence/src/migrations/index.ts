import type { Migration } from 'kysely';
import * as m0001 from './0001-users';
import * as m0002 from './0002-user-files-and-links';
import * as m0010 from './0010-jobs';
import * as m0030 from './0030-user-file-leases';
import * as m0033 from './0033-user-groups';
import * as m0040 from './0040-job-index-state';
import * as m0050 from './0050-job-run-docs-failed-index';
import * as m0060 from './0060-job-run-progress';
import * as m0065 from './0065-job-run-bytes-read';
import * as m0070 from './0070-job-schedule-starts';
import * as m0080 from './0080-webhooks';
import * as m0090 from './0090-access-audit';
import * as m0110 from './0110-job-audit-checksums';
import * as m0120 from './0120-job-dry-runs';
import * as m0160 from './0160-job-sync-state';
import * as m0170 from './0170-job-sync-feed';
import * as m0180 from './0180-job-reads-with-outcomes';

/**
 * Every migration, in order. Written with Kysely's schema builder only, so the
 * same list runs unchanged on SQLite and PostgreSQL. Later features append here.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-users': m0001,
  '0002-user-files-and-links': m0002,
  '0010-jobs': m0010,
  '0030-user-file-leases': m0030,
  '0033-user-groups': m0033,
  '0040-job-index-state': m0040,
  '0050-job-run-docs-failed-index': m0050,
  '0060-job-run-progress': m0060,
  '0065-job-run-bytes-read': m0065,
  '0070-job-schedule-starts': m0070,
  '0080-webhooks': m0080,
  '0090-access-audit': m0090,
  '0110-job-audit-checksums': m0110,
  '0120-job-dry-runs': m0120,
  '0160-job-sync-state': m0160,
  '0170-job-sync-feed': m0170,
  '0180-job-reads-with-outcomes': m0180,
};
