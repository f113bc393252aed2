import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';

/**
 * The one CSV dialect of uploads and inserts (DESIGN §4), as DuckDB's reader takes it:
 * comma, `"` quoting (`""` for a quote), LF or CRLF line ends (one kind per body), an
 * empty field is NULL and `""` an empty string, the header names the fields. Every read of
 * a body, fast path or diagnosis, builds its `read_csv` call here, so they cannot disagree.
 *
 * Fields are read as text named c0, c1, … (no user text enters the reader's options); the
 * conversion to column types happens in SQL, where a value that does not fit can be traced.
 * NDJSON goes through the same reader one line per row: a raw control character such as
 * \x01 never occurs in valid JSON, so it serves as a delimiter that never splits a line, and
 * a blank line stays a (NULL) row, so row numbers are line numbers.
 */

/**
 * The longest record DuckDB's reader takes, in bytes without its line end (its
 * `max_line_size`, set here explicitly). DuckDB refuses longer records with an error or a
 * reject row up to its buffer size (32 MiB) but silently skips records longer than that, so
 * every body is scanned for this limit before DuckDB reads it (csv-record-scanner.ts).
 */
export const MAX_RECORD_BYTES = 2_000_000;

export type LineEnd = 'lf' | 'crlf';

/** Temp tables where DuckDB records faulty lines instead of failing. */
export interface Rejects {
  table: string;
  scan: string;
}

/**
 * A body on disk, as one file or as the consecutive parts of one (an upload is cut into
 * parts while it arrives; each part starts with a copy of the header line).
 */
export interface CsvSource {
  parts: readonly CsvPart[];
  /** Fields per record: the header's. */
  fieldCount: number;
  lineEnd: LineEnd;
}

export interface CsvPart {
  file: string;
  /** The body's line number of the part's line 2, its first line after the header. */
  firstLine: number;
}

export const csvField = (i: number) => quoteIdentifier(`c${i}`);

export const NDJSON_LINE = quoteIdentifier('line');

function fileList(parts: readonly CsvPart[]): string {
  return `[${parts.map((part) => quoteLiteral(part.file)).join(', ')}]`;
}

function rejectOptions(rejects: Rejects | undefined): string {
  return rejects
    ? `, store_rejects = true, rejects_table = ${quoteLiteral(rejects.table)}, rejects_scan = ${quoteLiteral(rejects.scan)}, rejects_limit = 1000`
    : '';
}

const NEW_LINE: Record<LineEnd, string> = { lf: String.raw`'\n'`, crlf: String.raw`'\r\n'` };

/** The options every read shares: explicit, so DuckDB detects nothing by itself. */
function common(lineEnd: LineEnd): string {
  return `auto_detect = false, new_line = ${NEW_LINE[lineEnd]}, max_line_size = ${MAX_RECORD_BYTES}, null_padding = false`;
}

/** The reader of a CSV body, every field as text c0, c1, …; with `rejects`, faulty lines are recorded. */
export function readCsv(source: CsvSource, rejects?: Rejects): string {
  const columns = Array.from({ length: source.fieldCount }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  return `read_csv(${fileList(source.parts)}, ${common(source.lineEnd)}, header = true, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${columns}}${rejectOptions(rejects)})`;
}

/** The reader of an NDJSON body, one line per row as text `line`. */
export function readNdjsonLines(parts: readonly CsvPart[], rejects?: Rejects): string {
  return `read_csv(${fileList(parts)}, ${common('lf')}, header = false, delim = '\u0001', quote = '', escape = '', columns = {'line': 'VARCHAR'}${rejectOptions(rejects)})`;
}

/** A line that holds no JSON value: skipped, as NDJSON readers do. */
export const ndjsonBlankLine = `(${NDJSON_LINE} IS NULL OR trim(${NDJSON_LINE}, ' \t') = '')`;
