/**
 * An execution: one run of a query (an operator's query file, a user's saved query, or ad-hoc
 * SQL), and the immutable snapshot of its rows. The record's life: PENDING (queued) →
 * EXECUTING → COMPLETED | COMPLETED_PARTIAL (the result was larger than MAX_RESULT_ROWS and
 * is kept truncated) | FAILED | CANCELLED; a finished one reads as EXPIRED after
 * `expiresAt`, and is purged later.
 */

export const STATES = {
  pending: 'QUERY_STATE_PENDING',
  executing: 'QUERY_STATE_EXECUTING',
  completed: 'QUERY_STATE_COMPLETED',
  completedPartial: 'QUERY_STATE_COMPLETED_PARTIAL',
  failed: 'QUERY_STATE_FAILED',
  cancelled: 'QUERY_STATE_CANCELLED',
  expired: 'QUERY_STATE_EXPIRED',
} as const;

export type ExecutionState = (typeof STATES)[keyof typeof STATES];

export const FAILURE_TYPES = {
  executionFailed: 'FAILED_TYPE_EXECUTION_FAILED',
  resultTooLarge: 'FAILED_TYPE_RESULT_TOO_LARGE',
  restarted: 'FAILED_TYPE_SERVICE_RESTARTED',
} as const;

export interface ExecutionError {
  type: string;
  message: string;
}

export interface SnapshotColumn {
  name: string;
  /** DuckDB's type name in lower case: varchar, bigint, double, decimal(38,2)… */
  type: string;
}

/** The owner of the scheduler's runs (a reserved handle: no account is named so). */
export const OPERATOR = 'operator';

/** Query id of ad-hoc SQL (`POST /v1/sql/execute`), as the mirrored API reports it. */
export const AD_HOC_QUERY_ID = 0;

/** The parameter set of a query without parameters. */
export const NO_PARAMETERS = '[]';

export interface Execution {
  id: string;
  queryId: number;
  /** Who ran it: the executor's handle, or OPERATOR for scheduled runs. */
  owner: string;
  /** The parameter values it ran with, in canonical form (queries/parameters.ts). */
  parameterSet: string;
  /** Whether its SQL read a private table: then its result is its owner's alone. */
  readsPrivate: boolean;
  state: ExecutionState;
  submittedAt: Date;
  startedAt?: Date;
  endedAt?: Date;
  cancelledAt?: Date;
  expiresAt?: Date;
  error?: ExecutionError;
  /** Known once completed. */
  columns?: SnapshotColumn[];
  rowCount?: number;
  /** UTF-8 bytes of all rows as JSON, as a page would send them. */
  resultBytes?: number;
}

export function isFinished(execution: Execution): boolean {
  return execution.state !== STATES.pending && execution.state !== STATES.executing;
}

export function hasResult(execution: Execution): boolean {
  return execution.state === STATES.completed || execution.state === STATES.completedPartial;
}

/** The state a client sees now: a finished execution past its expiry reads as expired. */
export function visibleState(execution: Execution, now = Date.now()): ExecutionState {
  if (isFinished(execution) && execution.expiresAt && execution.expiresAt.getTime() <= now)
    return STATES.expired;
  return execution.state;
}

/** Snapshot tables live in schema `_results`, one per execution, named after its id. */
export const SNAPSHOT_SCHEMA = '_results';

export function snapshotTable(executionId: string): string {
  return `e_${executionId.toLowerCase()}`;
}
