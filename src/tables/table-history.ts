import type { Account } from '../auth/account.js';
import { badRequest } from '../errors.js';
import type { Database } from '../storage/database.js';
import { assertCanWrite, findVisibleTable, type TableRef } from './table-access.js';
import { tableStorageBytes } from './table-storage.js';
import { restorableVersions, restoreVersion, type Undo, type VersionPolicy } from './table-versions.js';

/**
 * The versions operations (issue 24): list what a table's writes kept, and restore one. Both
 * are for whoever may write the table (its owner, an admin): a version is as much the owner's
 * business as a write.
 */

export interface VersionEntry {
  version: number;
  current: boolean;
  /** The operation that made this version, when known (`null` for the oldest). */
  operation: string | null;
  createdAt: Date;
  rowCount: number;
  /** Bytes it takes: the table's for the current version, what is kept to restore it for the others. */
  bytes: number;
  /** When it stops being kept (TABLE_VERSION_HOURS after the write that replaced it). */
  expiresAt?: Date;
}

function keptTables(undo: Undo): string[] {
  if (undo.kind === 'all-added') return [];
  return undo.kind === 'rows-replaced' ? [undo.data, undo.keys] : [undo.data];
}

export async function listVersions(
  database: Database,
  account: Account,
  ref: TableRef,
  policy: VersionPolicy,
): Promise<VersionEntry[]> {
  assertCanWrite(account, ref.namespace);
  return database.read(async (session) => {
    const table = await findVisibleTable(session, account, ref);
    const entries: VersionEntry[] = [
      {
        version: table.version ?? 1,
        current: true,
        operation: table.madeBy ?? null,
        createdAt: table.updatedAt,
        rowCount: table.rowCount,
        bytes: await tableStorageBytes(session, ref.namespace, ref.tableName),
      },
    ];
    // Only what a restore can reach: the chain back from the current version, within its hours.
    for (const kept of await restorableVersions(session, ref, table.version ?? 1, policy)) {
      let bytes = 0;
      for (const name of keptTables(kept.undo))
        bytes += await tableStorageBytes(session, ref.namespace, name);
      entries.push({
        version: kept.version,
        current: false,
        operation: kept.madeBy ?? null,
        createdAt: kept.createdAt,
        rowCount: kept.record.rowCount,
        bytes,
        expiresAt: new Date(kept.supersededAt.getTime() + policy.hours * 3_600_000),
      });
    }
    return entries;
  });
}

/** The body `{"version": N}`. */
export function readRestoreRequest(body: unknown): number {
  const version = (body as { version?: unknown } | undefined)?.version;
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    !Number.isSafeInteger(version) ||
    (version as number) < 1
  ) {
    throw badRequest('the body must be {"version": N}, N a version number from GET …/versions');
  }
  const unknown = Object.keys(body).filter((name) => name !== 'version');
  if (unknown.length > 0) throw badRequest(`unknown field "${unknown[0]}"; the body takes only "version"`);
  return version as number;
}

export async function restoreTable(
  database: Database,
  account: Account,
  ref: TableRef,
  version: number,
  policy: VersionPolicy,
): Promise<{ version: number; restoredFrom: number; rowCount: number }> {
  assertCanWrite(account, ref.namespace);
  return database.write(async (session) => {
    const table = await findVisibleTable(session, account, ref);
    const restored = await restoreVersion(session, ref, table, version, policy);
    return { version, restoredFrom: table.version ?? 1, rowCount: restored.rowCount };
  });
}
