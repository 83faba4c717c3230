import { parseExpression, type CronExpression } from 'cron-parser';
import { InvalidArgumentError } from '@gateway/connector-api';

const HOUR_MS = 3_600_000;
/** Candidates tried for one valid due time: past a year of every-minute times a daylight-saving rule drops, something is wrong. */
const MAX_CANDIDATES = 1000;

/** Compiled schedules kept (cron-parser takes milliseconds per time computed in a zone: the ticker and listings reuse them). */
const COMPILED_KEPT = 1000;
const compiled = new Map<string, CronSchedule>();

/** Local wall-clock time in a zone, to the minute. */
interface Wall {
  key: string;
  hour: number;
  minute: number;
}

/**
 * A schedule's due times: a 5-field cron expression (cron-parser) in an IANA time zone, with daylight-saving
 * time as cron (Vixie cron, cronie) has it. cron-parser alone moves a time that falls in the hour skipped in
 * spring an hour later (02:30 → 03:30), and its `prev` answers both passes of the hour repeated in autumn;
 * here a due time must read, on the zone's wall clock, as the expression's minute and hour (so a skipped
 * local time does not run), and an expression with a fixed hour runs a repeated local time once (its first
 * pass). An expression with `*` in the hour follows elapsed time, as cron's do: hourly stays hourly.
 */
export class CronSchedule {
  private readonly hours: ReadonlySet<number>;
  private readonly minutes: ReadonlySet<number>;
  private readonly fixedHour: boolean;
  private readonly wallFormat: Intl.DateTimeFormat;
  /** The last nextAfter answer: `next` is also the answer for any instant in [from, next). */
  private memo?: { from: number; next: number | undefined };

  private constructor(
    readonly cron: string,
    readonly timeZone: string,
  ) {
    const fields = parseExpression(cron, { tz: timeZone }).fields;
    this.hours = new Set(fields.hour);
    this.minutes = new Set(fields.minute);
    this.fixedHour = fields.hour.length < 24;
    this.wallFormat = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
  }

  /** Checks both parts; a 400 naming `schedule.cron` or `schedule.timeZone`. */
  static parse(cron: string, timeZone: string, now: number): CronSchedule {
    const fields = cron.trim().split(/\s+/);
    if (fields.length !== 5) {
      throw new InvalidArgumentError(
        'schedule.cron',
        `Invalid parameter 'schedule.cron': '${cron}' has ${fields.length} field(s); a cron expression has 5 (minute hour day-of-month month day-of-week)`,
      );
    }
    try {
      new Intl.DateTimeFormat('en-US', { timeZone });
    } catch {
      throw new InvalidArgumentError('schedule.timeZone', `Invalid parameter 'schedule.timeZone': '${timeZone}' is not an IANA time zone (e.g. Europe/Paris, UTC)`);
    }
    let schedule: CronSchedule;
    try {
      schedule = new CronSchedule(cron, timeZone);
    } catch (e) {
      throw new InvalidArgumentError('schedule.cron', `Invalid parameter 'schedule.cron': '${cron}': ${(e as Error).message}`);
    }
    let next: number | undefined;
    try {
      next = schedule.nextAfter(now);
    } catch (e) {
      throw new InvalidArgumentError('schedule.cron', `Invalid parameter 'schedule.cron': '${cron}': ${(e as Error).message}`);
    }
    if (next === undefined) throw new InvalidArgumentError('schedule.cron', `Invalid parameter 'schedule.cron': '${cron}' never falls due`);
    return schedule;
  }

  /** A schedule stored after `parse` checked it, compiled once per process. */
  static compiled(cron: string, timeZone: string): CronSchedule {
    const key = `${timeZone} ${cron}`;
    let schedule = compiled.get(key);
    if (!schedule) {
      if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
      schedule = new CronSchedule(cron, timeZone);
      compiled.set(key, schedule);
    }
    return schedule;
  }

  /** The first due time strictly after `ms`; undefined if none comes. */
  nextAfter(ms: number): number | undefined {
    const memo = this.memo;
    if (memo && memo.from <= ms && (memo.next === undefined || ms < memo.next)) return memo.next;
    const next = this.first(this.iterator(ms), 'next');
    this.memo = { from: ms, next };
    return next;
  }

  /** The last due time at or before `ms`; undefined if none. */
  latestAtOrBefore(ms: number): number | undefined {
    return this.first(this.iterator(ms + 1), 'prev');
  }

  /** Due times in (after, until], oldest first, at most `limit`. */
  between(after: number, until: number, limit = 100): number[] {
    const due: number[] = [];
    for (let t = this.nextAfter(after); t !== undefined && t <= until && due.length < limit; t = this.nextAfter(t)) due.push(t);
    return due;
  }

  private iterator(ms: number): CronExpression {
    return parseExpression(this.cron, { tz: this.timeZone, currentDate: new Date(ms) });
  }

  private first(it: CronExpression, direction: 'next' | 'prev'): number | undefined {
    for (let i = 0; i < MAX_CANDIDATES; i++) {
      if (direction === 'next' ? !it.hasNext() : !it.hasPrev()) return undefined;
      const t = (direction === 'next' ? it.next() : it.prev()).getTime();
      if (this.valid(t)) return t;
    }
    return undefined;
  }

  private valid(t: number): boolean {
    const wall = this.wall(t);
    if (!this.hours.has(wall.hour) || !this.minutes.has(wall.minute)) return false; // shifted out of a skipped hour
    return !this.fixedHour || this.wall(t - HOUR_MS).key !== wall.key; // the second pass of a repeated hour
  }

  private wall(t: number): Wall {
    const parts = Object.fromEntries(this.wallFormat.formatToParts(t).map((p) => [p.type, p.value]));
    return { key: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`, hour: Number(parts.hour), minute: Number(parts.minute) };
  }
}
