/** Number and date values as every engine reads them. */

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The value as a finite JSON number, or undefined. */
export function parseNumber(text: string): number | undefined {
  if (!JSON_NUMBER.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** ISO 8601: a date, or a date and time with an optional fraction and a zone (Z or ±hh:mm; none = UTC). */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** The instant as a UTC ISO 8601 string with milliseconds, or undefined when it is not a valid timestamp. */
export function parseDate(text: string): string | undefined {
  const match = ISO_8601.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  const millis = (fraction + '000').slice(0, 3);
  // setUTCFullYear, unlike Date.UTC, leaves years 0-99 alone.
  const check = new Date(0);
  check.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  check.setUTCHours(Number(hour), Number(minute), Number(second), Number(millis));
  const utc = check.getTime();
  // Date.UTC rolls 2024-02-30 over to March; a real date reads back the same fields.
  if (
    check.getUTCFullYear() !== Number(year) ||
    check.getUTCMonth() !== Number(month) - 1 ||
    check.getUTCDate() !== Number(day) ||
    check.getUTCHours() !== Number(hour) ||
    check.getUTCMinutes() !== Number(minute) ||
    check.getUTCSeconds() !== Number(second)
  ) {
    return undefined;
  }
  const offsetMinutes =
    zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  if (Math.abs(offsetMinutes) > 18 * 60 || Number(zone.slice(4, 6) || '0') > 59) return undefined;
  return new Date(utc - offsetMinutes * 60_000).toISOString();
}

/** A number in the form every engine parses: integers without exponent, others as JavaScript prints them. */
export function normaliseNumber(text: string): string | undefined {
  const value = parseNumber(text);
  if (value === undefined) return undefined;
  return Number.isSafeInteger(value) ? BigInt(value).toString() : String(value);
}
