import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import { badRequest } from '../errors.js';
import type { Execution, SnapshotColumn } from '../executions/execution.js';
import { snapshotName } from '../executions/snapshot.js';
import {
  compileFilters,
  compileSortBy,
  QueryLanguageError,
  resolveColumns,
} from '../filter-language/index.js';
import type { Database, SqlValue } from '../storage/database.js';
import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import type { ResultRequest } from './result-request.js';
import { readResults } from './results-reader.js';

/**
 * An execution's result as a Parquet file, written by DuckDB's own writer from the snapshot
 * (`COPY … TO … (FORMAT parquet)`), with the request's `columns`, `filters` and `sort_by`
 * (and `limit`/`offset`) applied exactly as for JSON and CSV pages. The file goes to the
 * data directory's temporary folder and is streamed from there, so memory stays flat
 * whatever the result's size; the caller deletes it once sent.
 *
 * Types are DuckDB's, except 128-bit integers: Parquet has none, and DuckDB's writer turns
 * HUGEINT into DOUBLE, losing digits (measured: 2^127 - 1 read back as 1.7014118346046923e+38).
 * They are written as text, exactly, as int256/uint256 (BIGNUM) already are by the writer.
 */

export interface ParquetFile {
  file: string;
  bytes: number;
}

const EXACT_AS_TEXT = new Set(['hugeint', 'uhugeint']);

function selectList(columns: readonly SnapshotColumn[]): string {
  return columns
    .map((column) => {
      const name = quoteIdentifier(column.name);
      return EXACT_AS_TEXT.has(column.type) ? `CAST(${name} AS VARCHAR) AS ${name}` : name;
    })
    .join(', ');
}

interface Selection {
  sql: string;
  params: SqlValue[];
}

/** The SELECT over the snapshot that the file holds; names and values checked as for pages. */
function selection(execution: Execution, request: ResultRequest): Selection {
  if (request.sampleCount !== undefined)
    throw badRequest('query parameter "sample_count" is not available for Parquet files');
  const all = execution.columns ?? [];
  try {
    const selected = request.columns ? resolveColumns(request.columns, all) : all;
    const filter = request.filters ? compileFilters(request.filters, all) : undefined;
    const sort = request.sortBy ? compileSortBy(request.sortBy, all) : '';
    const params: SqlValue[] = [...((filter?.params ?? []) as SqlValue[])];
    let sql = `SELECT ${selectList(selected)} FROM ${snapshotName(execution.id)}`;
    if (filter) sql += ` WHERE ${filter.sql}`;
    // The snapshot's rowid breaks ties, as on every page: the file's order is the pages' order.
    sql += ` ORDER BY ${sort ? `${sort}, ` : ''}rowid`;
    if (request.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(request.limit);
    }
    if (request.offset > 0) {
      sql += ' OFFSET ?';
      params.push(request.offset);
    }
    return { sql, params };
  } catch (error) {
    if (error instanceof QueryLanguageError) throw badRequest(error.message);
    throw error;
  }
}

export async function writeParquet(
  database: Database,
  execution: Execution,
  request: ResultRequest,
  tmpDir: string,
): Promise<ParquetFile> {
  const { sql, params } = selection(execution, request);
  await fs.mkdir(tmpDir, { recursive: true });
  const file = path.join(tmpDir, `result-${ulid()}.parquet`);
  try {
    await readResults(database, request.reader ?? '', (session) =>
      session.run(`COPY (${sql}) TO ${quoteLiteral(file)} (FORMAT parquet)`, params),
    );
    const { size } = await fs.stat(file);
    return { file, bytes: size };
  } catch (error) {
    await fs.rm(file, { force: true });
    throw error;
  }
}
