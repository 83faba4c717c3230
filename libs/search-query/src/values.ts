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
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2}))?)?$/;

const field = (digits: string | undefined): number => (digits === undefined ? 0 : Number(digits));

/** The instant as a UTC ISO 8601 string with milliseconds, or undefined when it is not a valid timestamp. */
export function parseDate(text: string): string | undefined {
  const match = ISO_8601.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, leaves years 0-99 alone.
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(field(hour), field(minute), field(second), Number(`${fraction ?? ''}000`.slice(0, 3)));
  const local = date.toISOString();
  // A date that does not exist (2023-02-29, 24:00) rolls over to another one: it must read back the same.
  const written = `${year}-${month}-${day}T${pad(field(hour))}:${pad(field(minute))}:${pad(field(second))}`;
  if (!local.startsWith(written)) return undefined;
  if (sign === undefined) return local;
  if (Number(offsetMinutes) > 59) return undefined;
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes));
  if (Math.abs(offset) > 18 * 60) return undefined;
  return new Date(date.getTime() - offset * 60_000).toISOString();
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** A number in the form every engine parses: integers without exponent, others as JavaScript prints them. */
export function normaliseNumber(text: string): string | undefined {
  const value = parseNumber(text);
  if (value === undefined) return undefined;
  return Number.isSafeInteger(value) ? BigInt(value).toString() : String(value);
}
