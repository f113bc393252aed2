import { describe, expect, it } from 'vitest';
import type { CellValue, ResultsPage } from '../../web/shared/api-types.js';
import { categoryAxis, chartPoints, coordinate, type Point } from '../../web/workspace/chart-points.js';

/** What the workspace's chart draws from a result's rows (web/workspace/chart-points.ts). */

describe('coordinate', () => {
  it.each<[CellValue, string, Date | number | string | undefined]>([
    [null, 'bigint', undefined],
    [42, 'bigint', 42],
    // Big integers come as strings; they are drawn as (rounded) numbers.
    ['9223372036854775809', 'hugeint', 2 ** 63],
    ['NaN', 'double', undefined],
    ['Infinity', 'double', undefined],
    [2.5, 'DECIMAL(10,2)', 2.5],
    ['2024-01-31', 'date', new Date('2024-01-31T00:00:00Z')],
    ['2024-01-31 12:30:00 UTC', 'timestamp with time zone', new Date('2024-01-31T12:30:00Z')],
    ['2024-01-31 12:30:00', 'timestamp', new Date('2024-01-31T12:30:00')],
    ['not a date', 'date', undefined],
    ['stETH', 'varchar', 'stETH'],
    [true, 'boolean', 'true'],
    [['a', 'b'], 'varchar[]', '["a","b"]'],
  ])('%j as %s → %j', (value, type, expected) => {
    expect(coordinate(value, type)).toEqual(expected);
  });
});

const result = (names: string[], types: string[], rows: Record<string, CellValue>[]) =>
  ({
    rows,
    metadata: { column_names: names, column_types: types, total_row_count: rows.length },
  }) as NonNullable<ResultsPage['result']>;

describe('chartPoints', () => {
  const rows = result(
    ['day', 'price', 'volume', 'token'],
    ['date', 'double', 'bigint', 'varchar'],
    [
      { day: '2024-01-02', price: 2, volume: '20', token: 'a' },
      { day: '2024-01-01', price: 1, volume: null, token: 'b' },
      { day: null, price: 3, volume: 30, token: null },
    ],
  );

  it('makes one point per row and y column, leaving out rows without x and values that are no number', () => {
    expect(chartPoints(rows, 'line', 'day', ['price', 'volume'])).toEqual([
      { x: new Date('2024-01-02T00:00:00Z'), y: 2, series: 'price' },
      { x: new Date('2024-01-02T00:00:00Z'), y: 20, series: 'volume' },
      { x: new Date('2024-01-01T00:00:00Z'), y: 1, series: 'price' },
    ]);
  });

  it('takes x as text for bars: one category per value, in the order of the rows', () => {
    expect(chartPoints(rows, 'bar', 'day', ['price'])).toEqual([
      { x: '2024-01-02', y: 2, series: 'price' },
      { x: '2024-01-01', y: 1, series: 'price' },
    ]);
    expect(chartPoints(rows, 'bar', 'token', ['price']).map((p) => p.x)).toEqual(['a', 'b']);
  });

  it('draws nothing for a y column that is not a number, or a column the result lacks', () => {
    expect(chartPoints(rows, 'scatter', 'price', ['token'])).toEqual([]);
    expect(chartPoints(rows, 'scatter', 'price', ['missing'])).toEqual([]);
  });
});

describe('categoryAxis', () => {
  const points = (categories: string[]): Point[] => categories.map((x, i) => ({ x, y: i, series: 'y' }));
  const numbered = (count: number) => Array.from({ length: count }, (_, i) => `c${i}`);

  it('keeps every label of a short axis, level', () => {
    expect(categoryAxis(points(['a', 'b', 'a', 'c']))).toEqual({ domain: ['a', 'b', 'c'] });
  });

  it('slants the labels when they are long or many', () => {
    expect(categoryAxis(points(['a rather long name', 'b']))).toEqual({
      domain: ['a rather long name', 'b'],
      tickRotate: -30,
    });
    expect(categoryAxis(points(numbered(11))).tickRotate).toBe(-30);
    expect(categoryAxis(points(numbered(10))).tickRotate).toBeUndefined();
  });

  it('labels about 20 of a long axis, evenly', () => {
    expect(categoryAxis(points(numbered(20))).ticks).toBeUndefined();
    const axis = categoryAxis(points(numbered(45)));
    expect(axis.domain).toHaveLength(45);
    expect(axis.ticks).toEqual([
      'c0',
      'c3',
      'c6',
      'c9',
      'c12',
      'c15',
      'c18',
      'c21',
      'c24',
      'c27',
      'c30',
      'c33',
      'c36',
      'c39',
      'c42',
    ]);
    expect(categoryAxis(points(numbered(1000))).ticks).toHaveLength(20);
  });
});
