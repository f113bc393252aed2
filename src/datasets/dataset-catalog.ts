import type { Account } from '../auth/account.js';
import { badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import { SHARED_NAMESPACE } from '../tables/table-access.js';
import { columnsOf, type TableColumn, type TableRecord, tableKey } from '../tables/table-catalog.js';
import type { DeclaredColumn } from '../tables/table-schema.js';

/**
 * Datasets as Dune's Datasets API shows them (GET /v1/datasets): every table a key may read
 * in its SQL, as recorded in `_service.tables`, each with its kind: a table uploaded or
 * created through the API (`uploaded_table`), a materialized view (`transformation_view`,
 * src/transform), or the shared data set of namespace `restaking` (`dune_table`). Visibility is
 * the tables' own rule (table-access.ts `canSee`): a private table of another account is never
 * listed and reads as absent.
 */

/** Every kind Dune names; this service holds the first three, the others list nothing. */
export const DATASET_TYPES = [
  'uploaded_table',
  'transformation_view',
  'dune_table',
  'transformation_table',
  'decoded_table',
  'spell',
] as const;
export type DatasetType = (typeof DATASET_TYPES)[number];

export interface Dataset extends TableRecord {
  type: DatasetType;
  columns: TableColumn[];
  /** Set for a materialized view: the query it keeps the result of. */
  queryId?: number;
}

export interface DatasetFilter {
  ownerHandle?: string;
  /** undefined: every type. */
  types?: readonly DatasetType[];
}

/** `type` as Dune takes it: comma-separated names; an unknown one is a 400 naming it. */
export function parseDatasetTypes(value: string | undefined): DatasetType[] | undefined {
  if (value === undefined) return undefined;
  const types = value.split(',').map((part) => part.trim());
  for (const type of types) {
    if (!(DATASET_TYPES as readonly string[]).includes(type)) {
      throw badRequest(
        `query parameter "type": unknown dataset type ${JSON.stringify(type.slice(0, 64))}; the types are ${DATASET_TYPES.join(', ')}`,
      );
    }
  }
  return types as DatasetType[];
}

interface DatasetRow {
  namespace: string;
  table_name: string;
  description: string;
  is_private: boolean;
  created_at: Date;
  updated_at: Date;
  row_count: bigint;
  size_bytes: bigint;
  declared_columns: string | null;
  query_id: bigint | null;
  type: DatasetType;
}

/** The kind of each row, in SQL, so that `type` filters and pages in one statement. */
const TYPE_SQL = `CASE WHEN v.name IS NOT NULL THEN 'transformation_view'
  WHEN t.namespace = '${SHARED_NAMESPACE}' THEN 'dune_table' ELSE 'uploaded_table' END`;

const FROM = `${SERVICE_SCHEMA}.tables t
  LEFT JOIN ${SERVICE_SCHEMA}.materialized_views v ON v.namespace = t.namespace AND v.name = t.table_name`;

function where(viewer: Account, filter: DatasetFilter): { sql: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  if (!viewer.admin) {
    clauses.push('(NOT t.is_private OR t.namespace = ?)');
    params.push(viewer.handle);
  }
  if (filter.ownerHandle !== undefined) {
    clauses.push('t.namespace = ?');
    params.push(filter.ownerHandle);
  }
  if (filter.types !== undefined) {
    clauses.push(`(${TYPE_SQL}) IN (${filter.types.map(() => '?').join(', ')})`);
    params.push(...filter.types);
  }
  return { sql: clauses.length > 0 ? clauses.join(' AND ') : 'true', params };
}

/** One page of the datasets `viewer` may see, by full name, and how many there are in all. */
export async function listDatasets(
  session: Session,
  viewer: Account,
  filter: DatasetFilter,
  page: { limit: number; offset: number },
): Promise<{ datasets: Dataset[]; total: number }> {
  const visible = where(viewer, filter);
  const rows = await session.all<DatasetRow>(
    `SELECT t.*, v.query_id, ${TYPE_SQL} AS type FROM ${FROM}
      WHERE ${visible.sql} ORDER BY t.namespace, t.table_name LIMIT ? OFFSET ?`,
    [...visible.params, page.limit, page.offset],
  );
  const [count] = await session.all<{ n: bigint }>(
    `SELECT count(*) AS n FROM ${FROM} WHERE ${visible.sql}`,
    visible.params,
  );
  return { datasets: await withColumns(session, rows), total: Number(count?.n ?? 0) };
}

/** One dataset if `viewer` may see it; undefined as for one that does not exist. */
export async function findDataset(
  session: Session,
  viewer: Account,
  ref: { namespace: string; tableName: string },
): Promise<Dataset | undefined> {
  const visible = where(viewer, {});
  const rows = await session.all<DatasetRow>(
    `SELECT t.*, v.query_id, ${TYPE_SQL} AS type FROM ${FROM}
      WHERE t.namespace = ? AND t.table_name = ? AND ${visible.sql}`,
    [ref.namespace, ref.tableName, ...visible.params],
  );
  return (await withColumns(session, rows))[0];
}

async function withColumns(session: Session, rows: readonly DatasetRow[]): Promise<Dataset[]> {
  const records = rows.map(
    (row): Dataset => ({
      namespace: row.namespace,
      tableName: row.table_name,
      description: row.description,
      isPrivate: row.is_private,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      rowCount: Number(row.row_count),
      sizeBytes: Number(row.size_bytes),
      ...(row.declared_columns
        ? { declaredColumns: JSON.parse(row.declared_columns) as DeclaredColumn[] }
        : {}),
      type: row.type,
      columns: [],
      ...(row.query_id !== null ? { queryId: Number(row.query_id) } : {}),
    }),
  );
  const columns = await columnsOf(session, records);
  for (const record of records)
    record.columns = record.declaredColumns ?? columns.get(tableKey(record)) ?? [];
  return records;
}

/**
 * A dataset's name as a client gives it: `dune.<namespace>.<table>` as Dune's full names go,
 * or `<namespace>.<table>`; anything else names nothing.
 */
export function parseDatasetName(name: string): { namespace: string; tableName: string } | undefined {
  const parts = name.split('.');
  if (parts.length === 3 && parts[0] === 'dune') parts.shift();
  if (parts.length !== 2 || parts.some((part) => part === '')) return undefined;
  return { namespace: parts[0] as string, tableName: parts[1] as string };
}

/** A dataset as Dune answers it. */
export function datasetToApi(dataset: Dataset): Record<string, unknown> {
  const metadata: Record<string, string> = {
    description: dataset.description,
    row_count: String(dataset.rowCount),
    table_size_bytes: String(dataset.sizeBytes),
  };
  if (dataset.queryId !== undefined) metadata.query_id = String(dataset.queryId);
  return {
    full_name: `dune.${dataset.namespace}.${dataset.tableName}`,
    type: dataset.type,
    owner: {
      handle: dataset.namespace,
      type: dataset.namespace === SHARED_NAMESPACE ? 'team' : 'user',
    },
    columns: dataset.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    metadata,
    created_at: dataset.createdAt.toISOString(),
    updated_at: dataset.updatedAt.toISOString(),
    is_private: dataset.isPrivate,
  };
}
