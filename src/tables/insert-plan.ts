import { badRequest } from '../errors.js';
import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import {
  type CsvSource,
  csvField,
  type LineEnd,
  NDJSON_LINE,
  readCsv,
  readNdjsonLines,
} from './csv-dialect.js';
import { type ParquetColumn, parquetText, readParquet } from './parquet-body.js';
import type { DeclaredColumn } from './table-schema.js';

/**
 * What an insert reads: which of the table's columns the body gives, and the SQL text
 * (VARCHAR) each one's values come from. The fast path and the diagnosis are both built
 * from one plan, so they can never disagree about where a value comes from.
 */

export type InsertFormat = 'csv' | 'ndjson' | 'parquet';

export interface ValueSource {
  column: DeclaredColumn;
  /** SQL expression of the value's text, over the reader's row. */
  text: string;
  /** A column an upsert matches rows on: it must have a value in every row. */
  key?: boolean;
}

export interface InsertPlan {
  format: InsertFormat;
  file: string;
  /** The body as DuckDB's reader reads it (csv-dialect.ts). */
  source: CsvSource;
  /** CSV: fields per record (the header's). NDJSON: 1 (the line). Parquet: its columns. */
  fieldCount: number;
  /** In the table's column order; columns the body does not give are absent. */
  sources: ValueSource[];
  /** NDJSON: the JSON Pointer of each source's key, in `sources` order. */
  pointers: string[];
  /** NDJSON: the name of the list of values as DuckDB's JSON functions extract them. */
  valuesName: string;
  /**
   * NDJSON: the select list, over the line and that list, of the columns the sources' `text`
   * names: each value's text computed once per line, however often the rules read it.
   */
  textColumns: string;
}

const NDJSON_VALUES = quoteIdentifier('v');

function listNames(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(', ');
}

/**
 * The body's column names (a CSV header, a Parquet schema) name columns of the table, in any
 * order, each once; an omitted column must be nullable (it is NULL in every inserted row).
 * Returns where each of the table's columns is among the body's.
 */
function matchColumns(
  where: string,
  names: readonly string[],
  columns: readonly DeclaredColumn[],
): Map<string, number> {
  const position = new Map<string, number>();
  const repeated = new Set<string>();
  names.forEach((name, i) => {
    if (position.has(name)) repeated.add(name);
    else position.set(name, i);
  });
  if (repeated.size > 0) {
    throw badRequest(`${where} names ${listNames([...repeated])} more than once`);
  }
  const known = new Set(columns.map((c) => c.name));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw badRequest(
      `${where} names unknown column${unknown.length > 1 ? 's' : ''} ${listNames(unknown)}; the table's columns are ${columns.map((c) => c.name).join(', ')}`,
    );
  }
  const missing = columns.filter((c) => !c.nullable && !position.has(c.name));
  if (missing.length > 0) {
    throw badRequest(
      `${where} does not name ${listNames(missing.map((c) => c.name))}, which ${missing.length > 1 ? 'are' : 'is'} not nullable`,
    );
  }
  return position;
}

function sourcesAt(
  columns: readonly DeclaredColumn[],
  position: Map<string, number>,
  text: (at: number) => string,
): ValueSource[] {
  return columns.flatMap((column) => {
    const at = position.get(column.name);
    return at === undefined ? [] : [{ column, text: text(at) }];
  });
}

/** A CSV's header names the columns it gives. */
export function csvPlan(
  file: string,
  lineEnd: LineEnd,
  header: readonly string[],
  columns: readonly DeclaredColumn[],
): InsertPlan {
  const position = matchColumns('CSV line 1 (the header)', header, columns);
  const sources = sourcesAt(columns, position, csvField);
  return {
    format: 'csv',
    file,
    source: { parts: [{ file, firstLine: 2 }], fieldCount: header.length, lineEnd },
    fieldCount: header.length,
    sources,
    pointers: [],
    valuesName: NDJSON_VALUES,
    textColumns: '',
  };
}

/**
 * One token of a JSON object with no nested value, in document order: a string (escapes
 * included) or a bare number, true, false or null. Keys and values alternate.
 */
const JSON_FLAT_TOKEN = String.raw`'"(?:[^"\\]|\\.)*"|[^\s{}:,"]+'`;

/**
 * The text of a line's value for `column`, as its NDJSON gave it. DuckDB's JSON functions read
 * a number with a point or an exponent as a double and write that back (`1e5` is `100000.0`,
 * `9007199254740993.0` is `9007199254740992.0`); for those the number's own text is taken from
 * the line: its token after its key's, the line being one flat object (checked before any
 * value is read) whose keys `json_keys` lists in document order. Plain integers DuckDB keeps
 * exact (digits beyond 64 bits as written), strings are their content. Not for varchar
 * columns (which keep DuckDB's text, as before) nor double ones (the same double either way).
 */
function ndjsonValueText(column: DeclaredColumn, index: number): string {
  const extracted = `${NDJSON_VALUES}[${index}]`;
  if (column.type === 'varchar' || column.type === 'double') return extracted;
  const asWritten = `regexp_extract_all(${NDJSON_LINE}, ${JSON_FLAT_TOKEN})[2 * list_position(json_keys(${NDJSON_LINE}), ${quoteLiteral(column.name)})]`;
  return `(CASE WHEN ${extracted} IS NULL OR regexp_full_match(${extracted}, '-?[0-9]+') THEN ${extracted}
      WHEN json_type(${NDJSON_LINE}, ${quoteLiteral(jsonPointer(column.name))}) = 'DOUBLE' THEN ${asWritten}
      ELSE ${extracted} END)`;
}

/** Every column is read from each line's object; a missing key is NULL, checked per line. */
export function ndjsonPlan(file: string, columns: readonly DeclaredColumn[]): InsertPlan {
  return {
    format: 'ndjson',
    file,
    source: { parts: [{ file, firstLine: 1 }], fieldCount: 1, lineEnd: 'lf' },
    fieldCount: 1,
    sources: columns.map((column, i) => ({ column, text: quoteIdentifier(`text_${i + 1}`) })),
    pointers: columns.map((column) => jsonPointer(column.name)),
    valuesName: NDJSON_VALUES,
    textColumns: columns
      .map((column, i) => `${ndjsonValueText(column, i + 1)} AS ${quoteIdentifier(`text_${i + 1}`)}`)
      .join(', '),
  };
}

/** A Parquet file's schema names the columns it gives; its values are read as text (parquetText). */
export function parquetPlan(
  file: string,
  body: readonly ParquetColumn[],
  columns: readonly DeclaredColumn[],
): InsertPlan {
  const position = matchColumns(
    'the Parquet schema',
    body.map((c) => c.name),
    columns,
  );
  const sources = sourcesAt(columns, position, (at) => parquetText(body[at] as ParquetColumn));
  return {
    format: 'parquet',
    file,
    source: { parts: [{ file, firstLine: 1 }], fieldCount: body.length, lineEnd: 'lf' },
    fieldCount: body.length,
    sources,
    pointers: [],
    valuesName: NDJSON_VALUES,
    textColumns: '',
  };
}

/** The reader of the plan's body; with `rejects`, faulty lines are recorded instead. */
export function planReader(plan: InsertPlan, rejects?: { table: string; scan: string }): string {
  if (plan.format === 'parquet') return readParquet(plan.file);
  return plan.format === 'csv' ? readCsv(plan.source, rejects) : readNdjsonLines(plan.source.parts, rejects);
}

/** JSON Pointer (RFC 6901) of a top-level key: exact for any key, unlike `$.key` paths. */
export function jsonPointer(key: string): string {
  return `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

/** A DuckDB list literal of strings, e.g. `['a', 'b']`. */
export function stringList(values: readonly string[]): string {
  return `[${values.map(quoteLiteral).join(', ')}]`;
}
