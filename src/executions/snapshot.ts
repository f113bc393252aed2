import type { InterruptibleSession, Session } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { RaisedError, raise } from '../storage/storage-error.js';
import { SNAPSHOT_SCHEMA, type SnapshotColumn, snapshotTable } from './execution.js';

/**
 * An execution's rows, stored once as a table that is never written again. The query's
 * own ORDER BY is kept (CREATE TABLE AS keeps insertion order), and DuckDB's `rowid` of
 * this never-updated table is the row's ordinal: the tie-breaker of every sort, so pages
 * never overlap or skip.
 */

export interface SnapshotSummary {
  columns: SnapshotColumn[];
  rowCount: number;
  /** Whether the result had more than `maxRows` rows and was cut to that. */
  truncated: boolean;
}

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export function snapshotName(executionId: string): string {
  return qualifiedName(SNAPSHOT_SCHEMA, snapshotTable(executionId));
}

/** The result has more rows than the cap: store it again with `cut: true`, in a new transaction. */
export class ResultOverCapError extends Error {
  override name = 'ResultOverCapError';
}

/** The run's connection's own counter of the rows being stored (a temporary sequence). */
const ROW_COUNTER = 'temp.main.service_result_rows';
const OVER_CAP = 'result over the row cap';

/**
 * Stores the result of `sql` as the execution's table.
 *
 * At first (`cut` false) every row is stored, each counted as it passes by a sequence that
 * fails the statement at row `maxRows + 1`: DuckDB stores the rows in parallel and in order,
 * and a runaway query stops at the cap. A `LIMIT maxRows + 1` would do the same in one
 * statement, but a LIMIT that keeps the rows' order collects them on one thread: a million
 * rows of ten million took 386–423 ms against 243–252 ms with the counter (a scratch script,
 * DuckDB 1.5.6, docs/library-notes.md). The failed statement ends its transaction (DuckDB has
 * no savepoints), so a result over the cap throws ResultOverCapError, and the caller stores it
 * again with `cut` true: the LIMIT, then the rows past the cap deleted.
 */
export async function createSnapshot(
  session: InterruptibleSession,
  executionId: string,
  sql: string,
  maxRows: number,
  cut = false,
): Promise<SnapshotSummary> {
  const table = snapshotName(executionId);
  let rowCount: number;
  let truncated = false;
  if (!cut) {
    // CREATE TABLE AS answers the number of rows it stored.
    await session.run(`CREATE OR REPLACE TEMP SEQUENCE ${ROW_COUNTER}`);
    try {
      const created = await session.query(
        `CREATE TABLE ${table} AS SELECT * FROM (\n${sql}\n) ` +
          `WHERE CASE WHEN nextval('${ROW_COUNTER}') > ${maxRows} THEN ${raise(OVER_CAP)} ELSE true END`,
      );
      rowCount = Number(created.rows[0]?.[0] ?? 0);
    } catch (error) {
      if (error instanceof RaisedError && error.payload === OVER_CAP) throw new ResultOverCapError();
      throw error;
    }
  } else {
    // One row more than kept tells whether the result was cut.
    const created = await session.query(
      `CREATE TABLE ${table} AS SELECT * FROM (\n${sql}\n) LIMIT ${maxRows + 1}`,
    );
    rowCount = Number(created.rows[0]?.[0] ?? 0);
    truncated = rowCount > maxRows;
    if (truncated) {
      // Relative to the first row id: inside the transaction that creates it, a table's rows
      // have transaction-local ids (from 2^55 in DuckDB 1.5); they become 0, 1, … at commit.
      await session.run(`DELETE FROM ${table} WHERE rowid >= (SELECT min(rowid) FROM ${table}) + ?`, [
        maxRows,
      ]);
      rowCount = maxRows;
    }
  }
  const columns = await snapshotColumns(session, executionId);
  if (columns.some((c) => c.name.toLowerCase() === 'rowid')) {
    throw new SnapshotError(
      'the result has a column named "rowid", which the service needs for row order; rename it',
    );
  }
  return { columns, rowCount, truncated };
}

/**
 * The snapshot's columns with DuckDB's type names. DESCRIBE names types as duckdb_columns()
 * does, and costs a fixed 1 ms where duckdb_columns() scans the whole catalog.
 */
export async function snapshotColumns(session: Session, executionId: string): Promise<SnapshotColumn[]> {
  const rows = await session.all<{ column_name: string; column_type: string }>(
    `DESCRIBE ${snapshotName(executionId)}`,
  );
  return rows.map((row) => ({ name: row.column_name, type: row.column_type.toLowerCase() }));
}

export async function dropSnapshot(session: Session, executionId: string): Promise<void> {
  await session.run(`DROP TABLE IF EXISTS ${snapshotName(executionId)}`);
}
