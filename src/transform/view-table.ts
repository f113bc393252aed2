import type { Execution } from '../executions/execution.js';
import { snapshotName } from '../executions/snapshot.js';
import type { Database, Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { removeTable, saveTable } from '../tables/table-catalog.js';
import type { ViewRef } from './view-name.js';

/**
 * A materialized view's table: a copy of a completed execution's snapshot, put in the old
 * table's place in one transaction, so that readers see the old rows until the new ones are
 * complete and never a mix. The copy runs on a connection of its own (`dedicated`), not the
 * writer's, so a large view does not hold up uploads and records meanwhile. Measured on DuckDB
 * 1.5.6 (docs/library-notes.md): `CREATE OR REPLACE TABLE` inside a transaction leaves other
 * connections reading the old table until COMMIT, and commits beside the writer's own
 * transactions on other tables and other rows of `_service.tables`.
 */

export interface ViewTable extends ViewRef {
  description: string;
  isPrivate: boolean;
}

/** Makes the namespace's schema when the view is its first table. */
export async function ensureNamespace(database: Database, namespace: string): Promise<void> {
  await database.write((s) => s.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(namespace)}`));
}

/**
 * Replaces the view's rows with the execution's, in its order (`rowid`), recording the table
 * and running `alsoRecord` in the same transaction.
 */
export async function replaceViewRows(
  database: Database,
  table: ViewTable,
  execution: Execution,
  alsoRecord: (session: Session) => Promise<void>,
): Promise<void> {
  await database.dedicated(async (session) => {
    await session.run('BEGIN TRANSACTION');
    try {
      await session.run(
        `CREATE OR REPLACE TABLE ${qualifiedName(table.namespace, table.name)} AS
           SELECT * FROM ${snapshotName(execution.id)} ORDER BY rowid`,
      );
      await saveTable(session, {
        namespace: table.namespace,
        tableName: table.name,
        description: table.description,
        isPrivate: table.isPrivate,
        updatedAt: execution.endedAt ?? new Date(),
        rowCount: execution.rowCount ?? 0,
        sizeBytes: execution.resultBytes ?? 0,
      });
      await alsoRecord(session);
      await session.run('COMMIT');
    } catch (error) {
      await session.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** Drops the view's table and its record (in the caller's write). */
export async function dropViewTable(session: Session, ref: ViewRef): Promise<void> {
  await session.run(`DROP TABLE IF EXISTS ${qualifiedName(ref.namespace, ref.name)}`);
  await removeTable(session, ref.namespace, ref.name);
}

/** Sets the privacy of the views' tables (their query became private). */
export async function setViewTablesPrivate(session: Session, refs: readonly ViewRef[]): Promise<void> {
  for (const ref of refs)
    await session.run(
      `UPDATE ${SERVICE_SCHEMA}.tables SET is_private = true WHERE namespace = ? AND table_name = ?`,
      [ref.namespace, ref.name],
    );
}
