import type { Execution, ExecutionState, SnapshotColumn } from '../executions/execution.js';
import { csvHeader, csvRowExpression, jsonRowExpression } from '../executions/row-rendering.js';
import { quoteIdentifier } from '../storage/sql.js';
import { type NextPage, type PageShape, resultsEnvelope } from './envelope.js';

/**
 * The formats a result is served in, as data: what DuckDB's writer is told (the SELECT list of
 * a row, COPY's options), what the file is (its extension, the bytes at its end that are not
 * rows), and what the answer around the rows is. Everything else (the page query, the files,
 * sending) is the same code for every format.
 *
 * JSON and CSV pages are rows rendered by DuckDB (row-rendering.ts), one VARCHAR each, which
 * its CSV writer, with quoting off, writes each followed by the format's row end: a large page
 * never passes through JavaScript strings (rows-file.ts says what that saved). Parquet is
 * DuckDB's own writer over the columns.
 */

/** The formats served in pages (the results endpoints' `/results` and `/results/csv`). */
export type ResultFormat = 'json' | 'csv';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** How DuckDB writes a result's rows into a file, and what that file is. */
export interface FileFormat {
  name: ResultFormat | 'parquet';
  contentType: string;
  extension: string;
  /** The SELECT list of a row: a page format's rendered VARCHAR (`r`), Parquet's columns. */
  selectList: (columns: readonly SnapshotColumn[]) => string;
  /** The options of `COPY … TO file (…)`. */
  copyOptions: string;
  /** Bytes at a file's end that are not rows: the `,` after the last JSON object. */
  trailingBytes: number;
}

/** What an answer holds around a page's rows. */
export interface PageFrame {
  head: string;
  /** The text after the rows, given their bytes (known only once sent, for a page in parts). */
  tail: (rowsBytes: number) => string;
  headers: Record<string, string>;
}

/** A format served in pages: rows rendered one VARCHAR each, each followed by `rowEnd`. */
export interface PageFormat extends FileFormat {
  name: ResultFormat;
  /** What follows each row: `,` after a JSON object (the last one's is trailing), LF after a CSV line. */
  rowEnd: string;
  /** What goes between the rows of two parts written apart: `,` between JSON objects, nothing after a CSV line. */
  separator: Buffer;
  /** The results path's ending, for next_uri: `/results` or `/results/csv`. */
  pathSuffix: string;
  /** The answer around the rows: the envelope (JSON), the header line and paging headers (CSV). */
  frame: (
    execution: Execution,
    state: ExecutionState,
    page: PageShape,
    next: NextPage | undefined,
  ) => PageFrame;
  /**
   * Whether an execution without servable rows is answered with its envelope (JSON: 200), or
   * refused (CSV: 409, its body having no place for a state).
   */
  envelopeWithoutRows: boolean;
}

/**
 * `USE_TMP_FILE false`: DuckDB writes into the file there, even when it exists, instead of
 * writing another and renaming it over (what it does by default for a file that exists); a
 * reader may then follow the very file DuckDB writes (rows-file.ts).
 */
const rowsCopy = (rowEnd: string) =>
  `FORMAT csv, HEADER false, QUOTE '', ESCAPE '', NEW_LINE ${rowEnd}, USE_TMP_FILE false`;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

const JSON_FORMAT: PageFormat = {
  name: 'json',
  contentType: JSON_TYPE,
  extension: 'jsonl',
  selectList: (columns) => `${jsonRowExpression(columns)} AS r`,
  copyOptions: rowsCopy(`','`),
  trailingBytes: 1,
  rowEnd: ',',
  separator: Buffer.from(','),
  pathSuffix: '',
  frame: (execution, state, page, next) => {
    const { head, tail } = resultsEnvelope(execution, state, page, next);
    return { head, tail, headers: NO_HEADERS };
  },
  envelopeWithoutRows: true,
};

const CSV_FORMAT: PageFormat = {
  name: 'csv',
  contentType: 'text/csv; charset=utf-8',
  extension: 'csv',
  selectList: (columns) => `${csvRowExpression(columns)} AS r`,
  copyOptions: rowsCopy(`E'\\n'`),
  trailingBytes: 0,
  rowEnd: '\n',
  separator: Buffer.alloc(0),
  pathSuffix: '/csv',
  // Paging travels in headers: the body has no place for it.
  frame: (_execution, _state, page, next) => ({
    head: `${csvHeader(page.columns)}\n`,
    tail: () => '',
    headers: next ? { 'X-Dune-Next-Offset': String(next.offset), 'X-Dune-Next-Uri': next.uri } : NO_HEADERS,
  }),
  envelopeWithoutRows: false,
};

export const PAGE_FORMATS: Readonly<Record<ResultFormat, PageFormat>> = {
  json: JSON_FORMAT,
  csv: CSV_FORMAT,
};

/**
 * Types are DuckDB's, except 128-bit integers: Parquet has none, and DuckDB's writer turns
 * HUGEINT into DOUBLE, losing digits (measured: 2^127 - 1 read back as 1.7014118346046923e+38).
 * They are written as text, exactly, as int256/uint256 (BIGNUM) already are by the writer.
 */
const EXACT_AS_TEXT = new Set(['hugeint', 'uhugeint']);

export const PARQUET_FORMAT: FileFormat = {
  name: 'parquet',
  contentType: 'application/vnd.apache.parquet',
  extension: 'parquet',
  selectList: (columns) =>
    columns
      .map((column) => {
        const name = quoteIdentifier(column.name);
        return EXACT_AS_TEXT.has(column.type) ? `CAST(${name} AS VARCHAR) AS ${name}` : name;
      })
      .join(', '),
  copyOptions: 'FORMAT parquet',
  trailingBytes: 0,
};

/** Rendered rows (JSON objects, or CSV lines without line ends) as a page's rows, as a file holds them less its trailing bytes. */
export function joinRows(rows: readonly string[], format: PageFormat): string {
  const joined = rows.join(format.rowEnd);
  return format.trailingBytes === 0 && rows.length > 0 ? joined + format.rowEnd : joined;
}
