import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';

/**
 * DuckDB's CSV reader over an inserted body, as a table function call whose first
 * argument is the file, bound as parameter `?`. Every field is read as text named
 * c0, c1, … (no user text enters the reader's options); the conversion to the column types
 * happens in SQL, where a value that does not fit can be traced to its line and column.
 *
 * NDJSON goes through the same reader, one line per row: a raw control character such as
 * \x01 never occurs in valid JSON, so it serves as a delimiter that never splits a line,
 * and a blank line stays a (NULL) row, so row numbers are line numbers.
 */

export interface Rejects {
  /** Temp tables where DuckDB records faulty lines instead of failing. */
  table: string;
  scan: string;
}

function rejectOptions(rejects: Rejects | undefined): string {
  return rejects
    ? `, store_rejects = true, rejects_table = ${quoteLiteral(rejects.table)}, rejects_scan = ${quoteLiteral(rejects.scan)}, rejects_limit = 1000`
    : '';
}

export const csvField = (i: number) => quoteIdentifier(`c${i}`);

export function csvReader(fieldCount: number, rejects?: Rejects): string {
  const columns = Array.from({ length: fieldCount }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  return `read_csv(?, auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, null_padding = false, columns = {${columns}}${rejectOptions(rejects)})`;
}

export const NDJSON_LINE = quoteIdentifier('line');

export function ndjsonLineReader(rejects?: Rejects): string {
  return `read_csv(?, auto_detect = false, header = false, delim = '\u0001', quote = '', escape = '', null_padding = false, columns = {'line': 'VARCHAR'}${rejectOptions(rejects)})`;
}

/** A line that holds no JSON value: skipped, as NDJSON readers do. */
export const ndjsonBlankLine = `(${NDJSON_LINE} IS NULL OR trim(${NDJSON_LINE}, ' \t') = '')`;

/** JSON Pointer (RFC 6901) of a top-level key: exact for any key, unlike `$.key` paths. */
export function jsonPointer(key: string): string {
  return `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

/** A DuckDB list literal of strings, e.g. `['a', 'b']`. */
export function stringList(values: readonly string[]): string {
  return `[${values.map(quoteLiteral).join(', ')}]`;
}
