import { adminAuth } from '../support/gateway';
import { MODE, call, defineJob, jobBody, startJobsGateway, waitStatus, writeTree, type JobsGateway } from './jobs-helpers';

type Counts = Record<'p' | 'e' | 'd' | 's' | 'r', number>;

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ',') {
      record.push(field);
      field = '';
    } else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      field = '';
      record = [];
      i++;
    } else {
      field += c;
    }
  }
  return records;
}

function tally(outcomes: string[]): Counts {
  const counts: Counts = { p: 0, e: 0, d: 0, s: 0, r: 0 };
  for (const o of outcomes) counts[o as keyof Counts]++;
  return counts;
}

/** The report's counts add up to the run's counters exactly. */
function expectCountsMatch(counts: Counts, run: { read: number; written: number; failed: number; skipped: number }): void {
  expect(counts.p + counts.e + counts.d + counts.s + counts.r).toBe(run.read);
  expect(counts.p).toBe(run.written);
  expect(counts.e).toBe(run.failed);
  expect(counts.d + counts.s).toBe(run.skipped);
}

describe(`Job run reports through HTTP, ${MODE} mode`, () => {
  let gw: JobsGateway;
  beforeAll(async () => {
    gw = await startJobsGateway();
  });
  afterAll(() => gw.close());
  afterEach(() => {
    gw.src.open();
    gw.src.failing = undefined;
  });

  const report = (jobId: number, query: Record<string, string | string[] | number> = {}) =>
    gw.http().get(`${gw.api}/job/service/${jobId}/report`).query(query).set('Authorization', adminAuth());

  /** Every row of a report through its JSON pages. */
  async function allPages(jobId: number, query: Record<string, string | string[] | number>) {
    const rows: Array<Record<string, unknown>> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await report(jobId, cursor ? { ...query, cursor } : query).expect(200);
      rows.push(...res.body.results.rows);
      cursor = res.headers['x-next-cursor'];
      pages++;
    } while (cursor);
    return { rows, pages };
  }

  function files(n: number, prefix: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (let i = 0; i < n; i++) out[`${prefix}/doc-${String(i).padStart(3, '0')}.txt`] = `content ${i}\n`.repeat(i + 1);
    return out;
  }

  it('a completed run with errors, skips and duplicates: rows per document in JSON pages, CSV and ndjson, counts equal to the counters', async () => {
    writeTree(gw.srcRoot, { ...files(12, 'in1'), 'in1/notes.tmp': 'x', 'in1/a, "quoted".txt': 'q' });
    const jobId = await defineJob(gw, jobBody('report-completed', { source: { connectorId: 'src', folderPath: '/in1' }, target: { connectorId: 'dst', folderPath: '/out1' }, options: { exclude: ['*.tmp'] } }));
    gw.src.failing = /doc-00[36]/;
    await call(gw, jobId, 'start');
    const first = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    expect(first).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', read: 14, written: 11, failed: 2, skipped: 1 });
    // Progress: the listing found every document; a finished run has no eta.
    expect(first).toMatchObject({ total: 14, listingComplete: true, percent: 100, eta: null });
    // 11 written: doc-000..doc-011 but 003 and 006 (i + 1 lines of 'content i\n'), and 'a, "quoted".txt' (1 byte).
    const sizes = [0, 1, 2, 4, 5, 7, 8, 9, 10, 11].map((i) => `content ${i}\n`.length * (i + 1));
    expect(first.bytesWritten).toBe(sizes.reduce((a, b) => a + b, 0) + 1);
    // The two failures fail at openContent, the excluded document is never opened: every byte read was written.
    expect(first.bytesRead).toBe(first.bytesWritten);

    const page = await report(jobId).expect(200);
    expect(page.headers['x-next-cursor']).toBeUndefined();
    const body = page.body.results;
    expect(body).toMatchObject({ jobId, runId: `${jobId}_1`, status: 'COMPLETED_WITH_ERRORS', counters: { read: 14, written: 11, failed: 2, skipped: 1, removed: 0 } });
    expect(body.counts).toEqual({ p: 11, e: 2, d: 0, s: 1, r: 0 });
    expectCountsMatch(body.counts, first);
    expect(tally(body.rows.map((r: { outcome: string }) => r.outcome))).toEqual(body.counts);
    const failedRow = body.rows.find((r: { relPath: string }) => r.relPath === 'doc-003.txt');
    expect(failedRow).toMatchObject({ outcome: 'e', sourcePath: '/in1/doc-003.txt', targetId: null, message: expect.stringMatching(/UPSTREAM_ERROR: injected failure for doc-003.txt/) });
    expect(Date.parse(failedRow.finishedAt)).toBeGreaterThanOrEqual(Date.parse(failedRow.readAt));
    expect(body.rows.find((r: { relPath: string }) => r.relPath === 'notes.tmp')).toMatchObject({ outcome: 's', message: expect.stringMatching(/exclu/i) });
    expect(body.rows.find((r: { relPath: string }) => r.relPath === 'doc-000.txt')).toMatchObject({ outcome: 'p', targetId: expect.any(String), message: null });

    // Pages of 5 give the same rows, once each, in document id order; only the first page has counts.
    const paged = await allPages(jobId, { limit: 5 });
    expect(paged.pages).toBe(3);
    expect(paged.rows).toEqual(body.rows);
    const second = await report(jobId, { limit: 5, cursor: (await report(jobId, { limit: 5 })).headers['x-next-cursor'] }).expect(200);
    expect(second.body.results.counts).toBeUndefined();

    const errorsOnly = await report(jobId, { outcome: ['e', 's'] }).expect(200);
    expect(errorsOnly.body.results.rows.map((r: { relPath: string }) => r.relPath).sort()).toEqual(['doc-003.txt', 'doc-006.txt', 'notes.tmp']);
    expect((await report(jobId, { outcome: 'e,s' }).expect(200)).body.results.rows).toEqual(errorsOnly.body.results.rows);

    const csv = await report(jobId, { format: 'csv' }).buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(null, text));
    }).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toContain(`job-${jobId}-run-${jobId}_1-report.csv`);
    const records = parseCsv(csv.body as string);
    expect(records[0]).toEqual(['docId', 'relPath', 'sourcePath', 'targetId', 'outcome', 'message', 'checksum', 'verified', 'readAt', 'finishedAt', 'plan']);
    expect(records).toHaveLength(15);
    expect(tally(records.slice(1).map((r) => r[4]))).toEqual(body.counts);
    expect(records.find((r) => r[1] === 'a, "quoted".txt')).toBeDefined();
    expect(records.slice(1).map((r) => r[0])).toEqual(body.rows.map((r: { docId: string }) => r.docId));

    const ndjson = await report(jobId, { format: 'ndjson', outcome: 'p' }).buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(null, text));
    }).expect(200);
    const lines = (ndjson.body as string).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(body.rows.filter((r: { outcome: string }) => r.outcome === 'p'));

    // A second run finds the copies there already: duplicates; the first run's report stays as it was.
    gw.src.failing = undefined;
    await call(gw, jobId, 'start');
    const again = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const latest = (await report(jobId).expect(200)).body.results;
    expect(latest.runId).toBe(`${jobId}_2`);
    expectCountsMatch(latest.counts, again);
    expect(latest.counts.d).toBe(11);
    expect((await report(jobId, { runId: `${jobId}_1` }).expect(200)).body.results.counts).toEqual(body.counts);
  });

  it('a FAILED run (maxErrors) and its resume: documents claimed and never finished are `r`, and the counts still add up', async () => {
    writeTree(gw.srcRoot, files(12, 'in2'));
    const jobId = await defineJob(gw, jobBody('report-failed', { source: { connectorId: 'src', folderPath: '/in2' }, target: { connectorId: 'dst', folderPath: '/out2' }, options: { maxErrors: 2 } }));
    gw.src.failing = /doc-00[0-4]/;
    await call(gw, jobId, 'start');
    const failed = await waitStatus(gw, jobId, 'FAILED', 'COMPLETED', 'COMPLETED_WITH_ERRORS');
    expect(failed.status).toBe('FAILED');
    const atFailure = (await report(jobId).expect(200)).body.results;
    expectCountsMatch(atFailure.counts, failed);
    const { rows } = await allPages(jobId, { limit: 3 });
    expect(tally(rows.map((r) => r.outcome as string))).toEqual(atFailure.counts);
    for (const r of rows.filter((row) => row.outcome === 'r')) expect(r.finishedAt).toBeNull();

    gw.src.failing = undefined;
    await call(gw, jobId, 'resume');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const after = (await report(jobId).expect(200)).body.results;
    expectCountsMatch(after.counts, done);
    expect(after.counts.r).toBe(0);
    expect(after.counts.p + after.counts.e).toBe(12);
  });

  it('a killed run and its resume: nothing in flight is reported finished; the counts add up at each stop', async () => {
    writeTree(gw.srcRoot, files(6, 'in3'));
    const jobId = await defineJob(gw, jobBody('report-killed', { source: { connectorId: 'src', folderPath: '/in3' }, target: { connectorId: 'dst', folderPath: '/out3' } }));
    const sent = gw.src.leadSent;
    gw.src.close({ leadBytes: 10 });
    await call(gw, jobId, 'start');
    await gw.src.waitLeadSent(sent + 2);
    // While the run is active its report cannot be saved.
    const refused = await gw.http().post(`${gw.api}/job/service/${jobId}/report`).query({ save: 'true' }).set('Authorization', adminAuth()).expect(409);
    expect(refused.body.error.code).toBe('JOB_STATE_CONFLICT');
    // In flight: the listed documents are discovered (with the tasks that carry them), the eta not yet known (< 5 s).
    expect((await call(gw, jobId, 'status')).results).toMatchObject({ status: 'RUNNING', total: 6, eta: null });
    await call(gw, jobId, 'kill', 200, 'post');
    const aborted = await waitStatus(gw, jobId, 'ABORTED');
    const killed = (await report(jobId).expect(200)).body.results;
    expectCountsMatch(killed.counts, aborted);
    expect(killed.counts.r).toBe(aborted.read);
    gw.src.open();
    await call(gw, jobId, 'resume');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const resumed = (await report(jobId).expect(200)).body.results;
    expectCountsMatch(resumed.counts, done);
    expect(resumed.counts).toEqual({ p: 6, e: 0, d: 0, s: 0, r: 0 });
  });

  it('an aborted run and its resume: the documents in flight finish, the rest of the batch stays read (`r`); the counts add up', async () => {
    writeTree(gw.srcRoot, files(8, 'in5'));
    const jobId = await defineJob(gw, jobBody('report-aborted', { source: { connectorId: 'src', folderPath: '/in5' }, target: { connectorId: 'dst', folderPath: '/out5' } }));
    const sent = gw.src.leadSent;
    gw.src.close({ leadBytes: 10 });
    await call(gw, jobId, 'start');
    await gw.src.waitLeadSent(sent + 2);
    await call(gw, jobId, 'abort', 200, 'post');
    gw.src.open();
    const aborted = await waitStatus(gw, jobId, 'ABORTED');
    const counts = (await report(jobId).expect(200)).body.results.counts as Counts;
    expectCountsMatch(counts, aborted);
    // The two in flight finished; the rest of the claimed batch never started.
    expect(counts.p).toBeGreaterThanOrEqual(2);
    expect(counts.r).toBeGreaterThan(0);
    const csv = await report(jobId, { format: 'csv' }).buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(null, text));
    }).expect(200);
    expect(tally(parseCsv(csv.body as string).slice(1).map((r) => r[4]))).toEqual(counts);
    await call(gw, jobId, 'resume');
    const done = await waitStatus(gw, jobId, 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED');
    const resumed = (await report(jobId).expect(200)).body.results.counts as Counts;
    expectCountsMatch(resumed, done);
    expect(resumed).toEqual({ p: 8, e: 0, d: 0, s: 0, r: 0 });
  });

  it('saves a finished run\'s report as a user file: listed, downloadable, and shareable like an export', async () => {
    writeTree(gw.srcRoot, files(3, 'in4'));
    const jobId = await defineJob(gw, jobBody('report-saved', { source: { connectorId: 'src', folderPath: '/in4' }, target: { connectorId: 'dst', folderPath: '/out4' } }));
    await call(gw, jobId, 'start');
    await waitStatus(gw, jobId, 'COMPLETED');
    const saved = await gw.http().post(`${gw.api}/job/service/${jobId}/report`).query({ save: 'true' }).set('Authorization', adminAuth()).expect(201);
    const link = saved.body.results;
    const listed = (await gw.http().get(`${gw.api}/files/user`).set('Authorization', adminAuth()).expect(200)).body.results.files;
    expect(listed.find((f: { id: string }) => f.id === link.docId)).toMatchObject({ type: 'job-report', state: 'ready', fileName: `job-${jobId}-run-${jobId}_1-report.csv` });
    const download = await gw.http().get(`${gw.api}/files/user/download`).query({ id: link.docId }).set('Authorization', adminAuth()).buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(null, text));
    }).expect(200);
    const records = parseCsv(download.body as string);
    expect(records).toHaveLength(4);
    expect(records.slice(1).map((r) => r[4])).toEqual(['p', 'p', 'p']);
  });

  it('refuses bad parameters naming them, an unknown job or run, and a save without save=true', async () => {
    writeTree(gw.srcRoot, files(1, 'in5'));
    const jobId = await defineJob(gw, jobBody('report-params', { source: { connectorId: 'src', folderPath: '/in5' }, target: { connectorId: 'dst', folderPath: '/out5' } }));
    expect(JSON.stringify((await report(jobId).expect(404)).body)).toMatch(/has not run yet/);
    await call(gw, jobId, 'start');
    await waitStatus(gw, jobId, 'COMPLETED');
    expect(JSON.stringify((await report(jobId, { outcome: 'x' }).expect(400)).body)).toMatch(/outcome/);
    expect(JSON.stringify((await report(jobId, { format: 'xml' }).expect(400)).body)).toMatch(/format/);
    expect(JSON.stringify((await report(jobId, { runId: 'abc' }).expect(400)).body)).toMatch(/runId/);
    expect(JSON.stringify((await report(jobId, { cursor: '***' }).expect(400)).body)).toMatch(/cursor/);
    await report(jobId, { runId: `${jobId}_9` }).expect(404);
    await report(jobId, { runId: `${jobId + 1}_1` }).expect(404);
    await report(999_999).expect(404);
    const noSave = await gw.http().post(`${gw.api}/job/service/${jobId}/report`).set('Authorization', adminAuth()).expect(400);
    expect(JSON.stringify(noSave.body)).toMatch(/save/);
  });
});
