import { normaliseNumber, parseDate, parseNumber } from './values';

describe('parseNumber', () => {
  it('reads JSON numbers only', () => {
    expect(parseNumber('42')).toBe(42);
    expect(parseNumber('-0.5')).toBe(-0.5);
    expect(parseNumber('1E3')).toBe(1000);
    expect(parseNumber('1e-2')).toBe(0.01);
    for (const bad of ['', '+1', '01', '1.', '.5', '0x10', '1e', 'NaN', 'Infinity', '1e999', ' 1', '1_000']) {
      expect(parseNumber(bad)).toBeUndefined();
    }
  });
});

describe('normaliseNumber', () => {
  it('writes integers without exponent and others as JavaScript does', () => {
    expect(normaliseNumber('1e3')).toBe('1000');
    expect(normaliseNumber('-0')).toBe('0');
    expect(normaliseNumber('2.50')).toBe('2.5');
    expect(normaliseNumber('1e300')).toBe('1e+300');
    expect(normaliseNumber('x')).toBeUndefined();
  });
});

describe('parseDate', () => {
  it('reads ISO 8601 dates and times as UTC instants with milliseconds', () => {
    expect(parseDate('2024-01-15')).toBe('2024-01-15T00:00:00.000Z');
    expect(parseDate('2024-01-15T10:20')).toBe('2024-01-15T10:20:00.000Z');
    expect(parseDate('2024-01-15T10:20:30Z')).toBe('2024-01-15T10:20:30.000Z');
    expect(parseDate('2024-01-15T10:20:30.5Z')).toBe('2024-01-15T10:20:30.500Z');
    expect(parseDate('2024-01-15T10:20:30.123456789Z')).toBe('2024-01-15T10:20:30.123Z');
    expect(parseDate('2024-01-15T10:20:30+02:30')).toBe('2024-01-15T07:50:30.000Z');
    expect(parseDate('2024-01-15T00:00:00-01:00')).toBe('2024-01-15T01:00:00.000Z');
    expect(parseDate('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(parseDate('0099-01-01')).toBe('0099-01-01T00:00:00.000Z');
    expect(parseDate('2024-01-15T10:00:00+18:00')).toBe('2024-01-14T16:00:00.000Z');
  });

  it('refuses dates that do not exist and other forms', () => {
    for (const bad of [
      '2023-02-29', '2024-13-01', '2024-00-10', '2024-01-32', '2024-01-15T24:00:00Z', '2024-01-15T10:60:00Z',
      '2024-01-15T10:00:60Z', '2024-01-15T10:00:00+19:00', '2024-01-15T10:00:00+01:60', '2024-1-5', '20240115',
      '2024-01-15 10:00:00', 'yesterday', '', '2024-01-15T10', '2024-01-15T10:00:00.Z',
    ]) {
      expect(parseDate(bad)).toBeUndefined();
    }
  });
});
