import * as path from 'node:path';
import { Clock } from '../../apps/api/src/common/clock';
import { adminAuth } from '../support/gateway';
import { MODE, defineJob, jobBody, listTree, startJobsGateway, status, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

const MINUTE = 60_000;

/** Issue 35, part 3: a job definition's schedule starts the job on its own. */
describe(`Job schedules, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway({
      extraYaml: `jobs:
  - jobName: sched-config
    source: {connectorId: src, folderPath: /in}
    target: {connectorId: dst, folderPath: /config-out}
    schedule: {cron: "15 4 * * 1-5", timeZone: America/New_York, overlap: queue}
`,
    });
  });
  afterAll(() => gw.close());

  const post = (body: unknown) => gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body as object);
  const errorOf = (res: { body: unknown }) => JSON.stringify(res.body);
  const listed = async (jobId: number) =>
    ((await gw.http().get(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).expect(200)).body.results as Array<Record<string, any>>).find((j) => j.jobId === jobId)!;

  it('refuses an invalid expression, zone, rule or unknown key with a 400 naming it', async () => {
    const refused = async (schedule: unknown) => errorOf(await post({ ...jobBody('sched-bad'), schedule }).expect(400));
    expect(await refused({ cron: '0 0 3 * * *' })).toContain("Invalid parameter 'schedule.cron': '0 0 3 * * *' has 6 field(s); a cron expression has 5");
    expect(await refused({ cron: '0 25 * * *' })).toContain("Invalid parameter 'schedule.cron'");
    expect(await refused({ cron: '0 3 * * *', timeZone: 'Mars/Olympus' })).toContain("Invalid parameter 'schedule.timeZone': 'Mars/Olympus' is not an IANA time zone");
    expect(await refused({ cron: '0 3 * * *', overlap: 'parallel' })).toContain('overlap must be one of skip, queue');
    expect(await refused({ cron: '0 3 * * *', missed: 'all' })).toContain('missed must be one of skip, runOnce');
    expect(await refused({ cron: '0 3 * * *', timezone: 'UTC' })).toContain("Unknown key 'schedule.timezone' in the request body");
    expect(await refused({ timeZone: 'UTC' })).toContain('cron is required');
  });

  it('shows each job\'s nextRun: the next start in its zone, null when disabled or unscheduled', async () => {
    const paris = await defineJob(gw, { ...jobBody('sched-paris'), schedule: { cron: '0 3 * * *', timeZone: 'Europe/Paris' } } as never);
    const off = await defineJob(gw, { ...jobBody('sched-off'), schedule: { cron: '0 3 * * *', enabled: false } } as never);
    const plain = await defineJob(gw, jobBody('sched-none'));
    const now = gw.app.get(Clock).now();
    const job = await listed(paris);
    expect(job.schedule).toEqual({ cron: '0 3 * * *', timeZone: 'Europe/Paris', enabled: true, overlap: 'skip', missed: 'skip' });
    const next = Date.parse(job.nextRun);
    expect(job.nextRun).toBe(new Date(next).toISOString());
    expect(next).toBeGreaterThan(now);
    expect(next - now).toBeLessThanOrEqual(24 * 60 * MINUTE);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next)).toBe('03:00');
    expect(job.scheduleState).toEqual({ lastDue: null, lastSkipped: null, queued: null });
    expect(await listed(off)).toMatchObject({ nextRun: null, schedule: { enabled: false } });
    expect(await listed(plain)).toMatchObject({ nextRun: null, scheduleState: null });
    expect((await listed(plain)).schedule).toBeUndefined();
  });

  it('takes a schedule from the configuration file too', async () => {
    const all = (await gw.http().get(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).expect(200)).body.results as Array<Record<string, any>>;
    const job = all.find((j) => j.jobName === 'sched-config')!;
    expect(job).toMatchObject({ origin: 'config', schedule: { cron: '15 4 * * 1-5', timeZone: 'America/New_York', enabled: true, overlap: 'queue', missed: 'skip' } });
    const local = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(Date.parse(job.nextRun));
    expect(local).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 04:15$/);
  });

  it('runs a scheduled job on its own when its start falls due, once', async () => {
    writeTree(gw.srcRoot, { 'sched/a.txt': 'a', 'sched/b.txt': 'b' });
    const jobId = await defineJob(gw, {
      ...jobBody('sched-run', { source: { connectorId: 'src', folderPath: '/sched' }, target: { connectorId: 'dst', folderPath: '/sched-out' } }),
      schedule: { cron: '* * * * *' },
    } as never);
    const due = Date.parse((await listed(jobId)).nextRun);
    // The gateway's clock (injected) is moved to 2 s before the start is due instead of waiting for the minute.
    const clock = gw.app.get(Clock);
    const ahead = due - 2000 - clock.now();
    if (ahead > 0) clock.advance(ahead);
    expect((await status(gw, jobId)).status).toBe('NEW');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ jobRunId: `${jobId}_1`, status: 'COMPLETED', read: 2, written: 2 });
    expect(listTree(path.join(gw.dstRoot, 'sched-out'))).toEqual({ 'a.txt': 'a', 'b.txt': 'b' });
    const job = await listed(jobId);
    expect(job.scheduleState).toEqual({ lastDue: new Date(due).toISOString(), lastSkipped: null, queued: null });
    expect(Date.parse(job.nextRun)).toBe(due + MINUTE);
    // Disabled before its next start: nothing more runs.
    const body = { ...jobBody('sched-run', { source: { connectorId: 'src', folderPath: '/sched' }, target: { connectorId: 'dst', folderPath: '/sched-out' } }), schedule: { cron: '* * * * *', enabled: false } };
    await gw.http().put(`${gw.api}/admin/jobs/${jobId}`).set('Authorization', adminAuth()).send(body).expect(200);
    clock.advance(Math.max(0, due + MINUTE + 3000 - clock.now()));
    await new Promise((r) => setTimeout(r, 2500)); // two ticks past the next due time
    expect((await status(gw, jobId)).jobRunId).toBe(`${jobId}_1`);
    expect((await listed(jobId)).nextRun).toBeNull();
  });
});
