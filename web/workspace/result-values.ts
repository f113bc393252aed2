import type { CellValue } from '../shared/api-types.js';

/** How a result's values and column types are shown, and its names written in SQL and filters. */

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
