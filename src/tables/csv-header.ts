import { isUtf8 } from 'node:buffer';
import { badRequest } from '../errors.js';

/**
 * The header line of an uploaded CSV: read here, from the first bytes, because DuckDB's
 * reader renames empty and duplicate names instead of refusing them. Only this one line
 * is parsed in JavaScript; the rows are left to DuckDB.
 */

const MAX_COLUMN_NAME_LENGTH = 255;
const MAX_COLUMNS = 10_000;

export interface CsvHeader {
  columns: string[];
}

/**
 * Splits the first record of `head` (the first bytes of the CSV) into fields, quoted as
 * DuckDB's reader quotes (csv-record-scanner.ts): a quote opens a quoted name only at the
 * start of a field, after optional spaces, which are dropped; `""` inside is a quote.
 * Returns undefined when the head holds no data at all. `complete` says whether `head` is
 * the whole CSV, so that a header without a newline is accepted only when nothing follows it.
 */
export function parseCsvHeader(head: Buffer, complete: boolean): CsvHeader | undefined {
  let start = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) start = 3;
  const fields: string[] = [];
  let field: number[] = [];
  let quoted = false;
  let wasQuoted = false;
  let i = start;
  let ended = false;
  for (; i < head.length; i++) {
    const byte = head[i] as number;
    if (quoted) {
      if (byte !== 0x22) field.push(byte);
      else if (head[i + 1] === 0x22) {
        field.push(0x22);
        i++;
      } else quoted = false;
    } else if (byte === 0x22 && !wasQuoted && field.every((b) => b === 0x20)) {
      quoted = true;
      wasQuoted = true;
      field = [];
    } else if (byte === 0x2c) {
      fields.push(decodeName(field));
      field = [];
      wasQuoted = false;
    } else if (byte === 0x0a || (byte === 0x0d && head[i + 1] === 0x0a)) {
      ended = true;
      break;
    } else if (!(wasQuoted && byte === 0x20)) {
      field.push(byte);
    }
  }
  if (quoted) {
    throw badRequest(
      complete || i < head.length
        ? 'CSV line 1 (the header): a quoted column name is never closed'
        : 'CSV line 1 (the header) is too long',
    );
  }
  if (!ended && !complete) throw badRequest('CSV line 1 (the header) is too long');
  fields.push(decodeName(field));
  if (fields.length === 1 && fields[0] === '' && isBlank(head, start)) return undefined;
  return { columns: fields };
}

function isBlank(head: Buffer, start: number): boolean {
  for (let i = start; i < head.length; i++) {
    const byte = head[i];
    if (byte !== 0x0a && byte !== 0x0d && byte !== 0x20 && byte !== 0x09) return false;
  }
  return true;
}

function decodeName(bytes: number[]): string {
  const buffer = Buffer.from(bytes);
  if (!isUtf8(buffer)) throw badRequest('CSV line 1 (the header) is not valid UTF-8');
  return buffer.toString('utf8');
}

/**
 * Column names must start with a letter of any alphabet or `_`, must not be empty, and
 * must differ ignoring case (DuckDB's identifiers are case-insensitive). Every problem is
 * listed, not just the first.
 */
export function validateColumnNames(columns: readonly string[], where = 'CSV line 1 (the header)'): void {
  if (columns.length > MAX_COLUMNS)
    throw badRequest(`${where} has ${columns.length} columns; at most ${MAX_COLUMNS}`);
  const problems: string[] = [];
  const empty = columns.flatMap((name, i) => (name.trim() === '' ? [i + 1] : []));
  if (empty.length > 0) problems.push(`empty column name at position ${empty.join(', ')}`);
  const badStart = columns.filter((name) => name.trim() !== '' && !/^[\p{L}_]/u.test(name));
  if (badStart.length > 0) {
    problems.push(
      `column names must start with a letter or _: ${badStart.map((name) => JSON.stringify(name)).join(', ')}`,
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly those
  const control = columns.filter((name) => /[\u0000-\u001f\u007f]/.test(name));
  if (control.length > 0) {
    problems.push(
      `column names must not hold control characters: ${control.map((n) => JSON.stringify(n)).join(', ')}`,
    );
  }
  const long = columns.filter((name) => name.length > MAX_COLUMN_NAME_LENGTH);
  if (long.length > 0) problems.push(`column names must be at most ${MAX_COLUMN_NAME_LENGTH} characters`);
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  for (const name of columns) {
    const folded = name.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined && name.trim() !== '')
      duplicates.push(`${JSON.stringify(earlier)} and ${JSON.stringify(name)}`);
    else seen.set(folded, name);
  }
  if (duplicates.length > 0)
    problems.push(`column names must differ ignoring case: ${duplicates.join('; ')}`);
  if (problems.length > 0) throw badRequest(`${where}: ${problems.join('; ')}`);
}
