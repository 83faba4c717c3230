import * as fs from 'node:fs';
import * as path from 'node:path';
import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, jobBody, listTree, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

/** Issue 35, part 5: definitions and query parameters are taken exactly as declared; the filters include, modified*, *Size. */
describe(`Job definitions and routes take only what they declare, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway();
  });
  afterAll(() => gw.close());

  const post = (body: unknown) => gw.http().post(`${gw.api}/admin/jobs`).set('Authorization', adminAuth()).send(body as object);
  const errorOf = (res: { body: { error?: { message?: string; parameter?: string } } }) => JSON.stringify(res.body);

  it('refuses unknown keys anywhere in a definition, naming every one, on create and replace', async () => {
    const typo = await post({ ...jobBody('strict-1'), options: { onExist: 'skip' } }).expect(400);
    expect(errorOf(typo)).toContain("Unknown key 'options.onExist' in the request body");
    const several = await post({ ...jobBody('strict-1'), dryRun: true, source: { connectorId: 'src', folderPath: '/in', recurse: false } }).expect(400);
    expect(errorOf(several)).toContain("Unknown keys 'dryRun', 'source.recurse' in the request body");
    const jobId = await defineJob(gw, jobBody('strict-1'));
    const put = await gw.http().put(`${gw.api}/admin/jobs/${jobId}`).set('Authorization', adminAuth()).send({ ...jobBody('strict-1'), target: { connectorId: 'dst', folderPath: '/o', colection: 'x' } }).expect(400);
    expect(errorOf(put)).toContain("Unknown key 'target.colection'");
  });

  it('says a missing required field "is required"', async () => {
    expect(errorOf(await post({ source: { connectorId: 'src', folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/o' } }).expect(400))).toContain('jobName is required');
    expect(errorOf(await post({ jobName: 'strict-2', source: { folderPath: '/in' }, target: { connectorId: 'dst', folderPath: '/o' } }).expect(400))).toContain(
      "Invalid parameter 'source.connectorId': connectorId is required",
    );
    expect(errorOf(await post({ jobName: 'strict-2', source: { connectorId: 'src' }, target: { connectorId: 'dst', folderPath: '/o' } }).expect(400))).toContain('folderPath is required');
    expect(errorOf(await post({ jobName: 'strict-2', source: { connectorId: 'src', folderPath: '/in' } }).expect(400))).toContain('target is required');
  });

  it('refuses unknown query parameters on the job routes, naming them: start?dryrun=true (dryRun misspelt) starts nothing', async () => {
    const jobId = await defineJob(gw, jobBody('strict-3'));
    const res = await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query({ dryrun: 'true' }).set('Authorization', adminAuth()).expect(400);
    expect(errorOf(res)).toContain("Unknown parameter 'dryrun' (known: dryRun)");
    expect((await call(gw, jobId, 'status')).results.status).toBe('NEW');
    const list = await gw.http().get(`${gw.api}/job/service/statuslist`).query({ group: 'x' }).set('Authorization', adminAuth()).expect(400);
    expect(errorOf(list)).toContain("Unknown parameter 'group' (known: jobGroup)");
    await gw.http().get(`${gw.api}/job/service/statuslist`).query({ jobGroup: 'x' }).set('Authorization', adminAuth()).expect(200);
    await gw.http().get(`${gw.api}/admin/jobs/${jobId}`).query({ verbose: '1' }).set('Authorization', adminAuth()).expect(400);
    // Authentication is still checked first.
    await gw.http().get(`${gw.api}/job/service/${jobId}/start`).query({ dryRun: 'true' }).expect(401);
  });

  it('filters by include, size and modification time; the rest is skipped with the reason', async () => {
    writeTree(gw.srcRoot, { 'f/a.pdf': 'x'.repeat(50), 'f/b.pdf': 'x'.repeat(5), 'f/c.txt': 'x'.repeat(50), 'f/old.pdf': 'x'.repeat(50), 'f/big.pdf': 'x'.repeat(500) });
    fs.utimesSync(path.join(gw.srcRoot, 'f/old.pdf'), new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const bad = await post({ ...jobBody('strict-4'), options: { modifiedAfter: 'yesterday' } }).expect(400);
    expect(errorOf(bad)).toContain('modifiedAfter must be an ISO 8601 date-time');
    expect(errorOf(await post({ ...jobBody('strict-4'), options: { minSize: 10, maxSize: 5 } }).expect(400))).toContain('options.maxSize');
    const jobId = await defineJob(gw, {
      ...jobBody('strict-4', { source: { connectorId: 'src', folderPath: '/f' }, target: { connectorId: 'dst', folderPath: '/f-out' } }),
      options: { include: ['*.pdf'], minSize: 10, maxSize: 100, modifiedAfter: '2024-01-01T00:00:00Z' },
    });
    const stored = (await gw.http().get(`${gw.api}/admin/jobs/${jobId}`).set('Authorization', adminAuth()).expect(200)).body.results;
    expect(stored.options).toMatchObject({ include: ['*.pdf'], minSize: 10, maxSize: 100, modifiedAfter: '2024-01-01T00:00:00Z' });
    await call(gw, jobId, 'start');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(done).toMatchObject({ status: 'COMPLETED', read: 5, written: 1, skipped: 4 });
    expect(Object.keys(listTree(path.join(gw.dstRoot, 'f-out')))).toEqual(['a.pdf']);
    const rows = (await gw.http().get(`${gw.api}/job/service/${jobId}/report`).query({ outcome: 's' }).set('Authorization', adminAuth()).expect(200)).body.results.rows;
    expect(Object.fromEntries(rows.map((r: { relPath: string; message: string }) => [r.relPath, r.message]))).toEqual({
      'b.pdf': 'Size 5 bytes is below minSize 10',
      'big.pdf': 'Size 500 bytes is above maxSize 100',
      'c.txt': 'Not matched by the include patterns *.pdf',
      'old.pdf': 'Modified 2020-01-01T00:00:00.000Z, not after modifiedAfter 2024-01-01T00:00:00Z',
    });
  });
});
