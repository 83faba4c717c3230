import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger } from '@nestjs/common';
import { ConflictError } from '@gateway/connector-api';
import { JobSchedulesRepository, JobsRepository, openDatabase, type Database, type ScheduledStartClaim } from '@gateway/persistence';
import { createTestDatabaseUrl, dropTestDatabase } from '../../../../../test/support/database';
import type { Clock } from '../../common/clock';
import type { GatewayConfig } from '../../config/gateway-config';
import { withDefaults, type JobDefinition } from '../../config/job-definition.dto';
import type { JobScheduleDto } from '../../config/job-schedule.dto';
import type { JobControlService } from '../job-control.service';
import { allows } from '../job-states';
import { JobScheduler, SCHEDULE_ACTOR } from './job-scheduler';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const MINUTE = 60_000;

/** A clock the test moves (the scheduler reads time only from it). */
class TestClock implements Pick<Clock, 'now'> {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
}

/**
 * The scheduler against a real database (SQLite, or PostgreSQL under GATEWAY_TEST_POSTGRES_URL) with an injected
 * clock. Its runs start through the store's createRun as JobControlService.start does (the state table refuses a
 * start while a run is active), without connectors or a queue: what is tested is which starts run, and when.
 */
describe('JobScheduler', () => {
  let dir: string;
  let databaseUrl: string | undefined;
  let database: Database;
  let jobs: JobsRepository<JobDefinition>;
  let starts: JobSchedulesRepository;
  let clock: TestClock;
  let info: jest.SpyInstance;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'job-scheduler-'));
    databaseUrl = await createTestDatabaseUrl();
    database = await openDatabase({ databaseUrl, sqliteFile: path.join(dir, 'gateway.sqlite') });
    jobs = new JobsRepository<JobDefinition>(database);
    starts = new JobSchedulesRepository(database);
    info = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    info.mockRestore();
    await database.close();
    if (databaseUrl) await dropTestDatabase(databaseUrl);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A node: its scheduler, starting runs as JobControlService.start does. */
  function node(nodeId = 'node-a'): JobScheduler {
    const control: Pick<JobControlService, 'start'> = {
      start: async (jobId: number, username: string, scheduled?: ScheduledStartClaim) => {
        await jobs.createRun(jobId, { kind: 'start', startedBy: username, now: clock.now(), ...(scheduled ? { scheduled } : {}) }, async (previous) => {
          if (previous && !allows(previous.status, 'restart')) throw new ConflictError(`busy: ${previous.status}`, 'JOB_STATE_CONFLICT');
          return [];
        });
        return undefined as never;
      },
    };
    const config = { nodeId, jobs: { auditRetentionDays: 30 } } as unknown as GatewayConfig;
    return new JobScheduler(jobs, starts, control, clock as unknown as Clock, config);
  }

  async function scheduledJob(schedule: JobScheduleDto, createdAt: string): Promise<number> {
    clock = new TestClock(at(createdAt));
    const def = withDefaults({ jobName: 'nightly', source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/out' }, schedule });
    return (await jobs.insertJob({ name: def.jobName, group: def.jobGroup, origin: 'api', definition: def, now: clock.now() }))!;
  }

  /** The job's runs: [run id, started by, start time]. */
  async function runs(jobId: number): Promise<Array<[string, string, string | undefined]>> {
    const job = await jobs.findJob(jobId);
    const found = [];
    for (let n = 1; n <= job!.runCount; n++) {
      const run = (await jobs.findRun(`${jobId}_${n}`))!;
      found.push([run.id, run.startedBy, iso(run.startTime)] as [string, string, string | undefined]);
    }
    return found;
  }

  const finish = (runId: string) => jobs.transition(runId, (locked) => locked.change({ status: 'COMPLETED', endTime: clock.now() }));

  /** Ticks `scheduler` every `step` ms from the clock's time to `until`, finishing each run as soon as it started. */
  async function tickThrough(scheduler: JobScheduler, jobId: number, until: string, step = MINUTE, finishRuns = true): Promise<void> {
    for (; clock.t <= at(until); clock.t += step) {
      await scheduler.tick();
      const latest = await jobs.latestRun(jobId);
      if (finishRuns && latest?.status === 'RUNNING') await finish(latest.id);
    }
  }

  it('starts a job at each due time, once, as the scheduler; nothing before', async () => {
    const jobId = await scheduledJob({ cron: '0 3 * * *' }, '2026-03-01T02:58:00Z');
    const a = node();
    await tickThrough(a, jobId, '2026-03-01T02:59:59Z', 1000);
    expect(await runs(jobId)).toEqual([]);
    clock.t = at('2026-03-01T03:00:00.400Z');
    await a.tick();
    await a.tick();
    expect(await runs(jobId)).toEqual([[`${jobId}_1`, SCHEDULE_ACTOR, '2026-03-01T03:00:00.400Z']]);
    await finish(`${jobId}_1`);
    await tickThrough(a, jobId, '2026-03-02T02:59:00Z', 10 * MINUTE);
    clock.t = at('2026-03-02T03:00:01Z');
    await a.tick();
    expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-01T03:00:00.400Z', '2026-03-02T03:00:01.000Z']);
    expect((await starts.states([jobId])).get(jobId)).toEqual({ lastDue: at('2026-03-02T03:00:00Z') });
  });

  it('runs each due start once when several nodes tick at the same moment', async () => {
    const jobId = await scheduledJob({ cron: '*/5 * * * *' }, '2026-03-01T09:59:00Z');
    const nodes = [node('a'), node('b'), node('c')];
    for (let minute = 1; minute <= 16; minute++) {
      clock.t = at('2026-03-01T09:59:00.500Z') + minute * MINUTE;
      await Promise.all(nodes.map((n) => n.tick()));
      const latest = await jobs.latestRun(jobId);
      if (latest?.status === 'RUNNING') await finish(latest.id);
    }
    expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-01T10:00:00.500Z', '2026-03-01T10:05:00.500Z', '2026-03-01T10:10:00.500Z', '2026-03-01T10:15:00.500Z']);
    expect((await starts.starts(jobId)).map((s) => [iso(s.dueAt), s.state, s.runId])).toEqual([
      ['2026-03-01T10:15:00.000Z', 'started', `${jobId}_4`],
      ['2026-03-01T10:10:00.000Z', 'started', `${jobId}_3`],
      ['2026-03-01T10:05:00.000Z', 'started', `${jobId}_2`],
      ['2026-03-01T10:00:00.000Z', 'started', `${jobId}_1`],
    ]);
  });

  describe('daylight-saving time (Europe/Paris)', () => {
    it('does not run 02:30 on the night the clocks skip from 02:00 to 03:00', async () => {
      const jobId = await scheduledJob({ cron: '30 2 * * *', timeZone: 'Europe/Paris' }, '2026-03-28T00:00:00Z');
      await tickThrough(node(), jobId, '2026-03-30T03:00:00Z', 5 * MINUTE);
      // 28 March 02:30 CET, then 30 March 02:30 CEST; nothing on the 29th
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    });

    it('runs 02:30 once on the night the clocks go back from 03:00 to 02:00', async () => {
      const jobId = await scheduledJob({ cron: '30 2 * * *', timeZone: 'Europe/Paris' }, '2026-10-24T22:00:00Z');
      await tickThrough(node(), jobId, '2026-10-25T04:00:00Z', MINUTE);
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-10-25T00:30:00.000Z']); // 02:30 CEST, not again at 02:30 CET
    });
  });

  describe('overlap', () => {
    it('skip (default): a start due while the run is active is recorded as skipped and logged; the next one runs', async () => {
      const jobId = await scheduledJob({ cron: '* * * * *' }, '2026-03-01T10:00:30Z');
      const a = node();
      await tickThrough(a, jobId, '2026-03-01T10:03:40Z', MINUTE, false); // 10:01 starts; 10:02 and 10:03 find it running
      expect((await runs(jobId)).map((r) => r[0])).toEqual([`${jobId}_1`]);
      expect((await starts.states([jobId])).get(jobId)).toEqual({ lastDue: at('2026-03-01T10:03:00Z'), lastSkipped: at('2026-03-01T10:03:00Z') });
      expect(info).toHaveBeenCalledWith(
        expect.objectContaining({ jobId, dueAt: '2026-03-01T10:02:00.000Z', runId: `${jobId}_1` }),
        `Job ${jobId}: the start due at 2026-03-01T10:02:00.000Z is skipped: run ${jobId}_1 is RUNNING`,
      );
      await finish(`${jobId}_1`);
      await tickThrough(a, jobId, '2026-03-01T10:04:40Z', MINUTE, false);
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-01T10:01:30.000Z', '2026-03-01T10:04:30.000Z']);
    });

    it('queue: one start waits for the active run and starts when it ends; a second due meanwhile is skipped', async () => {
      const jobId = await scheduledJob({ cron: '* * * * *', overlap: 'queue' }, '2026-03-01T10:00:30Z');
      const a = node();
      await tickThrough(a, jobId, '2026-03-01T10:03:40Z', MINUTE, false);
      expect((await starts.starts(jobId)).map((s) => [iso(s.dueAt), s.state])).toEqual([
        ['2026-03-01T10:03:00.000Z', 'skipped'],
        ['2026-03-01T10:02:00.000Z', 'queued'],
        ['2026-03-01T10:01:00.000Z', 'started'],
      ]);
      expect((await starts.states([jobId])).get(jobId)?.queued).toBe(at('2026-03-01T10:02:00Z'));
      clock.t = at('2026-03-01T10:03:50Z');
      await finish(`${jobId}_1`);
      await Promise.all([a.tick(), node('b').tick()]);
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-01T10:01:30.000Z', '2026-03-01T10:03:50.000Z']);
      expect((await starts.starts(jobId, 3)).map((s) => [iso(s.dueAt), s.state, s.runId])[1]).toEqual(['2026-03-01T10:02:00.000Z', 'started', `${jobId}_2`]);
      expect((await starts.states([jobId])).get(jobId)?.queued).toBeUndefined();
    });
  });

  describe('missed starts (no gateway running)', () => {
    it('skip (default): records the latest as missed and runs none; the schedule goes on', async () => {
      const jobId = await scheduledJob({ cron: '0 3 * * *' }, '2026-03-01T12:00:00Z');
      clock.t = at('2026-03-05T10:00:00Z'); // the gateway was down from the 2nd to the 5th
      const a = node();
      await a.tick();
      expect(await runs(jobId)).toEqual([]);
      expect((await starts.starts(jobId)).map((s) => [iso(s.dueAt), s.state])).toEqual([['2026-03-05T03:00:00.000Z', 'missed']]);
      expect(info).toHaveBeenCalledWith(
        expect.objectContaining({ jobId, from: '2026-03-02T03:00:00.000Z', to: '2026-03-05T03:00:00.000Z' }),
        expect.stringContaining('fell due while no gateway was running (missed: skip)'),
      );
      await tickThrough(a, jobId, '2026-03-06T03:00:30Z', 30 * MINUTE);
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-06T03:00:00.000Z']);
    });

    it('runOnce: runs one start for all of them, once across nodes', async () => {
      const jobId = await scheduledJob({ cron: '0 3 * * *', missed: 'runOnce' }, '2026-03-01T12:00:00Z');
      clock.t = at('2026-03-05T10:00:00Z');
      await Promise.all([node('a').tick(), node('b').tick()]);
      await node('a').tick();
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-05T10:00:00.000Z']);
      expect((await starts.starts(jobId)).map((s) => [iso(s.dueAt), s.state])).toEqual([['2026-03-05T03:00:00.000Z', 'started']]);
    });

    it('a start handled less than a minute late is not missed (a node restarting while another ticks)', async () => {
      const jobId = await scheduledJob({ cron: '0 3 * * *' }, '2026-03-01T12:00:00Z');
      clock.t = at('2026-03-02T03:00:45Z');
      await node().tick();
      expect((await runs(jobId)).map((r) => r[2])).toEqual(['2026-03-02T03:00:45.000Z']);
    });
  });

  it('a disabled schedule starts nothing', async () => {
    const jobId = await scheduledJob({ cron: '* * * * *', enabled: false }, '2026-03-01T10:00:30Z');
    await tickThrough(node(), jobId, '2026-03-01T10:05:00Z');
    expect(await runs(jobId)).toEqual([]);
  });
});
