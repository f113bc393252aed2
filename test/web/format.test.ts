import { describe, expect, it } from 'vitest';
import { withQuery } from '../../web/shared/api-path.js';
import type { CellValue } from '../../web/shared/api-types.js';
import { formatBytes, formatDuration, plural, when } from '../../web/shared/format.js';
import {
  cellText,
  filterName,
  isNumericType,
  isTemporalType,
  sqlName,
} from '../../web/workspace/result-values.js';

/** How the pages show numbers, sizes, times and values (web/shared/format.ts, web/workspace/result-values.ts). */

describe('formatBytes', () => {
  it.each<[string | number, string]>([
    [0, '0 bytes'],
    [1, '1 byte'],
    ['5', '5 bytes'],
    [999, '999 bytes'],
    [1000, '1.0 kB'],
    [1234, '1.2 kB'],
    [12_345, '12 kB'],
    [999_999, '1000 kB'],
    [1_500_000, '1.5 MB'],
    ['7300000000', '7.3 GB'],
    [2e15, '2000 TB'],
    ['not a number', 'not a number'],
  ])('%j → %j', (bytes, expected) => {
    expect(formatBytes(bytes)).toBe(expected);
  });
});

describe('formatDuration', () => {
  it.each([
    [-5, '0 ms'],
    [0.4, '0 ms'],
    [999.4, '999 ms'],
    [1000, '1.0 s'],
    [59_949, '59.9 s'],
    [60_000, '1 min 0 s'],
    [3_725_000, '62 min 5 s'],
  ])('%j ms → %j', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});

describe('plural, when', () => {
  it('counts with the word in the right number, digits grouped', () => {
    expect(plural(1, 'row')).toBe('1 row');
    expect(plural(0, 'row')).toBe('0 rows');
    expect(plural(12_345, 'query', 'queries')).toBe('12,345 queries');
  });

  it('shows an API time to the minute, in UTC', () => {
    expect(when('2024-01-31T12:00:05.123Z')).toBe('2024-01-31 12:00 UTC');
    expect(when(null)).toBe('never');
  });
});

describe('result values', () => {
  it.each<[CellValue, string]>([
    [null, 'NULL'],
    ['', ''],
    ['9223372036854775809', '9223372036854775809'],
    [1.5, '1.5'],
    [false, 'false'],
    [[1, null], '[1,null]'],
    [{ a: { b: 'c' } }, '{"a":{"b":"c"}}'],
  ])('%j is shown as %j', (value, expected) => {
    expect(cellText(value)).toBe(expected);
  });

  it('tells number and time columns by their type', () => {
    for (const type of ['BIGINT', 'hugeint', 'DECIMAL(18,3)', 'double', 'ubigint', 'bignum'])
      expect(isNumericType(type), type).toBe(true);
    for (const type of ['varchar', 'interval', 'varchar[]', 'date'])
      expect(isNumericType(type), type).toBe(false);
    expect(isTemporalType('TIMESTAMP WITH TIME ZONE')).toBe(true);
    expect(isTemporalType('date')).toBe(true);
    expect(isTemporalType('time')).toBe(false);
  });

  it('writes names for SQL bare when they can be, and always quoted for filters', () => {
    expect(sqlName('dataset_prices')).toBe('dataset_prices');
    expect(sqlName('Prices')).toBe('"Prices"');
    expect(sqlName('1st')).toBe('"1st"');
    expect(sqlName('say "hi"')).toBe('"say ""hi"""');
    expect(filterName('n')).toBe('"n"');
    expect(filterName('a"b')).toBe('"a""b"');
  });
});

describe('withQuery', () => {
  it('adds the parameters that have a value, encoded', () => {
    expect(withQuery('/v1/x', {})).toBe('/v1/x');
    expect(withQuery('/v1/x', { limit: 100, offset: 0, filters: undefined, sort_by: '' })).toBe(
      '/v1/x?limit=100&offset=0',
    );
    expect(withQuery('/v1/x', { filters: "n > 1 AND label = 'a&b'" })).toBe(
      '/v1/x?filters=n+%3E+1+AND+label+%3D+%27a%26b%27',
    );
  });
});
