import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import type { SnapshotColumn } from './execution.js';

/**
 * How result rows look on the wire, written as SQL so that DuckDB renders them: pages and
 * the whole result's byte count then come from one renderer, vectorized. DESIGN.md §5:
 * integers within ±2^53 are JSON numbers and larger ones strings; NaN and infinities are
 * strings; timestamps `YYYY-MM-DD HH:MM:SS.mmm UTC`; dates `YYYY-MM-DD`; varbinary `0x` hex.
 */

const MAX_SAFE = '9007199254740991';

type Kind =
  | 'safe-integer'
  | 'integer'
  | 'float'
  | 'decimal-number'
  | 'decimal-text'
  | 'timestamp'
  | 'date'
  | 'blob'
  | 'boolean'
  | 'text'
  | 'other';

function kindOf(type: string): Kind {
  const t = type.toLowerCase();
  if (/^(tinyint|smallint|integer|utinyint|usmallint|uinteger)$/.test(t)) return 'safe-integer';
  if (/^(bigint|hugeint|ubigint|uhugeint|bignum)$/.test(t)) return 'integer';
  if (t === 'double' || t === 'float') return 'float';
  const decimal = /^decimal\((\d+),\s*(\d+)\)$/.exec(t);
  // A decimal of up to 15 digits is exactly a double: a JSON number. Wider ones stay text.
  if (decimal) return Number(decimal[1]) <= 15 ? 'decimal-number' : 'decimal-text';
  if (t.startsWith('timestamp')) return 'timestamp';
  if (t === 'date') return 'date';
  if (t === 'blob') return 'blob';
  if (t === 'boolean') return 'boolean';
  if (t === 'varchar' || t === 'uuid' || t === 'time' || t === 'interval') return 'text';
  return 'other';
}

/** The column's value as JSON (a JSON-typed SQL expression). */
export function jsonValue(column: SnapshotColumn): string {
  const x = quoteIdentifier(column.name);
  switch (kindOf(column.type)) {
    case 'integer': {
      // A UHUGEINT is compared as one: against signed bounds DuckDB casts it to HUGEINT, which
      // refuses values from 2^127.
      const safe =
        column.type.toLowerCase() === 'uhugeint'
          ? `${x} <= ${MAX_SAFE}::UHUGEINT`
          : `${x} BETWEEN -${MAX_SAFE} AND ${MAX_SAFE}`;
      return `CASE WHEN ${safe} THEN to_json(${x}) ELSE to_json(CAST(${x} AS VARCHAR)) END`;
    }
    case 'float':
      // NULL first: every test below is NULL for it, and ELSE would make it '-Infinity'.
      return `CASE WHEN ${x} IS NULL THEN NULL WHEN isfinite(${x}) THEN to_json(${x}) WHEN isnan(${x}) THEN to_json('NaN') WHEN ${x} > 0 THEN to_json('Infinity') ELSE to_json('-Infinity') END`;
    case 'decimal-number':
      return `to_json(CAST(${x} AS DOUBLE))`;
    case 'decimal-text':
      return `to_json(CAST(${x} AS VARCHAR))`;
    case 'timestamp':
      // As TIMESTAMP first: strftime of a TIMESTAMP_S goes through nanoseconds, whose range
      // (years 1677 to 2262) would refuse other values. With TimeZone UTC, a TIMESTAMPTZ
      // casts to its UTC time.
      return `to_json(strftime(CAST(${x} AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%g UTC'))`;
    case 'date':
      return `to_json(CAST(${x} AS VARCHAR))`;
    case 'blob':
      return `to_json('0x' || lower(hex(${x})))`;
    default:
      return `to_json(${x})`;
  }
}

/**
 * One row as a JSON object text (VARCHAR), keys in the given order. Written as one flat
 * `concat` of the keys (constants DuckDB folds) and each value's JSON text: no JSON document
 * is built per row. Measured on 1,000,000 rows of six columns: DuckDB's JSON writer took
 * 820 ms of CPU for the same rows given as JSON values (it parses each one again), this
 * 520 ms, and DuckDB's own `COPY … (FORMAT json)` of the plain table 430 ms. A flat call, not
 * a chain of `||`: a chain nests one level per operator, and DuckDB refuses an expression
 * more than 1,000 deep (a result of 500 columns).
 */
export function jsonRowExpression(columns: readonly SnapshotColumn[]): string {
  if (columns.length === 0) return `'{}'`;
  const parts = columns.flatMap((c, i) => [
    `(${quoteLiteral(i === 0 ? '{' : ',')} || CAST(to_json(${quoteLiteral(c.name)}) AS VARCHAR) || ':')`,
    `coalesce(CAST(${jsonValue(c)} AS VARCHAR), 'null')`,
  ]);
  return `concat(${parts.join(', ')}, '}')`;
}

/** A snapshot's rows as JSON object texts, in row order: what a page of all its columns holds. */
export function jsonRowsQuery(table: string, columns: readonly SnapshotColumn[]): string {
  return `SELECT ${jsonRowExpression(columns)} AS r FROM ${table} ORDER BY rowid`;
}

/** total_result_set_bytes of rows already rendered (`jsonRowsQuery`): `[`, the rows joined by `,`, `]`. */
export function jsonArrayBytes(rows: readonly string[]): number {
  let bytes = 2 + Math.max(rows.length - 1, 0);
  for (const row of rows) bytes += Buffer.byteLength(row, 'utf8');
  return bytes;
}

/** The column's value as text, for CSV; NULL for NULL. */
function textValue(column: SnapshotColumn): string {
  const x = quoteIdentifier(column.name);
  switch (kindOf(column.type)) {
    case 'float':
      return `CASE WHEN ${x} IS NULL THEN NULL WHEN isfinite(${x}) THEN CAST(${x} AS VARCHAR) WHEN isnan(${x}) THEN 'NaN' WHEN ${x} > 0 THEN 'Infinity' ELSE '-Infinity' END`;
    case 'timestamp':
      return `strftime(CAST(${x} AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%g UTC')`;
    case 'blob':
      return `'0x' || lower(hex(${x}))`;
    case 'other':
      return `CAST(to_json(${x}) AS VARCHAR)`;
    default:
      return `CAST(${x} AS VARCHAR)`;
  }
}

/** Kinds whose text is never empty and never holds a comma, a quote or a line break. */
const PLAIN_CSV_KINDS: ReadonlySet<Kind> = new Set([
  'safe-integer',
  'integer',
  'float',
  'decimal-number',
  'decimal-text',
  'timestamp',
  'date',
  'blob',
  'boolean',
]);

/**
 * A CSV field: empty for NULL (concat drops a NULL); quoted when it holds a comma, quote or
 * line break, or is empty. Only text can: numbers, times and hex are written as they are.
 * Measured on 1,000,000 rows with two text columns of six, the whole file: 460 ms of CPU
 * with `contains` four times, 570 ms with `regexp_matches(t, '[",\r\n]')`, 1,180 ms with
 * that test on every column; DuckDB's own COPY of the plain table 340 ms.
 */
function csvField(column: SnapshotColumn): string {
  const t = textValue(column);
  if (PLAIN_CSV_KINDS.has(kindOf(column.type))) return t;
  // DuckDB evaluates the repeated `t` once (common subexpressions).
  return `CASE WHEN ${t} = '' OR contains(${t}, ',') OR contains(${t}, '"') OR contains(${t}, chr(10)) OR contains(${t}, chr(13)) THEN '"' || replace(${t}, '"', '""') || '"' ELSE ${t} END`;
}

/** One row as a CSV line (without its line end); a flat `concat`, as for JSON rows. */
export function csvRowExpression(columns: readonly SnapshotColumn[]): string {
  if (columns.length === 0) return `''`;
  return `concat(${columns.map(csvField).join(`, ',', `)})`;
}

/** The CSV header line. */
export function csvHeader(columns: readonly SnapshotColumn[]): string {
  return columns
    .map((c) => (c.name === '' || /[",\r\n]/.test(c.name) ? `"${c.name.replaceAll('"', '""')}"` : c.name))
    .join(',');
}

/**
 * The UTF-8 length of a non-NULL value as JSON. Dates and timestamps of years 1 to 9999
 * render at a fixed length (`"YYYY-MM-DD"`, `"YYYY-MM-DD HH:MM:SS.mmm UTC"`), so only others
 * are rendered to be measured: formatting a timestamp costs 100 times the comparison.
 */
function jsonLength(column: SnapshotColumn): string {
  const x = quoteIdentifier(column.name);
  const rendered = `strlen(CAST(${jsonValue(column)} AS VARCHAR))`;
  switch (kindOf(column.type)) {
    // year() is NULL for infinities, and negative before year 1.
    case 'date':
      return `CASE WHEN year(${x}) BETWEEN 1 AND 9999 THEN 12 ELSE ${rendered} END`;
    case 'timestamp':
      return `CASE WHEN year(${x}) BETWEEN 1 AND 9999 THEN 29 ELSE ${rendered} END`;
    default:
      return rendered;
  }
}

/**
 * Bytes of `[row,row,…]` for the whole snapshot (total_result_set_bytes), exactly as the
 * pages render them, without building the rows: a row is `{` + `"name":value` pairs joined
 * by `,` + `}`, so its length is a constant (braces, commas, keys) plus each value's JSON
 * length (4 for null). Summing per column skips building one JSON object per row, which
 * took 5 of every 6 ms (1 million rows of 4 columns: 144 ms against 812 ms).
 */
export function resultBytesQuery(table: string, columns: readonly SnapshotColumn[]): string {
  const keys = columns.map((c) => `strlen(CAST(to_json(${quoteLiteral(c.name)}) AS VARCHAR)) + 1`);
  const perRow = [String(2 + Math.max(columns.length - 1, 0)), ...keys].join(' + ');
  const values = columns.map((c) => ` + coalesce(sum(${jsonLength(c)}), 0)`);
  // A value that is NULL renders as `null`; count(col) skips exactly those rows.
  const nulls = columns.map((c) => ` + 4 * (count(*) - count(${quoteIdentifier(c.name)}))`);
  return `SELECT count(*) * (${perRow})${values.join('')}${nulls.join('')} + greatest(count(*) - 1, 0) + 2 AS bytes FROM ${table}`;
}

/** The same count, one JSON object per row: the definition the fast query is tested against. */
export function resultBytesByRowsQuery(table: string, columns: readonly SnapshotColumn[]): string {
  return `SELECT coalesce(sum(strlen(${jsonRowExpression(columns)})), 0) + greatest(count(*) - 1, 0) + 2 AS bytes FROM ${table}`;
}
