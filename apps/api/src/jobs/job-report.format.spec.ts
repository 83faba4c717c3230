import type { ReportRow } from '@gateway/persistence';
import { csvLine, IsoTimes, toRowDto } from './job-report.service';

describe('report formatting', () => {
  it('IsoTimes writes what Date.prototype.toISOString writes, across days and in any order', () => {
    const times = new IsoTimes();
    const samples = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, Date.UTC(2026, 10, 29, 23, 59, 59, 999), Date.UTC(2026, 11, 31, 0, 0, 0, 7), 253_402_300_799_999];
    let seed = 42;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      // Mostly near one another (a run), now and then far away (another day, another year).
      samples.push(i % 100 === 0 ? seed * 100 : Date.UTC(2026, 10, 29) + (seed % (3 * 86_400_000)));
    }
    for (const ms of samples) expect(times.format(ms)).toBe(new Date(ms).toISOString());
  });

  it('a CSV line holds the columns of the header in order, quoted as RFC 4180 says', () => {
    const row: ReportRow = {
      docId: 'L2luL2EudHh0',
      relPath: 'a, "quoted"\nname.txt',
      sourcePath: '/in/a.txt',
      targetId: null,
      outcome: 'e',
      message: 'Upstream answered 503',
      checksum: 'ab12',
      verified: 'read-back',
      readAt: Date.UTC(2026, 10, 29, 8, 1, 2, 3),
      finishedAt: null,
      plan: 'fail',
    };
    const dto = toRowDto(row);
    expect(csvLine(row, new IsoTimes())).toBe(`L2luL2EudHh0,"a, ""quoted""\nname.txt",/in/a.txt,,e,Upstream answered 503,ab12,read-back,${dto.readAt},,fail\r\n`);
    expect(dto.readAt).toBe('2026-11-29T08:01:02.003Z');
  });
});
