import fs from 'node:fs/promises';
import { badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import {
  InterruptedError,
  OutOfMemoryError,
  StorageError,
  StorageFullError,
} from '../storage/storage-error.js';
import { validateColumnNames } from './csv-header.js';

/**
 * Parquet bodies (upload, insert, upsert), read by DuckDB's own Parquet reader from the file
 * the body was streamed to. A file is one when it starts and ends with the magic `PAR1`
 * (checked here, so that a CSV sent as Parquet or a file cut short is named as such); its
 * schema is DuckDB's reading of the footer, kept as it is (decimals and 64-bit integers
 * exact). Nested columns (lists, structs, maps, unions) are refused until tables take them.
 */

const MAGIC = Buffer.from('PAR1');

export interface ParquetColumn {
  name: string;
  /** DuckDB's type name, e.g. `DECIMAL(38,18)`, `TIMESTAMP WITH TIME ZONE`. */
  type: string;
}

const notParquet = (why: string) => badRequest(`the body is not a Parquet file: ${why}`);

/** Refuses a body that is not a whole Parquet file, from its first and last bytes. */
export async function checkParquetFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) throw notParquet('the body is empty');
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (!head.equals(MAGIC)) throw notParquet('it does not start with the Parquet magic bytes PAR1');
    await handle.read(tail, 0, 4, Math.max(0, size - 4));
    if (size < 12 || !tail.equals(MAGIC)) {
      throw notParquet('it does not end with the magic bytes PAR1: it was cut short (truncated)');
    }
  } finally {
    await handle.close();
  }
}

/** DuckDB's reader of a Parquet body; `rowNumbers` adds `file_row_number` (0-based). */
export function readParquet(file: string, rowNumbers = false): string {
  return `read_parquet(${quoteLiteral(file)}${rowNumbers ? ', file_row_number = true' : ''})`;
}

const NESTED = /^(STRUCT|MAP|UNION)\(|\]$/;

/** The columns of a Parquet body; nested types and bad names are a 400. */
export async function parquetColumns(session: Session, file: string): Promise<ParquetColumn[]> {
  const rows = await readingParquet(() =>
    session.all<{ column_name: string; column_type: string }>(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${readParquet(file)})`,
    ),
  );
  const columns = rows.map((row) => ({ name: row.column_name, type: row.column_type }));
  if (columns.length === 0) throw notParquet('it has no columns');
  validateColumnNames(
    columns.map((c) => c.name),
    'the Parquet schema',
  );
  const nested = columns.filter((column) => NESTED.test(column.type));
  if (nested.length > 0) {
    throw badRequest(
      `the Parquet file has nested columns, which tables do not take yet: ${nested.map((c) => `"${c.name}" (${c.type})`).join(', ')}; flatten them into columns of their own, or send them as text`,
    );
  }
  return columns;
}

/**
 * Runs a statement that reads a Parquet body: DuckDB's failure to read it (a damaged footer
 * or page) is the body's fault, a 400; running out of memory or disk, an interrupt, stay
 * what they are.
 */
export async function readingParquet<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (
      error instanceof StorageError &&
      !(error instanceof OutOfMemoryError) &&
      !(error instanceof InterruptedError) &&
      !(error instanceof StorageFullError)
    ) {
      throw notParquet('DuckDB could not read it (its footer or pages are damaged or cut short)');
    }
    throw error;
  }
}

/**
 * The text of a Parquet value as an insert converts text (column-values.ts): the same checks
 * then hold for every format (a 1.5 is no bigint, whatever the body). Bytes become `0x` hex,
 * and an instant its UTC time, as the service shows them.
 */
export function parquetText(column: ParquetColumn): string {
  const name = quoteIdentifier(column.name);
  if (column.type === 'BLOB') return `'0x' || lower(hex(${name}))`;
  if (column.type === 'TIMESTAMP WITH TIME ZONE') return `CAST(CAST(${name} AS TIMESTAMP) AS VARCHAR)`;
  return `CAST(${name} AS VARCHAR)`;
}
