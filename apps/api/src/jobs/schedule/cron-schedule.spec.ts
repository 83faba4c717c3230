import { InvalidArgumentError } from '@gateway/connector-api';
import { CronSchedule } from './cron-schedule';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const JAN = at('2026-01-01T00:00:00Z');

describe('CronSchedule', () => {
  it('computes due times in UTC and in a time zone', () => {
    const utc = CronSchedule.parse('0 3 * * *', 'UTC', JAN);
    expect(iso(utc.nextAfter(at('2026-06-01T02:59:59Z')))).toBe('2026-06-01T03:00:00.000Z');
    expect(iso(utc.nextAfter(at('2026-06-01T03:00:00Z')))).toBe('2026-06-02T03:00:00.000Z'); // strictly after
    const paris = CronSchedule.parse('0 3 * * *', 'Europe/Paris', JAN);
    expect(iso(paris.nextAfter(at('2026-01-10T00:00:00Z')))).toBe('2026-01-10T02:00:00.000Z'); // CET, UTC+1
    expect(iso(paris.nextAfter(at('2026-07-10T00:00:00Z')))).toBe('2026-07-10T01:00:00.000Z'); // CEST, UTC+2
    const tokyo = CronSchedule.parse('15 9 * * 1-5', 'Asia/Tokyo', JAN);
    expect(iso(tokyo.nextAfter(at('2026-11-27T01:00:00Z')))).toBe('2026-11-30T00:15:00.000Z'); // Friday past 9:15 → Monday
  });

  it('answers the latest due time at or before an instant', () => {
    const s = CronSchedule.parse('*/15 * * * *', 'UTC', JAN);
    expect(iso(s.latestAtOrBefore(at('2026-05-05T10:15:00Z')))).toBe('2026-05-05T10:15:00.000Z');
    expect(iso(s.latestAtOrBefore(at('2026-05-05T10:14:59Z')))).toBe('2026-05-05T10:00:00.000Z');
    expect(s.between(at('2026-05-05T10:00:00Z'), at('2026-05-05T11:00:00Z')).map(iso)).toEqual([
      '2026-05-05T10:15:00.000Z',
      '2026-05-05T10:30:00.000Z',
      '2026-05-05T10:45:00.000Z',
      '2026-05-05T11:00:00.000Z',
    ]);
  });

  describe('daylight-saving time (Europe/Paris: 2026-03-29 02:00 → 03:00, 2026-10-25 03:00 → 02:00)', () => {
    it('does not run a time in the hour skipped in spring (cron-parser alone would run it at 03:30)', () => {
      const s = CronSchedule.parse('30 2 * * *', 'Europe/Paris', JAN);
      expect(s.between(at('2026-03-27T00:00:00Z'), at('2026-03-31T00:00:00Z')).map(iso)).toEqual([
        '2026-03-27T01:30:00.000Z',
        '2026-03-28T01:30:00.000Z',
        // no 2026-03-29: 02:30 does not exist that night
        '2026-03-30T00:30:00.000Z',
      ]);
      expect(iso(s.latestAtOrBefore(at('2026-03-30T00:00:00Z')))).toBe('2026-03-28T01:30:00.000Z');
    });

    it('runs a time in the hour repeated in autumn once, at its first pass, both forwards and backwards', () => {
      const s = CronSchedule.parse('30 2 * * *', 'Europe/Paris', JAN);
      expect(s.between(at('2026-10-24T00:00:00Z'), at('2026-10-27T00:00:00Z')).map(iso)).toEqual([
        '2026-10-24T00:30:00.000Z',
        '2026-10-25T00:30:00.000Z', // 02:30 CEST; 02:30 CET (01:30Z) does not run again
        '2026-10-26T01:30:00.000Z',
      ]);
      expect(iso(s.latestAtOrBefore(at('2026-10-25T23:00:00Z')))).toBe('2026-10-25T00:30:00.000Z');
    });

    it('keeps an expression with * in the hour on elapsed time through both changes, as cron does', () => {
      const s = CronSchedule.parse('0 * * * *', 'Europe/Paris', JAN);
      expect(s.between(at('2026-03-28T23:30:00Z'), at('2026-03-29T02:30:00Z')).map(iso)).toEqual([
        '2026-03-29T00:00:00.000Z', // 01:00 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST
        '2026-03-29T02:00:00.000Z',
      ]);
      expect(s.between(at('2026-10-24T23:30:00Z'), at('2026-10-25T02:30:00Z')).map(iso)).toEqual([
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T01:00:00.000Z', // 02:00 CET
        '2026-10-25T02:00:00.000Z',
      ]);
    });

    it('follows the zone given (New York changes on other days)', () => {
      const s = CronSchedule.parse('30 2 * * *', 'America/New_York', JAN);
      expect(s.between(at('2026-03-07T00:00:00Z'), at('2026-03-10T00:00:00Z')).map(iso)).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
    });
  });

  describe('validation', () => {
    const refused = (cron: string, zone: string) => {
      try {
        CronSchedule.parse(cron, zone, JAN);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        return { parameter: (e as InvalidArgumentError).parameter, message: (e as Error).message };
      }
      throw new Error(`'${cron}' in ${zone} was accepted`);
    };

    it('refuses anything but 5 fields, naming schedule.cron', () => {
      expect(refused('0 0 3 * * *', 'UTC')).toEqual({ parameter: 'schedule.cron', message: expect.stringContaining('has 6 field(s); a cron expression has 5') });
      expect(refused('0 3 * *', 'UTC').parameter).toBe('schedule.cron');
      expect(refused('@daily', 'UTC').parameter).toBe('schedule.cron');
    });

    it('refuses a value out of range or an expression that never falls due, naming schedule.cron', () => {
      expect(refused('61 3 * * *', 'UTC')).toEqual({ parameter: 'schedule.cron', message: expect.stringContaining('61') });
      expect(refused('0 3 31 2 *', 'UTC').parameter).toBe('schedule.cron');
      expect(refused('x 3 * * *', 'UTC').parameter).toBe('schedule.cron');
    });

    it('refuses an unknown time zone, naming schedule.timeZone', () => {
      expect(refused('0 3 * * *', 'Europe/Atlantis')).toEqual({ parameter: 'schedule.timeZone', message: expect.stringContaining('Europe/Atlantis') });
    });
  });
});
