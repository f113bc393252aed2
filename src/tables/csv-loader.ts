import fs from 'node:fs/promises';
import { badRequest } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { qualifiedName, quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import { StorageError } from '../storage/storage-error.js';
import {
  conversion,
  type InferredType,
  inferenceSelectList,
  readInference,
  sqlType,
  WIDEN_MARKER,
} from './csv-column-types.js';
import { lineAtByte } from './file-lines.js';

/**
 * Loads a CSV file into a table with DuckDB's own reader, inside the caller's transaction.
 *
 * The file is read as text columns named c0, c1, … (so no user text enters the reader's
 * options), converted by one expression per column, and named in the SELECT through the
 * quoting function. Types are inferred from the first rows; a later value that does not
 * fit stops the load, which is redone with types inferred from every row.
 */

/** Rows the first inference looks at, as many as DuckDB's own sniffer. */
const SAMPLE_ROWS = 20_480;

export interface LoadedColumn {
  name: string;
  type: string;
}

export interface LoadResult {
  rowCount: number;
  columns: LoadedColumn[];
}

interface ReaderOptions {
  file: string;
  columnCount: number;
  /** Skip faulty lines (inference: the load that follows reports them). */
  skipFaulty?: boolean;
  /** Temp table names where DuckDB records the first faulty line. */
  rejects?: { table: string; scan: string };
}

function readCsv(options: ReaderOptions): string {
  const columns = Array.from({ length: options.columnCount }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  const rejects = options.rejects
    ? `, store_rejects = true, rejects_table = ${quoteLiteral(options.rejects.table)}, rejects_scan = ${quoteLiteral(options.rejects.scan)}, rejects_limit = 1000`
    : options.skipFaulty
      ? ', ignore_errors = true'
      : '';
  return `read_csv(?, auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, null_padding = false, columns = {${columns}}${rejects})`;
}

const sourceColumn = (i: number) => quoteIdentifier(`c${i}`);

async function inferTypes(
  session: Session,
  file: string,
  columnCount: number,
  sample: boolean,
): Promise<InferredType[]> {
  const sources = Array.from({ length: columnCount }, (_, i) => sourceColumn(i));
  const from = readCsv({ file, columnCount, skipFaulty: true });
  const source = sample ? `(SELECT * FROM ${from} LIMIT ${SAMPLE_ROWS})` : from;
  const [row] = await session.all(`SELECT ${inferenceSelectList(sources)} FROM ${source}`, [file]);
  return readInference(row ?? {}, columnCount);
}

/**
 * Infers column types from a sample file of the CSV's first rows (cut at a line end),
 * while the rest of an upload is still arriving. Never fails: undefined means "infer later".
 */
export async function inferFromSample(
  database: Database,
  sampleFile: string,
  columnCount: number,
): Promise<InferredType[] | undefined> {
  try {
    return await database.read((session) => inferTypes(session, sampleFile, columnCount, true));
  } catch {
    return undefined;
  } finally {
    await fs.rm(sampleFile, { force: true });
  }
}

export interface CsvTarget {
  file: string;
  columnNames: readonly string[];
  namespace: string;
  table: string;
  /** Unique per load: names the temp tables of faulty lines. */
  jobId: string;
  /** Types already inferred from the first rows, if any. */
  sampled?: Promise<InferredType[] | undefined>;
}

/**
 * Replaces `namespace.table` with the CSV, in a write transaction that also runs
 * `finish` (the caller's bookkeeping), so both commit together or not at all. DuckDB aborts
 * a transaction on any error, so a load that needs wider types is redone in a new one.
 */
export async function replaceTableWithCsv(
  database: Database,
  target: CsvTarget,
  finish: (session: Session, loaded: LoadResult) => Promise<void>,
): Promise<LoadResult> {
  const { file, columnNames, jobId } = target;
  const columnCount = columnNames.length;
  const rejects = { table: `rejects_${jobId}`, scan: `rejects_scan_${jobId}` };
  const load = (types: InferredType[]) =>
    database.write(async (session) => {
      const select = columnNames
        .map(
          (name, i) =>
            `${conversion(sourceColumn(i), types[i] as InferredType, i)} AS ${quoteIdentifier(name)}`,
        )
        .join(', ');
      const qualified = qualifiedName(target.namespace, target.table);
      await session.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(target.namespace)}`);
      await session.run(
        `CREATE OR REPLACE TABLE ${qualified} AS SELECT ${select} FROM ${readCsv({ file, columnCount, rejects })}`,
        [file],
      );
      await throwFirstReject(session, file, rejects.table, columnCount);
      for (const temp of [rejects.table, rejects.scan]) {
        await session.run(`DROP TABLE IF EXISTS temp.${quoteIdentifier(temp)}`);
      }
      const [count] = await session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${qualified}`);
      const loaded: LoadResult = {
        rowCount: Number(count?.n ?? 0),
        columns: columnNames.map((name, i) => ({ name, type: sqlType(types[i] as InferredType) })),
      };
      await finish(session, loaded);
      return loaded;
    });
  try {
    const sampled =
      (await target.sampled) ??
      (await database.read((session) => inferTypes(session, file, columnCount, true)));
    try {
      return await load(sampled);
    } catch (error) {
      if (!(error instanceof StorageError && error.message.includes(WIDEN_MARKER))) throw error;
    }
    const full = await database.read((session) => inferTypes(session, file, columnCount, false));
    return await load(full);
  } catch (error) {
    if (error instanceof StorageError) throw describeReadError(error);
    throw error;
  }
}

interface RejectRow {
  line_byte_position: bigint | null;
  byte_position: bigint | null;
  error_type: string;
  column_name: string | null;
}

async function throwFirstReject(
  session: Session,
  file: string,
  table: string,
  columnCount: number,
): Promise<void> {
  const rows = await session.all<RejectRow>(
    `SELECT line_byte_position, byte_position, CAST(error_type AS VARCHAR) AS error_type, column_name
       FROM temp.${quoteIdentifier(table)} ORDER BY byte_position LIMIT 1`,
  );
  const reject = rows[0];
  if (!reject) return;
  const position = Number(reject.line_byte_position ?? reject.byte_position ?? 0);
  const line = await lineAtByte(file, position);
  throw badRequest(describeReject(reject.error_type, line, columnCount));
}

function describeReject(type: string, line: number, columnCount: number): string {
  switch (type) {
    case 'MISSING COLUMNS':
      return `CSV line ${line} has fewer fields than the ${columnCount} columns of the header`;
    case 'TOO MANY COLUMNS':
      return `CSV line ${line} has more fields than the ${columnCount} columns of the header`;
    case 'UNQUOTED VALUE':
      return `CSV line ${line}: a quoted value is not closed, or text follows its closing quote`;
    case 'INVALID ENCODING':
    case 'INVALID UNICODE':
      return `CSV line ${line} is not valid UTF-8`;
    case 'LINE SIZE OVER MAXIMUM':
      return `CSV line ${line} is longer than the maximum line size (2 MB)`;
    default:
      return `CSV line ${line} could not be read (${type.toLowerCase()})`;
  }
}

/**
 * A read error DuckDB raised instead of recording a faulty line. Its message names the
 * temporary file, which clients must not see: only its first sentence is kept.
 */
function describeReadError(error: StorageError): Error {
  const firstLine = error.message.split('\n')[0] ?? '';
  if (/^(Invalid Input|Conversion) Error/.test(firstLine)) {
    const line = /CSV Error on Line: (\d+)/.exec(error.message)?.[1];
    const reason = firstLine.replace(/^[A-Za-z ]+Error: /, '').replace(/"[^"]*"/g, 'the file');
    return badRequest(`the CSV could not be read${line ? ` near line ${line}` : ''}: ${reason}`);
  }
  return error;
}
