import type { InterruptibleSession, Session } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
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

export async function createSnapshot(
  session: InterruptibleSession,
  executionId: string,
  sql: string,
  maxRows: number,
): Promise<SnapshotSummary> {
  const table = snapshotName(executionId);
  // One row more than kept tells whether the result was cut. CREATE TABLE AS answers the
  // number of rows it stored.
  const created = await session.query(
    `CREATE TABLE ${table} AS SELECT * FROM (\n${sql}\n) LIMIT ${maxRows + 1}`,
  );
  let rowCount = Number(created.rows[0]?.[0] ?? 0);
  const truncated = rowCount > maxRows;
  if (truncated) {
    // Relative to the first row id: inside the transaction that creates it, a table's rows
    // have transaction-local ids (from 2^55 in DuckDB 1.5); they become 0, 1, … at commit.
    await session.run(`DELETE FROM ${table} WHERE rowid >= (SELECT min(rowid) FROM ${table}) + ?`, [maxRows]);
    rowCount = maxRows;
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
