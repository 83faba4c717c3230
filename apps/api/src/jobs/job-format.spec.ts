import { isoDuration, statusRecord } from './job-format';
import { runRecord } from '../../../../test/support/in-memory-job-store';

const job = { id: 1, name: 'copy', group: 'g' };

describe('status record progress', () => {
  it('writes ISO 8601 durations in whole seconds', () => {
    expect([0, 0.4, 45, 125, 3723, 7200].map(isoDuration)).toEqual(['PT0S', 'PT0S', 'PT45S', 'PT2M5S', 'PT1H2M3S', 'PT2H']);
  });

  it('has no percent or eta while the listing is open; total counts what was discovered', () => {
    const run = runRecord({ discovered: 1000, written: 400, activeMs: 10_000, segmentStart: null });
    expect(statusRecord(job, run, 0, false)).toMatchObject({ total: 1000, listingComplete: false, percent: null, eta: null });
  });

  it('once the listing is complete: percent of finished documents, and an eta at the throughput so far', () => {
    // 500 of 1,000 finished in 10 s: 50/s, 500 left, 10 s.
    const run = runRecord({ discovered: 1000, written: 300, skipped: 150, failed: 50, activeMs: 10_000, segmentStart: null });
    expect(statusRecord(job, run, 0, true)).toMatchObject({ total: 1000, listingComplete: true, percent: 50, eta: 'PT10S' });
  });

  it('has no eta before 5 s of active time, nor once the run is not RUNNING', () => {
    const early = runRecord({ discovered: 10, written: 5, activeMs: 4_999, segmentStart: null });
    expect(statusRecord(job, early, 0, true)).toMatchObject({ percent: 50, eta: null });
    const paused = runRecord({ status: 'PAUSED', discovered: 10, written: 5, activeMs: 60_000, segmentStart: null });
    expect(statusRecord(job, paused, 0, true)).toMatchObject({ percent: 50, eta: null });
    const done = runRecord({ status: 'COMPLETED', discovered: 0, activeMs: 60_000, segmentStart: null });
    expect(statusRecord(job, done, 0, true)).toMatchObject({ total: 0, percent: 100, eta: null });
  });

  it('counts the open segment of a running run into the throughput', () => {
    const run = runRecord({ discovered: 300, written: 100, activeMs: 0, segmentStart: 1_000 });
    expect(statusRecord(job, run, 11_000, true)).toMatchObject({ percent: 33.3, eta: 'PT20S' });
  });

  it('a job that never ran: nothing discovered, listing not complete', () => {
    expect(statusRecord(job, undefined, 0, false)).toMatchObject({ status: 'NEW', total: 0, listingComplete: false, percent: null, eta: null });
  });
});
