import type { Account } from '../auth/account.js';
import { badRequest } from '../errors.js';
import { compileFilters, QueryLanguageError, type ResultColumn } from '../filter-language/index.js';
import type { Database, Session, SqlValue } from '../storage/database.js';
import { qualifiedName, quoteLiteral } from '../storage/sql.js';
import { assertCanWrite, findVisibleTable, type TableRef } from './table-access.js';
import { recordRowsChanged } from './table-catalog.js';
import { recordUnversioned, recordVersion, type VersionPolicy, versionTableName } from './table-versions.js';

/**
 * The delete-rows operation (issue 24): removes the rows a `filters` condition selects, in the
 * filter language of the results (README, "Filter and sort language"), checked against the
 * table's own columns and types and compiled with every value bound; one DELETE in one write
 * transaction, with the catalog's counts.
 */

export interface DeleteRowsOutcome {
  rowsDeleted: number;
}

/** The body `{"filters": "..."}`, checked. */
export function readDeleteRowsRequest(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('the body must be a JSON object: {"filters": "block_time < \'2024-01-01\'"}');
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((name) => name !== 'filters');
  if (unknown.length > 0) throw badRequest(`unknown field "${unknown[0]}"; the body takes only "filters"`);
  if (typeof fields.filters !== 'string') {
    throw badRequest('field "filters" is required: a condition such as "trader = \'0xabc…\'"');
  }
  if (fields.filters.trim() === '') {
    throw badRequest('field "filters" is empty; to remove every row use the clear operation');
  }
  return fields.filters;
}

/**
 * The table's columns as the filter language takes them: names and DuckDB's type names.
 * `pragma_table_info` looks the one table up; `duckdb_columns()` reads every table of the
 * catalog (0.7 ms against 10–19 ms beside 3,000 other tables, measured).
 */
export async function tableColumns(session: Session, ref: TableRef): Promise<ResultColumn[]> {
  const rows = await session.all<{ name: string; type: string }>(
    `SELECT name, type FROM pragma_table_info(${quoteLiteral(qualifiedName(ref.namespace, ref.tableName))})`,
  );
  return rows.map((row) => ({ name: row.name, type: row.type.toLowerCase() }));
}

/** `filters` over the table's columns as SQL and bound values; the language's errors are 400s. */
export function compileTableFilter(filters: string, columns: readonly ResultColumn[]) {
  try {
    return compileFilters(filters, columns);
  } catch (error) {
    if (error instanceof QueryLanguageError) throw badRequest(error.message);
    throw error;
  }
}

export async function deleteRows(
  database: Database,
  account: Account,
  ref: TableRef,
  filters: string,
  policy: VersionPolicy,
): Promise<DeleteRowsOutcome> {
  assertCanWrite(account, ref.namespace);
  return database.write(async (session) => {
    const table = await findVisibleTable(session, account, ref);
    const where = compileTableFilter(filters, await tableColumns(session, ref));
    const target = qualifiedName(ref.namespace, ref.tableName);
    const params = where.params as SqlValue[];
    // The rows deleted are what undoes the delete (table-versions.ts).
    const kept = policy.kept > 0 ? versionTableName() : undefined;
    if (kept) {
      await session.run(
        `CREATE TABLE ${qualifiedName(ref.namespace, kept)} AS SELECT * FROM ${target} WHERE ${where.sql}`,
        params,
      );
    }
    const [deleted] = await session.all<{ Count: bigint }>(
      `DELETE FROM ${target} WHERE ${where.sql}`,
      params,
    );
    const rowsDeleted = Number(deleted?.Count ?? 0);
    const rowCount = Math.max(0, table.rowCount - rowsDeleted);
    const counts = {
      rowCount,
      // Approximate, as the catalog's sizes are: the body bytes stored, in proportion to the rows left.
      sizeBytes: table.rowCount > 0 ? Math.round((table.sizeBytes * rowCount) / table.rowCount) : 0,
      at: new Date(),
    };
    if (kept) {
      await recordRowsChanged(session, ref, counts);
      await recordVersion(session, ref, policy, table, 'delete-rows', { kind: 'rows-removed', data: kept });
    } else {
      await recordUnversioned(session, ref, table, 'delete-rows', counts);
    }
    return { rowsDeleted };
  });
}
