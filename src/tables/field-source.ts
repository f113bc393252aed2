import { quoteIdentifier } from '../storage/sql.js';
import {
  type CsvPart,
  type CsvSource,
  csvField,
  NDJSON_LINE,
  ndjsonBlankLine,
  readCsv,
  readNdjsonLines,
} from './csv-dialect.js';
import { csvRecordLines } from './file-lines.js';
import { stringList } from './insert-plan.js';

/**
 * An uploaded body as rows of text fields `c0, c1, …`, whatever its format, so that one
 * loader types and loads CSV and NDJSON alike (csv-loader.ts). A CSV's fields are its
 * columns; an NDJSON line's fields are the values of its keys (`pointers`), as text, a
 * missing key NULL; blank lines are no rows.
 */
export interface FieldSource extends CsvSource {
  format: 'csv' | 'ndjson';
  /** NDJSON: the JSON Pointer of each field's key; [] for CSV. */
  pointers: readonly string[];
}

const ORDINAL = quoteIdentifier('0 ordinal');

/** The NDJSON line's values as c0…cN, beside `extra` columns of the line's row. */
function ndjsonFields(source: FieldSource, extra: string): string {
  const values = quoteIdentifier('0 values');
  const fields = source.pointers.map((_, i) => `${values}[${i + 1}] AS ${csvField(i)}`);
  return `(SELECT ${[...fields, extra].filter(Boolean).join(', ')} FROM (
      SELECT *, json_extract_string(${NDJSON_LINE}, ${stringList(source.pointers)}) AS ${values}
        FROM (SELECT row_number() OVER () AS ${ORDINAL}, ${NDJSON_LINE} FROM ${readNdjsonLines(source.parts)})
       WHERE NOT ${ndjsonBlankLine}))`;
}

/** The rows of the body, fields c0…cN as text. */
export function readFields(source: FieldSource): string {
  if (source.format === 'csv') return readCsv(source);
  return ndjsonFields(source, '');
}

/**
 * The rows with `"0 ordinal"`, their place in the body: the record's number for CSV (1 the
 * first after the header), the line's for NDJSON. `rowLine` turns it into a line number.
 */
export function numberedFields(source: FieldSource): string {
  if (source.format === 'csv')
    return `(SELECT row_number() OVER () AS ${ORDINAL}, * FROM ${readCsv(source)})`;
  return ndjsonFields(source, ORDINAL);
}

export const ordinalColumn = ORDINAL;

/**
 * The body's line on which row `ordinal` (numberedFields) starts: for NDJSON the ordinal is
 * its line; a CSV's parts are scanned for it (only ever after something was found wrong).
 */
export async function rowLine(source: FieldSource, ordinal: number): Promise<number> {
  return (await rowLines(source, [ordinal])).get(ordinal) as number;
}

/** The lines of several rows, in one scan of the body however many they are. */
export async function rowLines(
  source: FieldSource,
  ordinals: readonly number[],
): Promise<Map<number, number>> {
  const lines = new Map<number, number>();
  if (source.format === 'ndjson') {
    for (const ordinal of ordinals)
      lines.set(ordinal, ordinal + ((source.parts[0] as CsvPart).firstLine - 1));
    return lines;
  }
  const wanted = [...new Set(ordinals)].sort((a, b) => a - b);
  let before = 0;
  for (const part of source.parts) {
    if (wanted.length === 0) break;
    const inPart = wanted.map((ordinal) => ordinal - before);
    const found = await csvRecordLines(part.file, inPart, source.fieldCount);
    for (const [at, line] of found) lines.set(at + before, part.firstLine - 2 + line);
    before += found.records;
    while (wanted.length > 0 && lines.has(wanted[0] as number)) wanted.shift();
  }
  if (wanted.length > 0) throw new Error(`rows ${wanted.join(', ')} are not in the body`);
  return lines;
}
