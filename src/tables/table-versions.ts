import { ulid } from 'ulid';
import type { Config } from '../config/config.js';
import { ApiError, badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import { qualifiedName, quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import type { TableRef } from './table-access.js';
import { findTable, saveTable, type TableRecord } from './table-catalog.js';

/**
 * Table versions (issue 24, undo): every write (replace, insert, upsert, delete-rows, clear)
 * keeps what it takes to bring the table back as it was before, for TABLE_VERSIONS_KEPT writes
 * or TABLE_VERSION_HOURS, whichever ends first. What is kept is the least that undoes the write,
 * never a copy of a large table for a small change:
 * - replace and clear: the previous table itself, renamed (free: DuckDB renames in the catalog);
 * - insert into an empty table: nothing (undo empties it); into a table with rows: the rows added;
 * - delete-rows: the rows deleted;
 * - upsert: the rows it replaced and the body's keys.
 * Kept rows live in tables of the table's own namespace named `__version_<id>`: DuckDB 1.5
 * cannot move a table to another schema (`ALTER TABLE … SET SCHEMA` is not implemented), so a
 * schema of the service's own would cost a full copy on every replace. No user name starts with
 * `__`, and users' SQL reads only tables recorded in `_service.tables` (the sandbox's resolver),
 * so these are never visible to it. Each kept version is a row of `_service.table_versions`
 * that turns state `from_version` back into state `version`; a restore applies them newest
 * first, in one write transaction.
 */

export interface VersionPolicy {
  /** Writes whose previous version is kept; 0 keeps none. */
  kept: number;
  hours: number;
}

/** The policy the configuration sets (TABLE_VERSIONS_KEPT, TABLE_VERSION_HOURS). */
export function versionPolicy(
  config: Pick<Config, 'tableVersionsKept' | 'tableVersionHours'>,
): VersionPolicy {
  return { kept: config.tableVersionsKept, hours: config.tableVersionHours };
}

export type Operation = 'replace' | 'insert' | 'upsert' | 'delete-rows' | 'clear' | 'create';

/** How a kept version undoes its write. */
export type Undo =
  /** `data` is the whole previous table. */
  | { kind: 'snapshot'; data: string }
  /** The write added rows to an empty table: undo empties it. */
  | { kind: 'all-added' }
  /** `data` holds the rows the write added (the columns the body gave). */
  | { kind: 'rows-added'; data: string }
  /** `data` holds the rows the write deleted. */
  | { kind: 'rows-removed'; data: string }
  /** `data` holds the rows the write replaced; `keys` the body's keys on `key`. */
  | { kind: 'rows-replaced'; data: string; keys: string; key: string[] };

export const VERSION_PREFIX = '__version_';

/** A fresh name for a version's rows, in the table's namespace. */
export function versionTableName(): string {
  return `${VERSION_PREFIX}${ulid().toLowerCase()}`;
}

interface VersionRow {
  version: bigint;
  from_version: bigint;
  made_by: string | null;
  undo: string;
  catalog: string;
  created_at: Date;
  superseded_at: Date;
}

export interface KeptVersion {
  version: number;
  fromVersion: number;
  /** The operation that made this version, when known. */
  madeBy: string | undefined;
  undo: Undo;
  /** The catalog's record of the table at this version. */
  record: TableRecord;
  createdAt: Date;
  /** When the write that replaced it happened; it expires `hours` later. */
  supersededAt: Date;
}

function fromRow(row: VersionRow): KeptVersion {
  const record = JSON.parse(row.catalog) as TableRecord & { createdAt: string; updatedAt: string };
  return {
    version: Number(row.version),
    fromVersion: Number(row.from_version),
    madeBy: row.made_by ?? undefined,
    undo: JSON.parse(row.undo) as Undo,
    record: { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) },
    createdAt: row.created_at,
    supersededAt: row.superseded_at,
  };
}

/** The tables that hold a version's rows. */
function dataTables(undo: Undo): string[] {
  switch (undo.kind) {
    case 'all-added':
      return [];
    case 'rows-replaced':
      return [undo.data, undo.keys];
    default:
      return [undo.data];
  }
}

const isExpired = (version: KeptVersion, policy: VersionPolicy, now: Date) =>
  version.supersededAt.getTime() < now.getTime() - policy.hours * 3_600_000;

/** The table's kept versions, newest first. */
export async function keptVersions(session: Session, ref: TableRef): Promise<KeptVersion[]> {
  const rows = await session.all<VersionRow>(
    `SELECT * FROM ${SERVICE_SCHEMA}.table_versions WHERE namespace = ? AND table_name = ? ORDER BY version DESC`,
    [ref.namespace, ref.tableName],
  );
  return rows.map(fromRow);
}

async function dropVersion(
  session: Session,
  ref: TableRef,
  version: KeptVersion,
  dropData: boolean,
): Promise<void> {
  if (dropData) {
    for (const table of dataTables(version.undo))
      await session.run(`DROP TABLE IF EXISTS ${qualifiedName(ref.namespace, table)}`);
  }
  await session.run(
    `DELETE FROM ${SERVICE_SCHEMA}.table_versions WHERE namespace = ? AND table_name = ? AND version = ?`,
    [ref.namespace, ref.tableName, version.version],
  );
}

/**
 * Drops the versions the policy no longer keeps: beyond the newest `kept` ones that lead back
 * from the current version, or older than `hours`.
 */
export async function expireVersions(
  session: Session,
  ref: TableRef,
  policy: VersionPolicy,
  now = new Date(),
): Promise<void> {
  const table = await findTable(session, ref.namespace, ref.tableName);
  let state = table?.version ?? 0;
  let chained = 0;
  for (const version of await keptVersions(session, ref)) {
    const keep = version.fromVersion === state && chained < policy.kept && !isExpired(version, policy, now);
    if (keep) {
      chained++;
      state = version.version;
    } else {
      await dropVersion(session, ref, version, true);
    }
  }
}

/**
 * The versions a restore can reach from version `current`, newest first: each turns the one
 * before it in the list back (the first turns `current` back), none past its hours.
 */
export async function restorableVersions(
  session: Session,
  ref: TableRef,
  current: number,
  policy: VersionPolicy,
  now = new Date(),
): Promise<KeptVersion[]> {
  const chain: KeptVersion[] = [];
  let state = current;
  for (const kept of await keptVersions(session, ref)) {
    if (kept.fromVersion !== state || isExpired(kept, policy, now)) break;
    chain.push(kept);
    state = kept.version;
  }
  return chain;
}

/** Drops every version of a table (it is deleted, or replaced by the demo data). */
export async function dropVersions(session: Session, ref: TableRef): Promise<void> {
  for (const version of await keptVersions(session, ref)) await dropVersion(session, ref, version, true);
}

/** Drops the versions past their hours in every namespace: at start and every so often. */
export async function expireAllVersions(session: Session, policy: VersionPolicy): Promise<void> {
  const tables = await session.all<{ namespace: string; table_name: string }>(
    `SELECT DISTINCT namespace, table_name FROM ${SERVICE_SCHEMA}.table_versions`,
  );
  for (const table of tables)
    await expireVersions(session, { namespace: table.namespace, tableName: table.table_name }, policy);
}

/**
 * Records that `operation` replaced the table's version `before` (its catalog record before the
 * write) with a new one, keeping `undo`; then expires what the policy no longer keeps. In the
 * write's transaction, after the catalog record of the new version was saved.
 */
export async function recordVersion(
  session: Session,
  ref: TableRef,
  policy: VersionPolicy,
  before: TableRecord,
  operation: Operation,
  undo: Undo,
): Promise<void> {
  const now = new Date();
  const previous = before.version ?? 1;
  const next = Math.max(before.versionsMade ?? 1, previous) + 1;
  await session.run(
    `INSERT INTO ${SERVICE_SCHEMA}.table_versions
       (namespace, table_name, version, from_version, made_by, undo, catalog, created_at, superseded_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      ref.namespace,
      ref.tableName,
      previous,
      next,
      before.madeBy ?? null,
      JSON.stringify(undo),
      JSON.stringify(before),
      before.updatedAt.toISOString(),
      now.toISOString(),
    ],
  );
  await setVersion(session, ref, { version: next, madeBy: operation, versionsMade: next });
  await expireVersions(session, ref, policy, now);
}

/** Marks the table's current version (no version kept: versions are off, or it is new). */
export async function setVersion(
  session: Session,
  ref: TableRef,
  state: { version: number; madeBy: string; versionsMade: number },
): Promise<void> {
  await session.run(
    `UPDATE ${SERVICE_SCHEMA}.tables SET version = ?, made_by = ?, versions_made = ? WHERE namespace = ? AND table_name = ?`,
    [state.version, state.madeBy, state.versionsMade, ref.namespace, ref.tableName],
  );
}

/**
 * What a write that keeps no version does to the numbering: a new version, nothing kept; with
 * the write's new counts in the same statement when given (one UPDATE of the catalog, not two:
 * a delete-rows that keeps nothing costs what DuckDB's DELETE does, and little more). The
 * versions kept before (TABLE_VERSIONS_KEPT was more) no longer lead back from the new
 * version, so no restore reaches them; the expiry drops them.
 */
export async function recordUnversioned(
  session: Session,
  ref: TableRef,
  before: TableRecord | undefined,
  operation: Operation,
  counts?: { rowCount: number; sizeBytes: number; at: Date },
): Promise<void> {
  const next = before ? Math.max(before.versionsMade ?? 1, before.version ?? 1) + 1 : 1;
  if (!counts) {
    await setVersion(session, ref, { version: next, madeBy: operation, versionsMade: next });
    return;
  }
  await session.run(
    `UPDATE ${SERVICE_SCHEMA}.tables SET version = ?, made_by = ?, versions_made = ?, row_count = ?, size_bytes = ?, updated_at = ?
      WHERE namespace = ? AND table_name = ?`,
    [
      next,
      operation,
      next,
      counts.rowCount,
      counts.sizeBytes,
      counts.at.toISOString(),
      ref.namespace,
      ref.tableName,
    ],
  );
}

const quotedColumns = (names: readonly string[]) => names.map(quoteIdentifier).join(', ');

/** Undoes one write on the table as it is now, in the restore's transaction. */
async function applyUndo(
  session: Session,
  ref: TableRef,
  undo: Undo,
  columns: readonly string[],
): Promise<void> {
  const target = qualifiedName(ref.namespace, ref.tableName);
  const data = 'data' in undo ? qualifiedName(ref.namespace, undo.data) : '';
  switch (undo.kind) {
    case 'snapshot':
      await session.run(`DROP TABLE ${target}`);
      await session.run(`ALTER TABLE ${data} RENAME TO ${quoteIdentifier(ref.tableName)}`);
      return;
    case 'all-added':
      await session.run(`DELETE FROM ${target}`);
      return;
    case 'rows-added':
      await removeRowsOf(session, target, data, columns);
      break;
    case 'rows-removed':
      await session.run(
        `INSERT INTO ${target} (${quotedColumns(columns)}) SELECT ${quotedColumns(columns)} FROM ${data}`,
      );
      break;
    case 'rows-replaced': {
      const keys = qualifiedName(ref.namespace, undo.keys);
      const match = undo.key
        .map((name) => `${target}.${quoteIdentifier(name)} = k.${quoteIdentifier(name)}`)
        .join(' AND ');
      await session.run(`DELETE FROM ${target} USING ${keys} k WHERE ${match}`);
      await session.run(
        `INSERT INTO ${target} (${quotedColumns(columns)}) SELECT ${quotedColumns(columns)} FROM ${data}`,
      );
      await session.run(`DROP TABLE ${keys}`);
      break;
    }
  }
  await session.run(`DROP TABLE ${data}`);
}

/**
 * Removes one row of the table for each row of `data` (rows an insert added: the columns it
 * gave, the others NULL), the last ones added where equal rows are many: a multiset difference
 * that keeps the order of the rest.
 */
async function removeRowsOf(
  session: Session,
  target: string,
  data: string,
  columns: readonly string[],
): Promise<void> {
  const given = (
    await session.all<{ column_name: string }>(`SELECT column_name FROM (DESCRIBE ${data})`)
  ).map((row) => row.column_name);
  const omitted = columns.filter((name) => !given.includes(name));
  const all = quotedColumns(columns);
  const same = given.map(
    (name) => `c.${quoteIdentifier(name)} IS NOT DISTINCT FROM d.${quoteIdentifier(name)}`,
  );
  const blank = omitted.map((name) => `c.${quoteIdentifier(name)} IS NULL`);
  await session.run(
    `DELETE FROM ${target} WHERE rowid IN (
       SELECT c."0 rowid" FROM (SELECT rowid AS "0 rowid", ${all}, row_number() OVER (PARTITION BY ${all} ORDER BY rowid DESC) AS "0 n" FROM ${target}) c
         JOIN (SELECT ${quotedColumns(given)}, count(*) AS "0 m" FROM ${data} GROUP BY ALL) d ON ${[...same, 'true'].join(' AND ')}
        WHERE ${[...blank, 'c."0 n" <= d."0 m"'].join(' AND ')})`,
  );
}

export const versionGone = (ref: TableRef, version: number, policy: VersionPolicy) =>
  new ApiError(
    'gone',
    `version ${version} of ${ref.namespace}.${ref.tableName} is not kept (any more): versions are kept for ${policy.kept} write${policy.kept === 1 ? '' : 's'} or ${policy.hours} hours; GET …/versions lists those that are`,
  );

/**
 * Brings the table back to `version`, undoing every later write, newest first; its catalog
 * record becomes that version's. One write transaction: readers see the table as it was, or
 * as it is restored. The versions undone are gone afterwards (a restore keeps no version).
 */
export async function restoreVersion(
  session: Session,
  ref: TableRef,
  table: TableRecord,
  version: number,
  policy: VersionPolicy,
): Promise<TableRecord> {
  const current = table.version ?? 1;
  if (version === current)
    throw badRequest(`version ${version} is the current version of ${ref.namespace}.${ref.tableName}`);
  const now = new Date();
  const chain: KeptVersion[] = [];
  let state = current;
  for (const kept of await keptVersions(session, ref)) {
    if (state === version) break;
    if (kept.fromVersion !== state || isExpired(kept, policy, now)) break;
    chain.push(kept);
    state = kept.version;
  }
  if (state !== version || chain.length === 0) throw versionGone(ref, version, policy);
  for (const kept of chain) {
    const columns = await tableColumnNames(session, ref);
    await applyUndo(session, ref, kept.undo, columns);
    await dropVersion(session, ref, kept, false);
  }
  const target = chain[chain.length - 1] as KeptVersion;
  const record: TableRecord = {
    ...target.record,
    createdAt: table.createdAt,
    version,
    madeBy: target.madeBy,
    versionsMade: table.versionsMade,
  };
  await saveTable(session, record);
  return record;
}

async function tableColumnNames(session: Session, ref: TableRef): Promise<string[]> {
  const rows = await session.all<{ name: string }>(
    `SELECT name FROM pragma_table_info(${quoteLiteral(qualifiedName(ref.namespace, ref.tableName))})`,
  );
  return rows.map((row) => row.name);
}
