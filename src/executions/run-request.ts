/** What the runner is asked to run, and the limits users' results are held to (executions.ts). */

export type Lane = 'operator' | 'users';

/** What to run: SQL that is ready (a user's has passed the sandbox), and whose run it is. */
export interface RunRequest {
  /** The query it runs (AD_HOC_QUERY_ID for ad-hoc SQL). */
  queryId: number;
  sql: string;
  /** The executor's handle, or OPERATOR. */
  owner: string;
  lane: Lane;
  /** Canonical parameter values (NO_PARAMETERS by default). */
  parameterSet?: string;
  /** Whether the SQL reads a private table. */
  readsPrivate?: boolean;
  /** The SQL as its user wrote it (ad-hoc runs): kept with the final record for the execution history. */
  text?: string;
}

/** What users' results may take of the disk (DESIGN §12). */
export interface StorageLimits {
  /** A kept result's bytes as JSON (total_result_set_bytes) at most: past it, cut as a partial result. */
  maxResultBytes: number;
  /** Bytes of one key's kept results at most: past it, its oldest results expire. */
  keyResultBytes: number;
  /** One key's finished executions kept at most: past it, its oldest are removed. */
  keyExecutions: number;
  /** Free bytes on DATA_DIR's disk that users' results may not take. */
  reserveBytes: number;
  dataDir: string;
}
