import type { Database, Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import type { ViewRef } from './view-name.js';

/**
 * Materialized views' records in `_service.materialized_views`, one row per view; the view's
 * rows are the table <namespace>.<name>, recorded in `_service.tables` like every table.
 */

export type Performance = 'medium' | 'large';

export interface ViewRecord extends ViewRef {
  queryId: number;
  /** undefined: refreshed only when asked (refresh, pipelines). */
  cronExpression?: string;
  performance: Performance;
  /** Asked for at upsert; the table is private too when its query is or its result read a private table. */
  requestedPrivate: boolean;
  expiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
  nextRefreshAt?: Date;
  /** When the table last took a new result. */
  refreshedAt?: Date;
  /** Its refreshes' executions, newest first (at most LAST_EXECUTIONS). */
  lastExecutionIds: string[];
  /** Why the latest refresh did not replace the table, if it did not. */
  lastError?: string;
}

export const LAST_EXECUTIONS = 10;

interface ViewRow {
  namespace: string;
  name: string;
  query_id: bigint;
  cron_expression: string | null;
  performance: string;
  requested_private: boolean;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  next_refresh_at: Date | null;
  refreshed_at: Date | null;
  last_execution_ids: string;
  last_error: string | null;
}

function fromRow(row: ViewRow): ViewRecord {
  return {
    namespace: row.namespace,
    name: row.name,
    queryId: Number(row.query_id),
    ...(row.cron_expression !== null ? { cronExpression: row.cron_expression } : {}),
    performance: row.performance === 'large' ? 'large' : 'medium',
    requestedPrivate: row.requested_private,
    ...(row.expires_at ? { expiresAt: row.expires_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.next_refresh_at ? { nextRefreshAt: row.next_refresh_at } : {}),
    ...(row.refreshed_at ? { refreshedAt: row.refreshed_at } : {}),
    lastExecutionIds: JSON.parse(row.last_execution_ids) as string[],
    ...(row.last_error !== null ? { lastError: row.last_error } : {}),
  };
}

const iso = (date: Date | undefined) => (date ? date.toISOString() : null);

/** A view as loaded, with what its table's record says (none before its first refresh). */
export interface LoadedView extends ViewRecord {
  table?: { isPrivate: boolean; rowCount: number; sizeBytes: number };
}

export async function loadViews(database: Database): Promise<LoadedView[]> {
  const rows = await database.read((s) =>
    s.all<ViewRow & { table_private: boolean | null; row_count: bigint | null; size_bytes: bigint | null }>(
      `SELECT v.*, t.is_private AS table_private, t.row_count, t.size_bytes
         FROM ${SERVICE_SCHEMA}.materialized_views v
         LEFT JOIN ${SERVICE_SCHEMA}.tables t ON t.namespace = v.namespace AND t.table_name = v.name
        ORDER BY v.namespace, v.name`,
    ),
  );
  return rows.map((row) => ({
    ...fromRow(row),
    ...(row.table_private !== null
      ? {
          table: {
            isPrivate: row.table_private,
            rowCount: Number(row.row_count ?? 0),
            sizeBytes: Number(row.size_bytes ?? 0),
          },
        }
      : {}),
  }));
}

/** Inserts or replaces the view's record. */
export async function saveView(session: Session, view: ViewRecord): Promise<void> {
  await deleteView(session, view);
  await session.run(
    `INSERT INTO ${SERVICE_SCHEMA}.materialized_views VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      view.namespace,
      view.name,
      view.queryId,
      view.cronExpression ?? null,
      view.performance,
      view.requestedPrivate,
      iso(view.expiresAt),
      view.createdAt.toISOString(),
      view.updatedAt.toISOString(),
      iso(view.nextRefreshAt),
      iso(view.refreshedAt),
      JSON.stringify(view.lastExecutionIds),
      view.lastError ?? null,
    ],
  );
}

export async function deleteView(session: Session, ref: ViewRef): Promise<void> {
  await session.run(`DELETE FROM ${SERVICE_SCHEMA}.materialized_views WHERE namespace = ? AND name = ?`, [
    ref.namespace,
    ref.name,
  ]);
}
