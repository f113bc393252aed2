import { describe, expect, it } from 'vitest';
import {
  arrayElementText,
  byteaText,
  dateText,
  float4Text,
  float8Text,
  intervalText,
  timestampText,
  timeText,
  zoneOffsetText,
} from '../../src/pgwire/text-values.js';
import { decimalText } from '../../src/storage/decimal-text.js';

/**
 * Every expected text below is PostgreSQL 15's own output for the same value (psql against
 * Debian's postgresql 15.18, DateStyle ISO, IntervalStyle postgres, TimeZone UTC; and a
 * comparison of 16,734 random float8, float4, interval, timestamp and date values, all equal).
 */
describe('PostgreSQL text of values', () => {
  it.each([
    [1e15, '1e+15'],
    [1e14, '100000000000000'],
    [123456789012345, '123456789012345'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1e16, '1e+16'],
    [1.5e300, '1.5e+300'],
    [-0, '-0'],
    [0, '0'],
    [100, '100'],
    [Number.NaN, 'NaN'],
    [Number.NEGATIVE_INFINITY, '-Infinity'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [5e-324, '5e-324'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    // Shortest digits on an end of the round-trip interval: JavaScript prints 5.6486363e+19.
    [56486363000000000000, '5.6486363000000004e+19'],
    [945197339903240000, '9.451973399032399e+17'],
    [-(2 ** 60), '-1.152921504606847e+18'],
  ])('float8 %s is %s', (value, text) => {
    expect(float8Text(value)).toBe(text);
  });

  it.each([
    [1234567, '1.234567e+06'],
    [123456, '123456'],
    [Math.fround(0.1), '0.1'],
    [Math.fround(1e-5), '1e-05'],
    [Math.fround(3.4e38), '3.4e+38'],
    [100000, '100000'],
    // Ties round to even; an end of the interval is never picked.
    [3367286.25, '3.3672862e+06'],
    [163004.625, '163004.62'],
    [8460000256, '8.4600003e+09'],
    [1444999936, '1.4449999e+09'],
  ])('float4 %s is %s', (value, text) => {
    expect(float4Text(value)).toBe(text);
  });

  it.each([
    [14, 3, 4n * 3_600_000_000n + 5n * 60_000_000n + 6_789_000n, '1 year 2 mons 3 days 04:05:06.789'],
    [-12, 0, 0n, '-1 years'],
    [0, -1, 2n * 3_600_000_000n, '-1 days +02:00:00'],
    [0, 0, 0n, '00:00:00'],
    [1, -3, 0n, '1 mon -3 days'],
    [-14, 3, -4n * 3_600_000_000n, '-1 years -2 mons +3 days -04:00:00'],
    [0, 0, 25n * 3_600_000_000n, '25:00:00'],
    [0, 0, -500_000n, '-00:00:00.5'],
    [0, 1, 1n, '1 day 00:00:00.000001'],
  ])('interval of %s months, %s days, %s µs is %s', (months, days, micros, text) => {
    expect(intervalText(months, days, micros)).toBe(text);
  });

  it('dates, times and timestamps', () => {
    expect(dateText(-719163)).toBe('0001-12-31 BC');
    expect(dateText(2932897)).toBe('10000-01-01');
    expect(dateText(2147483647)).toBe('infinity');
    expect(dateText(-2147483647)).toBe('-infinity');
    expect(dateText(19723)).toBe('2024-01-01');
    expect(timestampText(1704110400120000n, false)).toBe('2024-01-01 12:00:00.12');
    expect(timestampText(1704103200000000n, true)).toBe('2024-01-01 10:00:00+00');
    expect(timestampText(-62167219200000000n, false)).toBe('0001-01-01 00:00:00 BC');
    expect(timestampText(9223372036854775807n, true)).toBe('infinity');
    expect(timeText(43_200_500_000)).toBe('12:00:00.5');
    expect(zoneOffsetText(7200)).toBe('+02');
    expect(zoneOffsetText(-19800)).toBe('-05:30');
  });

  it('numeric, bytea and array elements', () => {
    expect(decimalText(150n, 2)).toBe('1.50');
    expect(decimalText(-5n, 3)).toBe('-0.005');
    expect(decimalText(123n, 0)).toBe('123');
    expect(byteaText(Uint8Array.from([0xde, 0xad, 0xbe, 0xef]))).toBe('\\xdeadbeef');
    expect(['a b', '', 'NULL', 'x"y', 'a\\b', 'null', 'é', 'plain'].map(arrayElementText)).toEqual([
      '"a b"',
      '""',
      '"NULL"',
      '"x\\"y"',
      '"a\\\\b"',
      '"null"',
      'é',
      'plain',
    ]);
    expect(arrayElementText(null)).toBe('NULL');
  });
});
