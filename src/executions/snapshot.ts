import type { InterruptibleSession, Session } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { RaisedError, raise } from '../storage/storage-error.js';
import { SNAPSHOT_SCHEMA, type SnapshotColumn, snapshotTable } from './execution.js';
import { jsonRowExpression } from './row-rendering.js';

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
  /** Counted: the counter's value after the run's last row, where the next run on it starts. */
  counted?: bigint;
}

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export function snapshotName(executionId: string): string {
  return qualifiedName(SNAPSHOT_SCHEMA, snapshotTable(executionId));
}

/** The result has more rows than the cap: store it again, cut, in a new transaction. */
export class ResultOverCapError extends Error {
  override name = 'ResultOverCapError';
}

/** Where a run counts its rows as they pass: a sequence, and its value before the first. */
export interface RowCounter {
  sequence: string;
  start: bigint;
}

/** How a snapshot is stored: every row, counted up to the cap; or cut at `rows` rows. */
export type StoreMode = { counter: RowCounter } | { cutAt: number };

/** A counter of the run's connection's own, for a run that has no slot of the storing watch. */
const LOCAL_COUNTER = 'temp.main.service_result_rows';
const OVER_CAP = 'result over the row cap';

/**
 * The value of `sequence` before the run's first row: `known` when the previous run on it
 * ended cleanly (SnapshotSummary.counted), else read (DuckDB has no setval), a statement more.
 */
export async function startCounter(session: Session, sequence?: string, known?: bigint): Promise<RowCounter> {
  if (sequence !== undefined && known !== undefined) return { sequence, start: known };
  if (sequence === undefined) {
    await session.run(`CREATE OR REPLACE TEMP SEQUENCE ${LOCAL_COUNTER} START 1`);
    return { sequence: LOCAL_COUNTER, start: 0n };
  }
  const [row] = await session.all<{ start: bigint }>(`SELECT nextval('${sequence}') AS start`);
  return { sequence, start: BigInt(row?.start ?? 0n) };
}

/**
 * Stores the result of `sql` as the execution's table, committed at once (the statement's own
 * transaction: the run's record is written after, run-results.ts).
 *
 * Counted, every row is stored, each counted as it passes by a sequence that fails the
 * statement at row `maxRows + 1`: DuckDB stores the rows in parallel and in order, and a
 * runaway query stops at the cap. A `LIMIT maxRows + 1` would do the same in one statement,
 * but a LIMIT that keeps the rows' order collects them on one thread: a million rows of ten
 * million took 386–423 ms against 243–252 ms with the counter (a scratch script, DuckDB 1.5.6,
 * docs/library-notes.md). A result over the cap throws ResultOverCapError, and the caller
 * stores it again, cut: the LIMIT, then the rows past the cut deleted. A result stopped at the
 * byte cap (storing-watch.ts) is stored again cut the same way. The counter's sequence is also
 * what the storing watch reads to know how many rows a run has stored.
 *
 * The table, its columns, its row count and the counter's value come in one call: DuckDB runs
 * the statements of one text one after the other and answers the first that returns rows.
 * Each call is a round trip through libuv's pool; one call instead of two and no
 * transaction of our own took a `SELECT 1` run from 4.2 to 2.7 ms (scratch script, 2026-11-27).
 */
export async function createSnapshot(
  session: InterruptibleSession,
  executionId: string,
  sql: string,
  maxRows: number,
  mode: StoreMode,
): Promise<SnapshotSummary> {
  const table = snapshotName(executionId);
  let created: CreatedTable;
  if ('counter' in mode) {
    const { sequence, start } = mode.counter;
    try {
      created = await createTable(
        session,
        `CREATE TABLE ${table} AS SELECT * FROM (\n${sql}\n) ` +
          `WHERE CASE WHEN nextval('${sequence}') > ${start + BigInt(maxRows)} THEN ${raise(OVER_CAP)} ELSE true END`,
        table,
        // A counter of the connection's own is new: `currval` fails on it until a first row.
        sequence === LOCAL_COUNTER ? undefined : sequence,
      );
    } catch (error) {
      if (error instanceof RaisedError && error.payload === OVER_CAP) throw new ResultOverCapError();
      throw error;
    }
  } else {
    const keep = Math.min(mode.cutAt, maxRows);
    // One row more than kept tells whether the result was cut. OR REPLACE: a first try may
    // have committed its table before it was stopped.
    created = await createTable(
      session,
      `CREATE OR REPLACE TABLE ${table} AS SELECT * FROM (\n${sql}\n) LIMIT ${keep + 1}`,
      table,
    );
    if (created.rowCount > keep) {
      created.rowCount = await keepFirstRows(session, table, keep);
      return { ...created, truncated: true };
    }
  }
  return { ...created, truncated: false };
}

interface CreatedTable {
  columns: SnapshotColumn[];
  rowCount: number;
  counted?: bigint;
}

/**
 * Runs `create` and reads what was made: the columns with DuckDB's type names (DESCRIBE names
 * types as duckdb_columns() does, and costs a fixed 1 ms where duckdb_columns() scans the
 * whole catalog), the row count, and the counter's value.
 */
async function createTable(
  session: Session,
  create: string,
  table: string,
  sequence?: string,
): Promise<CreatedTable> {
  const counted = sequence === undefined ? 'NULL' : `currval('${sequence}')`;
  const described = await session.all<{
    column_name: string;
    column_type: string;
    n: bigint;
    counted: bigint | null;
  }>(
    `${create};\nSELECT column_name, column_type, (SELECT count(*) FROM ${table}) AS n, ${counted} AS counted FROM (DESCRIBE ${table})`,
  );
  const columns = described.map((row) => ({ name: row.column_name, type: row.column_type.toLowerCase() }));
  if (columns.some((c) => c.name.toLowerCase() === 'rowid')) {
    throw new SnapshotError(
      'the result has a column named "rowid", which the service needs for row order; rename it',
    );
  }
  const first = described[0];
  return {
    columns,
    rowCount: Number(first?.n ?? 0),
    ...(first?.counted !== null && first?.counted !== undefined ? { counted: BigInt(first.counted) } : {}),
  };
}

/**
 * Deletes every row of the snapshot after its first `rows`. Relative to the first row id:
 * inside a transaction that creates it, a table's rows have transaction-local ids (from
 * 2^55 in DuckDB 1.5); they become 0, 1, … at commit.
 */
export async function keepFirstRows(session: Session, table: string, rows: number): Promise<number> {
  await session.run(`DELETE FROM ${table} WHERE rowid >= (SELECT min(rowid) FROM ${table}) + ?`, [rows]);
  return rows;
}

/**
 * Cuts a stored snapshot to the rows whose JSON, as pages send it (total_result_set_bytes),
 * fits in `maxBytes`: the rows up to the last whose running total of bytes is within it.
 * Renders every row once; only a result over the byte cap pays for it.
 */
export async function cutToBytes(
  session: Session,
  executionId: string,
  columns: readonly SnapshotColumn[],
  maxBytes: number,
): Promise<number> {
  const table = snapshotName(executionId);
  // `[` and `]`, and per row its text and the `,` before the next.
  const [row] = await session.all<{ rows: bigint }>(
    `SELECT count(*) AS rows FROM (
       SELECT sum(strlen(${jsonRowExpression(columns)}) + 1) OVER (ORDER BY rowid ROWS UNBOUNDED PRECEDING) AS bytes
       FROM ${table}
     ) WHERE bytes + 1 <= ?`,
    [maxBytes],
  );
  return keepFirstRows(session, table, Number(row?.rows ?? 0));
}

export async function dropSnapshot(session: Session, executionId: string): Promise<void> {
  await dropSnapshots(session, [executionId]);
}

/** Drops the snapshots of several executions in one call (one statement each, in one text). */
export async function dropSnapshots(session: Session, executionIds: readonly string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await session.run(executionIds.map((id) => `DROP TABLE IF EXISTS ${snapshotName(id)}`).join(';\n'));
}
