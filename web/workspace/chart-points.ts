import type { CellValue, ResultsPage } from '../shared/api-types.js';
import { cellText, isNumericType, isTemporalType } from './result-values.js';

/** The points a chart draws, from a result's rows as the API renders them. */

export type ChartKind = 'line' | 'bar' | 'scatter';

export interface Point {
  x: Date | number | string;
  y: number;
  series: string;
}

/** An API value as a chart coordinate: timestamps ('… UTC') and dates as dates, numbers as numbers. */
export function coordinate(value: CellValue, type: string): Date | number | string | undefined {
  if (value === null) return undefined;
  if (isTemporalType(type) && typeof value === 'string') {
    const iso = value.replace(' UTC', 'Z').replace(' ', 'T');
    const date = new Date(/^\d{4}-\d\d-\d\d$/.test(iso) ? `${iso}T00:00:00Z` : iso);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  if (isNumericType(type)) {
    const number = Number(value);
    return Number.isFinite(number) ? number : undefined;
  }
  return cellText(value);
}

/**
 * One point per row and y column: x as a category (its text) for bars, else as a coordinate;
 * rows without an x, and y values that are not numbers, are left out.
 */
export function chartPoints(
  result: NonNullable<ResultsPage['result']>,
  kind: ChartKind,
  x: string,
  ys: string[],
): Point[] {
  const { column_names: names, column_types: types } = result.metadata;
  const typeOf = new Map(names.map((name, i) => [name, types[i] ?? '']));
  const xType = typeOf.get(x) ?? '';
  const yTypes = ys.map((y) => typeOf.get(y) ?? '');
  const points: Point[] = [];
  for (const row of result.rows) {
    const value = row[x] as CellValue;
    const xValue = kind === 'bar' ? (value === null ? undefined : cellText(value)) : coordinate(value, xType);
    if (xValue === undefined) continue;
    for (const [i, y] of ys.entries()) {
      const yValue = coordinate(row[y] as CellValue, yTypes[i] as string);
      if (typeof yValue === 'number') points.push({ x: xValue, y: yValue, series: y });
    }
  }
  return points;
}

/**
 * A bar chart's x axis: its categories in the order of the rows; about 20 labels at most,
 * since every label of a long axis would overlap; slanted when they are long or many.
 */
export function categoryAxis(points: Point[]): { domain: string[]; ticks?: string[]; tickRotate?: number } {
  const domain = [...new Set(points.map((p) => String(p.x)))];
  const step = Math.ceil(domain.length / 20);
  return {
    domain,
    ...(domain.length > 20 ? { ticks: domain.filter((_, i) => i % step === 0) } : {}),
    ...(domain.some((c) => c.length > 8) || domain.length > 10 ? { tickRotate: -30 } : {}),
  };
}
