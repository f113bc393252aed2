import type { CellValue } from './api-types.js';

/** How numbers, sizes, times and result values are shown. */

export const numberFormat = new Intl.NumberFormat('en-US');

export function formatBytes(text: string | number): string {
  const bytes = Number(text);
  if (!Number.isFinite(bytes)) return String(text);
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return bytes === 1 ? '1 byte' : `${numberFormat.format(bytes)} bytes`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`;
}

export const plural = (count: number, one: string, many = `${one}s`) =>
  `${numberFormat.format(count)} ${count === 1 ? one : many}`;

/**
 * A value's text as the API renders it: numbers as JSON writes them, big integers (strings)
 * digit for digit, lists and structs as JSON. NULL is told apart from an empty string.
 */
export function cellText(value: CellValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const NUMERIC =
  /^(tinyint|smallint|integer|bigint|hugeint|utinyint|usmallint|uinteger|ubigint|uhugeint|bignum|float|double|real|decimal)/;

/** Number-like column types are right-aligned, as numbers are read. */
export const isNumericType = (type: string) => NUMERIC.test(type.toLowerCase());

export const isTemporalType = (type: string) => /^(date|timestamp)/.test(type.toLowerCase());

/** A name as SQL needs it: bare when it is a plain lowercase identifier, else double-quoted. */
export function sqlName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** A column name in the results' filter and sort language: always quoted, so any name works. */
export const filterName = (name: string) => `"${name.replaceAll('"', '""')}"`;
