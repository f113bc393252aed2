import {
  type Execution,
  type ExecutionState,
  isFinished,
  type SnapshotColumn,
  STATES,
  visibleState,
} from '../executions/execution.js';

/**
 * The execution result envelope of spec §2.2: the execution's fields, then `result` with
 * rows and metadata, and the next-page link. Absent values are left out, never null.
 * The rows arrive rendered (in memory or in a file), so the envelope is the text before
 * and after them.
 */

export interface ResultMetadata {
  column_names: string[];
  column_types: string[];
  datapoint_count: number;
  execution_time_millis: number;
  pending_time_millis: number;
  result_set_bytes: number;
  row_count: number;
  total_result_set_bytes: number;
  total_row_count: number;
}

/** What the envelope tells of a page besides its rows. */
export interface PageShape {
  /** The returned columns, in the order asked for. */
  columns: SnapshotColumn[];
  /** How many rows the page holds. */
  count: number;
  /** Rows that match the filters (all rows without filters). */
  totalRowCount: number;
}

export interface NextPage {
  offset: number;
  uri: string;
}

const iso = (date: Date | undefined) => date?.toISOString();

/** The execution's own fields, in the spec's order; `state` may be overridden (partial → failed). */
export function executionFields(
  execution: Execution,
  state: ExecutionState = visibleState(execution),
): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    execution_id: execution.id,
    query_id: execution.queryId,
    state,
    is_execution_finished: isFinished(execution),
    submitted_at: iso(execution.submittedAt),
    execution_started_at: iso(execution.startedAt),
    execution_ended_at: iso(execution.endedAt),
    cancelled_at: iso(execution.cancelledAt),
    expires_at: iso(execution.expiresAt),
  };
  for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
  return fields;
}

function timings(execution: Execution) {
  const submitted = execution.submittedAt.getTime();
  const started = execution.startedAt?.getTime() ?? submitted;
  const ended = execution.endedAt?.getTime() ?? started;
  return { pending: Math.max(0, started - submitted), execution: Math.max(0, ended - started) };
}

/** Metadata of one page. */
export function pageMetadata(execution: Execution, page: PageShape, rowsJsonBytes: number): ResultMetadata {
  const time = timings(execution);
  return {
    column_names: page.columns.map((c) => c.name),
    column_types: page.columns.map((c) => c.type),
    datapoint_count: page.count * page.columns.length,
    execution_time_millis: time.execution,
    pending_time_millis: time.pending,
    result_set_bytes: rowsJsonBytes,
    row_count: page.count,
    total_result_set_bytes: execution.resultBytes ?? rowsJsonBytes,
    total_row_count: page.totalRowCount,
  };
}

/** Metadata of the whole result, for the status endpoint's `result_metadata`. */
export function wholeResultMetadata(execution: Execution): ResultMetadata {
  const time = timings(execution);
  const columns = execution.columns ?? [];
  const rows = execution.rowCount ?? 0;
  const bytes = execution.resultBytes ?? 2;
  return {
    column_names: columns.map((c) => c.name),
    column_types: columns.map((c) => c.type),
    datapoint_count: rows * columns.length,
    execution_time_millis: time.execution,
    pending_time_millis: time.pending,
    result_set_bytes: bytes,
    row_count: rows,
    total_result_set_bytes: bytes,
    total_row_count: rows,
  };
}

/**
 * A results envelope with rows: the text before the page's rows, and the text after them
 * given the rows' bytes (a page sent as DuckDB writes it is counted while it is sent).
 */
export function resultsEnvelope(
  execution: Execution,
  state: ExecutionState,
  page: PageShape,
  next: NextPage | undefined,
): { head: string; tail: (rowsBytes: number) => string } {
  const fields = JSON.stringify(executionFields(execution, state));
  const link = next ? `,"next_offset":${next.offset},"next_uri":${JSON.stringify(next.uri)}` : '';
  return {
    head: `${fields.slice(0, -1)}${link},"result":{"rows":[`,
    // `[` + the rows + `]`: result_set_bytes, the UTF-8 bytes of the page's rows as JSON.
    tail: (rowsBytes) => `],"metadata":${JSON.stringify(pageMetadata(execution, page, rowsBytes + 2))}}}`,
  };
}

/** An envelope without rows: not finished, failed, cancelled, expired, or refused as partial. */
export function envelopeWithoutResult(
  execution: Execution,
  state: ExecutionState,
  error?: { type: string; message: string },
): Record<string, unknown> {
  const fields = executionFields(execution, state);
  const failure = error ?? (state === STATES.failed ? execution.error : undefined);
  return failure ? { ...fields, error: failure } : fields;
}
