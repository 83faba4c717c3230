import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConnectorRegistry } from '../../apps/api/src/connectors/connector-registry.service';
import { JOB_STATUSES } from '../../apps/api/src/jobs/job-states';
import { adminAuth, basic } from '../support/gateway';
import {
  MODE,
  call,
  defineJob,
  flags,
  jobBody,
  listTree,
  sleep,
  startJobsGateway,
  status,
  waitStatus,
  writeTree,
  type JobsGateway,
} from './jobs-helpers';

/** The flags each status must show (spec 4.5), written out rather than derived from the implementation's own table. */
const EXPECTED_FLAGS = {
  RUNNING: ['canPauseJob', 'canAbortJob', 'canKillJob'],
  PAUSING: ['canAbortJob', 'canKillJob'],
  PAUSED: ['canAbortJob', 'canResumeJob'],
  ABORTING: ['canKillJob'],
  ABORTED: ['canStartJob', 'canRestartJob', 'canResumeJob'],
  FAILED: ['canStartJob', 'canRestartJob', 'canResumeJob'],
  COMPLETED: ['canStartJob', 'canRestartJob'],
  COMPLETED_WITH_ERRORS: ['canStartJob', 'canRestartJob'],
} as const;

function expectedFlags(s: keyof typeof EXPECTED_FLAGS): string[] {
  return [...EXPECTED_FLAGS[s]];
}

/** Uploads staged by the filesystem connector (its metadata folder's tmp/) and not yet renamed into place. */
function stagedFiles(root: string): string[] {
  const tmp = path.join(root, '.gateway', 'tmp');
  return fs.existsSync(tmp) ? fs.readdirSync(tmp) : [];
}

function tree(n: number, prefix = 'in'): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`${prefix}/${i < n / 2 ? '' : 'sub/'}doc-${String(i).padStart(3, '0')}.txt`] = `content of document ${i}\n`.repeat(i + 1);
  return files;
}

describe(`Job service (spec 4.5, 2.10) through HTTP, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-jobs-'));
    // 'plain': a filesystem connector nothing wraps (gw.src's openContent is wrapped to hold and fail
    // content), so jobs from it to dst copy directly, on the filesystem connector's copy thread.
    gw = await startJobsGateway({
      root,
      extraYaml: `  - {id: plain, typeId: filesystem, params: {root: ${path.join(root, 'plain')}}}
jobs:
  - jobName: from-config
    jobGroup: nightly
    source: {connectorId: src, folderPath: /cfg}
    target: {connectorId: dst, folderPath: /cfg-out}
    options: {onExisting: version}
users:
  - {username: reader, password: reader-password-1, roles: [user]}
`,
    });
  });
  afterAll(() => gw.close());
  afterEach(() => {
    gw.src.open();
    gw.src.failing = undefined;
  });

  describe('definitions (admin API)', () => {
    it('creates, reads, lists, replaces and deletes a job; the answer carries the integer jobId', async () => {
      const created = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(jobBody('crud', { jobGroup: 'g1' })).expect(201);
      const job = created.body.results;
      expect(Number.isInteger(job.jobId)).toBe(true);
      expect(job).toMatchObject({
        jobName: 'crud',
        jobGroup: 'g1',
        origin: 'api',
        source: { connectorId: 'src', folderPath: '/in', recursive: true },
        target: { connectorId: 'dst', folderPath: '/out' },
        options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [] },
      });
      const one = await gw.http().get(`${gw.api}/admin/jobs/${job.jobId}`).set('Authorization', adminAuth()).expect(200);
      expect(one.body.results).toEqual(job);
      const list = await gw.http().get(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).expect(200);
      expect(list.body.results.map((j: { jobName: string }) => j.jobName)).toEqual(expect.arrayContaining(['crud', 'from-config']));
      const put = await gw
        .http()
        .put(`${gw.api}/admin/jobs/${job.jobId}`)
        .set('Authorization', adminAuth())
        .send(jobBody('crud-2', { options: { onExisting: 'overwrite', maxErrors: 5 } }))
        .expect(200);
      expect(put.body.results).toMatchObject({ jobId: job.jobId, jobName: 'crud-2', jobGroup: 'default', options: { onExisting: 'overwrite', maxErrors: 5 } });
      const del = await gw.http().delete(`${gw.api}/admin/jobs/${job.jobId}`).set('Authorization', adminAuth()).expect(200);
      expect(del.body.results.jobName).toBe('crud-2');
      await gw.http().get(`${gw.api}/admin/jobs/${job.jobId}`).set('Authorization', adminAuth()).expect(404);
    });

    it.each([
      ['an unknown source connector', { source: { connectorId: 'nope', folderPath: '/in' } }, 'source.connectorId'],
      ['a relative folder path', { target: { connectorId: 'dst', folderPath: 'out' } }, 'target.folderPath'],
      ['a bad onExisting', { options: { onExisting: 'merge' } }, 'options.onExisting'],
      ['a negative maxErrors', { options: { maxErrors: -1 } }, 'options.maxErrors'],
    ])('answers 400 naming the parameter for %s', async (_label, extra, parameter) => {
      const res = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(jobBody('bad', extra)).expect(400);
      expect(res.body).toMatchObject({ success: false, error: { parameter } });
    });

    it('answers 409 for a taken name, 403 to a non-admin, 400 for a non-integer id and 404 for an unknown one', async () => {
      await defineJob(gw, jobBody('taken'));
      const dup = await gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(jobBody('taken')).expect(409);
      expect(dup.body.error.code).toBe('JOB_NAME_TAKEN');
      await gw.http().get(`${gw.api}/admin/jobs`).set('Authorization', basic('reader', 'reader-password-1')).expect(403);
      const bad = await gw.http().get(`${gw.api}/admin/jobs/abc`).set('Authorization', adminAuth()).expect(400);
      expect(bad.body.error.parameter).toBe('jobId');
      const missing = await gw.http().get(`${gw.api}/admin/jobs/999999`).set('Authorization', adminAuth()).expect(404);
      expect(missing.body.error).toMatchObject({ code: 'JOB_NOT_FOUND', resource: 'job', id: '999999' });
    });

    it('lists jobs of the configuration file as read-only (409 on PUT and DELETE)', async () => {
      const list = await gw.http().get(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).expect(200);
      const cfg = list.body.results.find((j: { jobName: string }) => j.jobName === 'from-config');
      expect(cfg).toMatchObject({ origin: 'config', jobGroup: 'nightly', options: { onExisting: 'version' } });
      const put = await gw.http().put(`${gw.api}/admin/jobs/${cfg.jobId}`).set('Authorization', adminAuth()).send(jobBody('x')).expect(409);
      expect(put.body.error.code).toBe('JOB_FROM_CONFIG');
      await gw.http().delete(`${gw.api}/admin/jobs/${cfg.jobId}`).set('Authorization', adminAuth()).expect(409);
    });
  });

  describe('status records', () => {
    it('shows a job that never ran as NEW with only start allowed, and filters the list by jobGroup', async () => {
      const jobId = await defineJob(gw, jobBody('never-run', { jobGroup: 'lonely' }));
      const res = await gw.http().get(`${gw.api}/job/service/${jobId}/status`).set('Authorization', basic('reader', 'reader-password-1')).expect(200);
      expect(res.body).toEqual({
        success: true,
        message: null,
        results: {
          jobId,
          jobName: 'never-run',
          jobGroup: 'lonely',
          jobRunId: null,
          dryRun: false,
          status: 'NEW',
          statusName: 'Not run yet',
          startTime: null,
          endTime: null,
          time: '0.0s',
          perSec: '0.00',
          read: 0,
          written: 0,
          skipped: 0,
          failed: 0,
          removed: 0,
          total: 0,
          bytesRead: 0,
          bytesWritten: 0,
          listingComplete: false,
          percent: null,
          eta: null,
          canStartJob: true,
          canRestartJob: false,
          canPauseJob: false,
          canAbortJob: false,
          canResumeJob: false,
          canKillJob: false,
        },
      });
      const list = await gw.http().get(`${gw.api}/job/service/statuslist?jobGroup=lonely`).set('Authorization', adminAuth()).expect(200);
      expect(list.body.success).toBe(true);
      expect(list.body.message).toBeNull();
      expect(list.body.results.map((r: { jobName: string }) => r.jobName)).toEqual(['never-run']);
      const all = await gw.http().get(`${gw.api}/job/service/statuslist`).set('Authorization', adminAuth()).expect(200);
      expect(all.body.results.length).toBeGreaterThan(1);
      for (const action of ['pause', 'abort', 'resume', 'kill', 'runerrors']) {
        const r = await call(gw, jobId, action, 409);
        expect(r.error).toMatchObject({ code: 'JOB_STATE_CONFLICT', status: 'NEW' });
      }
    });

    it('gives clear errors for non-integer and unknown job ids, and bad record queries', async () => {
      for (const action of ['status', 'start', 'abort', 'resume', 'runerrors', 'recordstatus?docId=x&recordType=p']) {
        const bad = await gw.http().get(`${gw.api}/job/service/1.5/${action}`).set('Authorization', adminAuth()).expect(400);
        expect(bad.body.error).toMatchObject({ code: 'INVALID_PARAMETER', parameter: 'jobid' });
        const unknown = await gw.http().get(`${gw.api}/job/service/424242/${action}`).set('Authorization', adminAuth()).expect(404);
        expect(unknown.body.error).toMatchObject({ resource: 'job', id: '424242' });
      }
      const jobId = await defineJob(gw, jobBody('records'));
      const type = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus?docId=x&recordType=q`).set('Authorization', adminAuth()).expect(400);
      expect(type.body.error.parameter).toBe('recordType');
      const noDoc = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus?recordType=p`).set('Authorization', adminAuth()).expect(400);
      expect(noDoc.body.error.parameter).toBe('docId');
      const none = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus?docId=x&recordType=p`).set('Authorization', adminAuth()).expect(404);
      expect(none.body.error.resource).toBe('auditRecord');
      // control needs the admin role; status does not
      await gw.http().get(`${gw.api}/job/service/${jobId}/start`).set('Authorization', basic('reader', 'reader-password-1')).expect(403);
    });
  });

  describe('runs', () => {
    it('copies a folder tree (streamed, recursive), then a second start skips every document as duplicate', async () => {
      const files = tree(20, 'copy');
      writeTree(gw.srcRoot, files);
      const jobId = await defineJob(gw, jobBody('copy', { source: { connectorId: 'src', folderPath: '/copy' }, target: { connectorId: 'dst', folderPath: '/copy-out/deeper' } }));
      const started = await call(gw, jobId, 'start');
      expect(started.message).toMatch(new RegExp(`^Job ${jobId} started: run ${jobId}_1$`));
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', statusName: 'Completed', jobRunId: `${jobId}_1`, read: 20, written: 20, skipped: 0, failed: 0, removed: 0 });
      expect(flags(done)).toEqual(expectedFlags('COMPLETED'));
      expect(done.startTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
      expect(done.endTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
      expect(done.time).toMatch(/^(\d+\.\ds|\d+m\d\ds|\d+h\d\dm\d\ds)$/);
      expect(done.perSec).toMatch(/^\d+\.\d\d$/);
      const expected = Object.fromEntries(Object.entries(files).map(([k, v]) => [k.replace(/^copy\//, ''), v]));
      expect(listTree(path.join(gw.dstRoot, 'copy-out/deeper'))).toEqual(expected);

      // p and r audit records of one document
      const docId = (await gw.http().get(`${gw.api}/repo/src/idbypath?folderPath=/copy/sub&fileName=doc-019.txt`).set('Authorization', adminAuth()).expect(200)).body.results.id;
      const p = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId, recordType: 'p' }).set('Authorization', adminAuth()).expect(200);
      expect(p.body).toMatchObject({ success: true, message: null });
      expect(p.body.results).toMatch(new RegExp(`run ${jobId}_1 PROCESSED source=${docId} path=/copy/sub/doc-019.txt target=`));
      const r = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId, recordType: 'r' }).set('Authorization', adminAuth()).expect(200);
      expect(r.body.results).toMatch(/ READ source=/);

      await call(gw, jobId, 'start');
      const again = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(again).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 20, written: 0, skipped: 20, failed: 0 });
      const d = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId, recordType: 'd' }).set('Authorization', adminAuth()).expect(200);
      expect(d.body.results).toMatch(new RegExp(`run ${jobId}_2 DUPLICATE .*: Already exists at the target`));
      expect(listTree(path.join(gw.dstRoot, 'copy-out/deeper'))).toEqual(expected);
    });

    it('copies a tree between two filesystem connectors directly, with the same records, audit and counters as a streamed copy', async () => {
      const plainRoot = path.join(gw.root, 'plain');
      const files: Record<string, string | Buffer> = { ...tree(30, 'direct') };
      // Over the direct copy's 1 MiB: streamed, in the same run.
      files['direct/sub/large.bin'] = Buffer.alloc(1024 * 1024 + 1, 7);
      writeTree(plainRoot, files);
      writeTree(gw.dstRoot, { 'direct-out/doc-000.txt': 'already there' });
      const jobId = await defineJob(gw, jobBody('direct', { source: { connectorId: 'plain', folderPath: '/direct' }, target: { connectorId: 'dst', folderPath: '/direct-out' } }));
      await call(gw, jobId, 'start');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', read: 31, written: 30, skipped: 1, failed: 0 });
      const copied = listTree(path.join(gw.dstRoot, 'direct-out'));
      expect(Object.keys(copied).sort()).toEqual(Object.keys(files).map((k) => k.replace(/^direct\//, '')).sort());
      expect(copied['doc-000.txt']).toBe('already there');
      for (const [rel, content] of Object.entries(files)) {
        if (rel !== 'direct/doc-000.txt') expect(fs.readFileSync(path.join(gw.dstRoot, rel.replace(/^direct\//, 'direct-out/')))).toEqual(Buffer.from(content));
      }
      expect(stagedFiles(gw.dstRoot)).toEqual([]);
      // Each copy has its first record: the run's user as creator, one version.
      const id = (await gw.http().get(`${gw.api}/repo/dst/idbypath?folderPath=/direct-out/sub&fileName=doc-029.txt`).set('Authorization', adminAuth()).expect(200)).body.results.id;
      const item = await gw.app.get(ConnectorRegistry).get('dst').getItem(id);
      expect(item).toMatchObject({ createdBy: 'admin', versionCount: 1, size: files['direct/sub/doc-029.txt'].length });
      const sourceId = (await gw.http().get(`${gw.api}/repo/plain/idbypath?folderPath=/direct/sub&fileName=doc-029.txt`).set('Authorization', adminAuth()).expect(200)).body.results.id;
      const p = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId: sourceId, recordType: 'p' }).set('Authorization', adminAuth()).expect(200);
      expect(p.body.results).toMatch(new RegExp(`run ${jobId}_1 PROCESSED source=${sourceId} path=/direct/sub/doc-029.txt target=${id}`));

      await call(gw, jobId, 'start');
      expect(await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', read: 31, written: 0, skipped: 31 });
    });

    it('adds versions, overwrites, excludes and moves as the options say', async () => {
      writeTree(gw.srcRoot, { 'opt/a.txt': 'A2', 'opt/b.tmp': 'temp', 'opt/c.txt': 'C2' });
      writeTree(gw.dstRoot, { 'opt-out/a.txt': 'A1', 'opt-out/c.txt': 'C1' });
      const versioned = await defineJob(
        gw,
        jobBody('versions', { source: { connectorId: 'src', folderPath: '/opt' }, target: { connectorId: 'dst', folderPath: '/opt-out' }, options: { onExisting: 'version', exclude: ['*.tmp'] } }),
      );
      await call(gw, versioned, 'start');
      expect(await waitStatus(gw, versioned, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', read: 3, written: 2, skipped: 1 });
      expect(listTree(path.join(gw.dstRoot, 'opt-out'))).toEqual({ 'a.txt': 'A2', 'c.txt': 'C2' });
      const aId = (await gw.http().get(`${gw.api}/repo/dst/idbypath?folderPath=/opt-out&fileName=a.txt`).set('Authorization', adminAuth())).body.results.id;
      const versions = await gw.http().get(`${gw.api}/repo/dst/listversions?id=${encodeURIComponent(aId)}`).set('Authorization', adminAuth()).expect(200);
      expect(versions.body.results).toHaveLength(2);
      const tmpId = (await gw.http().get(`${gw.api}/repo/src/idbypath?folderPath=/opt&fileName=b.tmp`).set('Authorization', adminAuth())).body.results.id;
      const s = await gw.http().get(`${gw.api}/job/service/${versioned}/recordstatus`).query({ docId: tmpId, recordType: 's' }).set('Authorization', adminAuth()).expect(200);
      expect(s.body.results).toMatch(/SKIPPED .*Excluded by pattern/);

      writeTree(gw.srcRoot, { 'mv/a.txt': 'A3' });
      const moved = await defineJob(
        gw,
        jobBody('move', { source: { connectorId: 'src', folderPath: '/mv' }, target: { connectorId: 'dst', folderPath: '/opt-out' }, options: { onExisting: 'overwrite', removeSource: true } }),
      );
      await call(gw, moved, 'start');
      expect(await waitStatus(gw, moved, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED')).toMatchObject({ status: 'COMPLETED', read: 1, written: 1, removed: 1 });
      expect(listTree(path.join(gw.dstRoot, 'opt-out'))['a.txt']).toBe('A3');
      const after = await gw.http().get(`${gw.api}/repo/dst/listversions?id=${encodeURIComponent(aId)}`).set('Authorization', adminAuth()).expect(200);
      expect(after.body.results).toHaveLength(1);
      expect(fs.existsSync(path.join(gw.srcRoot, 'mv/a.txt'))).toBe(false);
    });

    it('fails a run whose source folder is missing, with the reason as message', async () => {
      const jobId = await defineJob(gw, jobBody('no-source', { source: { connectorId: 'src', folderPath: '/does/not/exist' } }));
      await call(gw, jobId, 'start');
      const failed = await waitStatus(gw, jobId, 'FAILED', 'COMPLETED');
      expect(failed.status).toBe('FAILED');
      expect(flags(failed)).toEqual(expectedFlags('FAILED'));
      const res = await call(gw, jobId, 'status');
      expect(res.message).toMatch(/Source folder '\/does\/not\/exist' cannot be listed/);
    });
  });

  describe('walking the state table', () => {
    it('RUNNING → start 409 → pause → PAUSING → PAUSED → resume → RUNNING → COMPLETED, exact counters', async () => {
      writeTree(gw.srcRoot, tree(10, 'walk1'));
      const jobId = await defineJob(gw, jobBody('walk-pause', { source: { connectorId: 'src', folderPath: '/walk1' }, target: { connectorId: 'dst', folderPath: '/walk1' } }));
      const opened = gw.src.opened;
      gw.src.close();
      await call(gw, jobId, 'start');
      await gw.src.waitOpened(opened + 1);
      const running = await status(gw, jobId);
      expect(running.status).toBe('RUNNING');
      expect(running.endTime).toBeNull();
      expect(flags(running)).toEqual(expectedFlags('RUNNING'));
      for (const action of ['start', 'resume', 'runerrors']) expect((await call(gw, jobId, action, 409)).error.status).toBe('RUNNING');

      const paused = await call(gw, jobId, 'pause');
      expect(paused.message).toBe(`Job ${jobId} paused: run ${jobId}_1`);
      expect(paused.results.status).toBe('PAUSING');
      expect(flags(paused.results)).toEqual(expectedFlags('PAUSING'));
      expect((await call(gw, jobId, 'pause', 409)).error.status).toBe('PAUSING');
      gw.src.open();
      const p = await waitStatus(gw, jobId, 'PAUSED');
      expect(flags(p)).toEqual(expectedFlags('PAUSED'));
      expect(p.written).toBeGreaterThan(0);
      expect(p.written).toBeLessThan(10);
      for (const action of ['start', 'pause', 'kill', 'runerrors']) await call(gw, jobId, action, 409);

      const resumed = await call(gw, jobId, 'resume');
      expect(resumed.message).toBe(`Job ${jobId} resumed: run ${jobId}_1`);
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_1`, read: 10, written: 10, skipped: 0, failed: 0 });
      expect(Object.keys(listTree(path.join(gw.dstRoot, 'walk1'))).sort()).toEqual(Object.keys(tree(10, '')).map((k) => k.replace(/^\//, '')).sort());
    });

    it('abort (GET and POST): in-flight documents finish, the run ends ABORTED; resume skips what was done', async () => {
      writeTree(gw.srcRoot, tree(10, 'walk2'));
      const jobId = await defineJob(gw, jobBody('walk-abort', { source: { connectorId: 'src', folderPath: '/walk2' }, target: { connectorId: 'dst', folderPath: '/walk2' } }));
      const sent = gw.src.leadSent;
      gw.src.close({ leadBytes: 10 }); // the in-flight documents have started to arrive at the target
      await call(gw, jobId, 'start');
      await gw.src.waitLeadSent(sent + 2); // concurrency 2: two documents in flight
      const aborting = await call(gw, jobId, 'abort', 200, 'post');
      expect(aborting.message).toBe(`Job ${jobId} aborted: run ${jobId}_1`);
      expect(aborting.results.status).toBe('ABORTING');
      expect(flags(aborting.results)).toEqual(expectedFlags('ABORTING'));
      expect((await call(gw, jobId, 'abort', 409)).error.status).toBe('ABORTING');
      gw.src.open();
      const aborted = await waitStatus(gw, jobId, 'ABORTED');
      expect(flags(aborted)).toEqual(expectedFlags('ABORTED'));
      expect(aborted.endTime).not.toBeNull();
      expect(aborted.written).toBe(2);
      // the two in-flight documents finished whole; nothing else, nothing staged, is left at the target
      const landed = listTree(path.join(gw.dstRoot, 'walk2'));
      expect(Object.keys(landed)).toHaveLength(2);
      for (const [rel, content] of Object.entries(landed)) expect(content).toBe(fs.readFileSync(path.join(gw.srcRoot, 'walk2', rel), 'utf8'));
      expect(stagedFiles(gw.dstRoot)).toEqual([]);

      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_1`, read: 10, written: 10, skipped: 0, failed: 0 });
      const copied = listTree(path.join(gw.dstRoot, 'walk2'));
      expect(Object.keys(copied)).toHaveLength(10);
      const source = listTree(path.join(gw.srcRoot, 'walk2'));
      expect(copied).toEqual(source);

      // a paused run is aborted at once (GET form)
      fs.rmSync(path.join(gw.dstRoot, 'walk2'), { recursive: true });
      gw.src.close();
      const before = gw.src.opened;
      await call(gw, jobId, 'start');
      await gw.src.waitOpened(before + 1);
      await call(gw, jobId, 'pause');
      gw.src.open();
      await waitStatus(gw, jobId, 'PAUSED');
      const ab = await call(gw, jobId, 'abort');
      expect(ab.results.status).toBe('ABORTED');
    });

    it('kill: in-flight documents are cancelled and nothing half-written stays; resume completes exactly', async () => {
      writeTree(gw.srcRoot, tree(6, 'walk3'));
      const jobId = await defineJob(gw, jobBody('walk-kill', { source: { connectorId: 'src', folderPath: '/walk3' }, target: { connectorId: 'dst', folderPath: '/walk3' } }));
      const sent = gw.src.leadSent;
      gw.src.close({ leadBytes: 10 }); // the target has started writing when kill cuts the streams
      await call(gw, jobId, 'start');
      await gw.src.waitLeadSent(sent + 2);
      const killed = await call(gw, jobId, 'kill', 200, 'post');
      expect(killed.message).toBe(`Job ${jobId} killed: run ${jobId}_1`);
      const aborted = await waitStatus(gw, jobId, 'ABORTED');
      expect(aborted).toMatchObject({ written: 0, failed: 0 });
      expect(listTree(path.join(gw.dstRoot, 'walk3'))).toEqual({});
      expect(stagedFiles(gw.dstRoot)).toEqual([]);
      gw.src.open();
      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED', read: 6, written: 6, failed: 0 });
      expect(listTree(path.join(gw.dstRoot, 'walk3'))).toEqual(listTree(path.join(gw.srcRoot, 'walk3')));
    });

    it('errors: COMPLETED_WITH_ERRORS, the error record, then runerrors re-runs only the failed documents', async () => {
      writeTree(gw.srcRoot, tree(10, 'walk4'));
      const jobId = await defineJob(gw, jobBody('walk-errors', { source: { connectorId: 'src', folderPath: '/walk4' }, target: { connectorId: 'dst', folderPath: '/walk4' } }));
      gw.src.failing = /doc-00[147]/;
      await call(gw, jobId, 'start');
      const first = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(first).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', statusName: 'Completed with errors', read: 10, written: 7, failed: 3 });
      expect(flags(first)).toEqual(expectedFlags('COMPLETED_WITH_ERRORS'));
      expect((await call(gw, jobId, 'resume', 409)).error.status).toBe('COMPLETED_WITH_ERRORS');
      const badId = (await gw.http().get(`${gw.api}/repo/src/idbypath?folderPath=/walk4&fileName=doc-004.txt`).set('Authorization', adminAuth())).body.results.id;
      const e = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId: badId, recordType: 'e' }).set('Authorization', adminAuth()).expect(200);
      expect(e.body.results).toMatch(new RegExp(`run ${jobId}_1 ERROR source=.*: UPSTREAM_ERROR: injected failure for doc-004.txt`));

      gw.src.failing = undefined;
      const re = await call(gw, jobId, 'runerrors');
      expect(re.message).toMatch(new RegExp(`run ${jobId}_2$`));
      const second = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(second).toMatchObject({ status: 'COMPLETED', jobRunId: `${jobId}_2`, read: 3, written: 3, failed: 0 });
      const p = await gw.http().get(`${gw.api}/job/service/${jobId}/recordstatus`).query({ docId: badId, recordType: 'p' }).set('Authorization', adminAuth()).expect(200);
      expect(p.body.results).toMatch(new RegExp(`run ${jobId}_2 PROCESSED`));
      expect(listTree(path.join(gw.dstRoot, 'walk4'))).toEqual(listTree(path.join(gw.srcRoot, 'walk4')));
      // the last run has no failures left
      expect((await call(gw, jobId, 'runerrors', 409)).error.code).toBe('JOB_STATE_CONFLICT');
    });

    it('maxErrors: the run FAILS at the limit; resume continues without redoing finished documents', async () => {
      writeTree(gw.srcRoot, tree(12, 'walk5'));
      const jobId = await defineJob(
        gw,
        jobBody('walk-limit', { source: { connectorId: 'src', folderPath: '/walk5' }, target: { connectorId: 'dst', folderPath: '/walk5' }, options: { maxErrors: 2 } }),
      );
      gw.src.failing = /doc-00[0-4]/;
      await call(gw, jobId, 'start');
      const failed = await waitStatus(gw, jobId, 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS');
      expect(failed.status).toBe('FAILED');
      expect(failed.failed).toBeGreaterThanOrEqual(2);
      expect(flags(failed)).toEqual(expectedFlags('FAILED'));
      expect((await call(gw, jobId, 'status')).message).toMatch(/limit is 2 \(options.maxErrors\)/);
      gw.src.failing = undefined;
      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done.status).toBe('COMPLETED_WITH_ERRORS');
      expect(done.read).toBe(12);
      expect(done.written + done.failed + done.skipped).toBe(12);
      expect(Object.keys(listTree(path.join(gw.dstRoot, 'walk5')))).toHaveLength(done.written);
    });

    it('maxErrors with documents in flight: RUNNING (message says why, resume 409) until they finish, then FAILED; resume completes exactly', async () => {
      writeTree(gw.srcRoot, tree(12, 'walk6'));
      const jobId = await defineJob(
        gw,
        jobBody('walk-limit-inflight', { source: { connectorId: 'src', folderPath: '/walk6' }, target: { connectorId: 'dst', folderPath: '/walk6' }, options: { maxErrors: 2 } }),
      );
      gw.src.failing = /doc-00[0-4]/; // these fail at once; the others wait at the gate
      const opened = gw.src.opened;
      gw.src.close();
      await call(gw, jobId, 'start');
      await gw.src.waitOpened(opened + 1);
      let failing = await call(gw, jobId, 'status');
      while (failing.message === null) {
        await sleep(25);
        failing = await call(gw, jobId, 'status');
      }
      expect(failing.message).toMatch(/limit is 2 \(options.maxErrors\)/);
      expect(failing.results.status).toBe('RUNNING');
      expect((await call(gw, jobId, 'resume', 409)).error.status).toBe('RUNNING');
      gw.src.failing = undefined;
      gw.src.open();
      const failed = await waitStatus(gw, jobId, 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS');
      expect(failed).toMatchObject({ status: 'FAILED', failed: 5 });
      expect(failed.written).toBeGreaterThan(0); // the documents in flight finished
      expect(failed.written).toBeLessThan(7);
      await call(gw, jobId, 'resume');
      const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
      expect(done).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', jobRunId: `${jobId}_1`, read: 12, written: 7, skipped: 0, failed: 5 });
      const copied = listTree(path.join(gw.dstRoot, 'walk6'));
      expect(Object.keys(copied).sort()).toEqual(Object.keys(tree(12, '')).map((k) => k.replace(/^\//, '')).filter((k) => !/doc-00[0-4]/.test(k)).sort());
    });

    it('every status of the state table has its display name and flags in the records above', () => {
      expect(JOB_STATUSES).toEqual(['NEW', 'RUNNING', 'PAUSING', 'PAUSED', 'ABORTING', 'ABORTED', 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS']);
    });
  });
});
