/**
 * The shapes of the service's answers that the page reads (README "Using the API",
 * DESIGN §4, §5, §10). Only the fields the page uses.
 */

export interface Account {
  handle: string;
  plan: 'free' | 'premium';
  admin: boolean;
}

export interface TableColumn {
  name: string;
  type: string;
  nullable?: boolean;
}

export interface TableEntry {
  full_name: string;
  namespace: string;
  table_name: string;
  description: string;
  is_private: boolean;
  row_count: number;
  table_size_bytes: string;
  updated_at: string;
  columns: TableColumn[];
}

export interface TableList {
  tables: TableEntry[];
  next_offset?: number;
}

export interface ExecutionError {
  type: string;
  message: string;
}

export interface ResultMetadata {
  column_names: string[];
  column_types: string[];
  row_count: number;
  total_row_count: number;
  execution_time_millis: number;
  pending_time_millis?: number;
  datapoint_count: number;
  result_set_bytes: number;
  total_result_set_bytes: number;
}

/** GET /execution/{id}/status. */
export interface ExecutionStatus {
  execution_id: string;
  query_id: number;
  state: string;
  is_execution_finished: boolean;
  submitted_at: string;
  execution_started_at?: string;
  execution_ended_at?: string;
  queue_position?: number;
  error?: ExecutionError;
  result_metadata?: ResultMetadata;
}

/** A value as the API renders it: big integers, NaN and infinities arrive as strings. */
export type CellValue = string | number | boolean | null | CellValue[] | { [key: string]: CellValue };

/** GET /execution/{id}/results. */
export interface ResultsPage extends ExecutionStatus {
  next_offset?: number;
  next_uri?: string;
  result?: {
    rows: Record<string, CellValue>[];
    metadata: ResultMetadata;
  };
}

export interface ExecuteAnswer {
  execution_id: string;
  state: string;
}

export type ParameterType = 'text' | 'number' | 'datetime' | 'enum';

export interface QueryParameter {
  key: string;
  type: ParameterType;
  value: string;
  enumOptions?: string[];
}

/** GET /query/{id} (DESIGN §10). */
export interface SavedQuery {
  query_id: number;
  name: string;
  description: string;
  tags: string[];
  version: number;
  parameters: QueryParameter[];
  query_sql: string;
  is_private: boolean;
  is_archived: boolean;
  owner: string;
}

export interface QueryList {
  queries: SavedQuery[];
  next_offset?: number;
}

export const STATES = {
  pending: 'QUERY_STATE_PENDING',
  executing: 'QUERY_STATE_EXECUTING',
  completed: 'QUERY_STATE_COMPLETED',
  completedPartial: 'QUERY_STATE_COMPLETED_PARTIAL',
  failed: 'QUERY_STATE_FAILED',
  cancelled: 'QUERY_STATE_CANCELLED',
  expired: 'QUERY_STATE_EXPIRED',
} as const;

/** POST /v1/table/upload/csv's answer. */
export interface UploadAnswer {
  success: boolean;
  table_name: string;
  dry_run?: boolean;
  row_count: number;
  columns: { name: string; type: string }[];
  widened: {
    column: string;
    value: string;
    line: number;
    values: number;
    otherwise: string;
    message: string;
  }[];
}

/** GET /v1/materialized-views/{name} (README "Materialized views"). */
export interface MaterializedView {
  id: string;
  query_id: number;
  owner: string;
  is_private: boolean;
  row_count: number;
  table_size_bytes: number;
  cron_expression: string | null;
  last_refreshed_at: string | null;
  next_refresh_at: string | null;
  last_execution_ids: string[];
  last_error: string | null;
}

export interface ViewList {
  materialized_views: MaterializedView[];
  total: number;
  next_offset?: number;
}

/** One entry of GET /v1/executions: a status, with its query's name or its own SQL. */
export interface HistoryEntry extends ExecutionStatus {
  query_name?: string;
  query_sql?: string;
}

export interface HistoryList {
  executions: HistoryEntry[];
  total: number;
  next_offset?: number;
}

/** GET /v1/pipelines/executions/{id}/status. */
export interface PipelineStatus {
  pipeline_execution_id: string;
  status: 'pending' | 'executing' | 'completed' | 'failed';
  error?: string;
  node_executions: {
    id: number;
    dependencies: number[];
    query_execution_status: { status: string; query_id: number; execution_id?: string; error?: string };
    materialized_view_refresh_status?: { name: string; status: string };
  }[];
}
