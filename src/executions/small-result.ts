import type { Session } from '../storage/database.js';
import type { MaterializedRows } from '../storage/session.js';
import { quoteIdentifier } from '../storage/sql.js';
import { SNAPSHOT_SCHEMA, type SnapshotColumn, snapshotTable } from './execution.js';
import { isRenderedTypeName, renderJsonRows, snapshotColumns } from './json-rows.js';
import { jsonArrayBytes } from './row-rendering.js';
import { snapshotName } from './snapshot.js';

/**
 * A small result, held in memory first and written as the execution's table after the run
 * is announced (DESIGN §5 keeps a snapshot per execution: this one lands a moment later, in
 * the transaction that writes the run's record, ExecutionStore.saveAfter).
 *
 * A small query's run through a table cost three DuckDB statements before it could be seen:
 * `CREATE TABLE … AS` (with its commit), `DESCRIBE`, and the rows rendered as JSON. Measured
 * on the analytics benchmark's database (scratch script, medians of 55, 2026-11-27): 3.6–4.5
 * ms for `SELECT 1`, 4.5 ms for a grouped count of a dimension table. Run as one `SELECT …
 * LIMIT`, its values rendered in JavaScript (json-rows.ts), the run is seen after 0.8 and 2.0
 * ms; the table (CREATE TABLE, DuckDB's appender, the record's INSERT, one commit) follows in
 * 2 ms that no client waits for. Whoever reads the table waits for it (`Executions.resultStored`).
 *
 * Which runs take this way: those whose SQL text's last run had at most SMALL_ROWS rows and
 * SMALL_VALUES values, of types rendered in JavaScript, and a first run whose outermost LIMIT
 * is at most SMALL_ROWS (`SmallShapes`). Any other first run takes the table's way, which stores any result at full
 * speed: a query whose result is large would pay for a wasted run here. One whose result grew
 * past those since, or holds a type not rendered in JavaScript, is run again the table's way,
 * and its text is remembered as not small.
 */

/** A result of at most this many rows is held in memory first… */
export const SMALL_ROWS = 1_000;

/**
 * …and of at most this many values (rows × columns). Its rendering and its table's append run
 * on the event loop, where every key's requests wait: about 0.5 µs a value for the rendering
 * (1,000 rows × 20 columns of text, doubles, timestamps and integers: 10 ms) and 0.85–2.3 ms
 * for DuckDB's appender, whose flush is synchronous (1 to 1,000 rows × 20 columns; scratch
 * scripts, 2026-11-27). A larger result is rendered by DuckDB on its own threads.
 */
export const SMALL_VALUES = 2_000;

/** SQL texts remembered at most, and the longest one remembered. */
const SHAPES_KEPT = 512;
const SHAPE_TEXT_MAX = 16_384;

/**
 * The outermost LIMIT at the end of a run's SQL, when it is a plain number: a result that can
 * have no more rows. Users' SQL comes here as DuckDB's own rewrite of the checked tree
 * (`json_deserialize_sql`: no comments, a LIMIT at the end is the whole statement's; a
 * subquery's ends in a parenthesis), the workspace's table preview included (`SELECT * FROM
 * t LIMIT 100`). A wrong guess costs a run: the result is then stored the table's way.
 */
const OUTERMOST_LIMIT = /\sLIMIT (\d{1,9})(?: OFFSET \d+)?$/;

export function outermostLimit(sql: string): number | undefined {
  const match = OUTERMOST_LIMIT.exec(sql);
  return match ? Number(match[1]) : undefined;
}

/**
 * Which SQL texts' last run gave a small result of rendered types, and which did not (an LRU
 * of texts): the next run of a small one is held in memory; a text not run yet is when its
 * outermost LIMIT bounds it.
 */
export class SmallShapes {
  private readonly known = new Map<string, boolean>();

  /** Whether the next run of the text may be held in memory. */
  expectsSmall(sql: string): boolean {
    const small = this.known.get(sql);
    if (small === undefined) return (outermostLimit(sql) ?? Number.POSITIVE_INFINITY) <= SMALL_ROWS;
    this.keep(sql, small);
    return small;
  }

  /** Records how a run of the text ended: small (rows, rendered types) or not. */
  note(sql: string, columns: readonly SnapshotColumn[], rowCount: number, truncated: boolean): void {
    const small =
      !truncated &&
      rowCount <= SMALL_ROWS &&
      rowCount * columns.length <= SMALL_VALUES &&
      columns.every((column) => isRenderedTypeName(column.type));
    this.keep(sql, small);
  }

  /** A run held in memory found it was not small after all. */
  notSmall(sql: string): void {
    this.keep(sql, false);
  }

  private keep(sql: string, small: boolean): void {
    if (sql.length > SHAPE_TEXT_MAX) return;
    this.known.delete(sql);
    this.known.set(sql, small);
    if (this.known.size > SHAPES_KEPT) this.known.delete(this.known.keys().next().value as string);
  }
}

export interface SmallResult {
  columns: SnapshotColumn[];
  /** The rows as JSON object texts, in order. */
  rows: string[];
  /** total_result_set_bytes. */
  bytes: number;
  /** Writes the rows as the execution's table, in the caller's transaction. */
  write: (session: Session) => Promise<void>;
}

/**
 * Runs `sql` for at most `maxRows` rows and renders them; undefined when the result is not
 * one for memory after all (more rows, over `maxBytes`, a value or a name the table's way
 * handles), and the caller then stores it the table's way.
 */
export async function runSmall(
  session: Session,
  executionId: string,
  sql: string,
  maxRows: number,
  maxBytes: number,
): Promise<SmallResult | undefined> {
  const limit = Math.min(SMALL_ROWS, maxRows);
  const result = await session.chunks(`SELECT * FROM (\n${sql}\n) LIMIT ${limit + 1}`);
  if (
    result.rowCount > limit ||
    result.rowCount * result.columns.length > SMALL_VALUES ||
    result.columns.length === 0 ||
    !plainNames(result)
  )
    return undefined;
  const rows = renderJsonRows(result.columns, result.chunks);
  if (!rows) return undefined;
  const bytes = jsonArrayBytes(rows);
  if (bytes > maxBytes) return undefined;
  return {
    columns: snapshotColumns(result.columns),
    rows,
    bytes,
    write: (s) => writeSnapshot(s, executionId, result),
  };
}

/**
 * Names a table takes as they are: distinct whatever their case (`CREATE TABLE … AS` renames
 * a second `a` to `a_1`), and not `rowid`, which the table's way refuses with its reason.
 */
function plainNames(result: MaterializedRows): boolean {
  const names = new Set(result.columns.map((column) => column.name.toLowerCase()));
  return names.size === result.columns.length && !names.has('rowid');
}

async function writeSnapshot(session: Session, executionId: string, result: MaterializedRows): Promise<void> {
  const columns = result.columns.map((column) => `${quoteIdentifier(column.name)} ${String(column.type)}`);
  await session.run(`CREATE TABLE ${snapshotName(executionId)} (${columns.join(', ')})`);
  await session.append(SNAPSHOT_SCHEMA, snapshotTable(executionId), result.chunks);
}
