import { ulid } from 'ulid';
import type { Account } from '../auth/account.js';
import { badRequest, conflict } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { qualifiedName, quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import type { InsertFormat, InsertPlan } from './insert-plan.js';
import { bodyFailure, convertedRows, hasRows, readPlan, writableTable } from './insert-rows.js';
import type { ReceivedBody } from './receive-body.js';
import { assertCanWrite, fullName, type TableRef } from './table-access.js';
import { recordRowsChanged } from './table-catalog.js';
import type { DeclaredColumn } from './table-schema.js';
import {
  recordUnversioned,
  recordVersion,
  type Undo,
  type VersionPolicy,
  versionTableName,
} from './table-versions.js';

/**
 * The upsert operation (issue 24): a CSV, NDJSON or Parquet body whose rows replace the
 * table's rows with the same key and are added where no row has it, all or nothing. The body
 * is converted (with the insert's checks) into a staging table first, where keys are checked:
 * a key column without a value, or a key given twice, is a 400 and nothing changes. Then one
 * DELETE … USING the body's keys and one INSERT, in the same write transaction.
 */

export interface UpsertOutcome {
  rowsWritten: number;
  /** Rows of the table that had a key of the body, now replaced. */
  rowsReplaced: number;
}

/** A key: one or more columns of `columns`, each once. */
export function validateKey(value: unknown, columns: readonly DeclaredColumn[], where: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((name) => typeof name !== 'string')) {
    throw badRequest(`${where} must be a non-empty list of column names, e.g. ["id"]`);
  }
  const names = value as string[];
  const unknown = names.filter((name) => !columns.some((column) => column.name === name));
  if (unknown.length > 0) {
    throw badRequest(
      `${where} names ${unknown.map((n) => JSON.stringify(n)).join(', ')}, not a column of the table; the columns are ${columns.map((c) => c.name).join(', ')}`,
    );
  }
  if (new Set(names).size !== names.length) throw badRequest(`${where} names a column twice`);
  return names;
}

/** The key of an upsert: `?key=a,b`, else the one declared at create. */
export function upsertKey(
  given: string | undefined,
  declared: string[] | undefined,
  columns: readonly DeclaredColumn[],
  ref: TableRef,
): string[] {
  if (given !== undefined) {
    return validateKey(
      given.split(',').map((name) => name.trim()),
      columns,
      'query parameter "key"',
    );
  }
  if (!declared) {
    throw badRequest(
      `table ${fullName(ref)} has no key: give the columns rows are matched on, ?key=id (or declare "key" at create)`,
    );
  }
  return declared;
}

/** Marks the key's sources; a key column the body does not give is a 400. */
function keyedPlan(plan: InsertPlan, key: readonly string[]): InsertPlan {
  const missing = key.filter((name) => !plan.sources.some((s) => s.column.name === name));
  if (missing.length > 0) {
    throw badRequest(
      `the body does not give the key column${missing.length > 1 ? 's' : ''} ${missing.map((n) => JSON.stringify(n)).join(', ')}: every row needs its key`,
    );
  }
  return {
    ...plan,
    sources: plan.sources.map((s) =>
      key.includes(s.column.name) ? { ...s, key: true, column: { ...s.column, nullable: false } } : s,
    ),
  };
}

/** Keys given more than once in the body, as a 400 naming them. */
async function refuseDuplicateKeys(session: Session, staging: string, key: readonly string[]): Promise<void> {
  const columns = key.map(quoteIdentifier);
  const rows = await session.all<{ shown: string; n: bigint }>(
    `SELECT concat_ws(', ', ${key.map((name, i) => `${quoteLiteral(`${name} = `)} || CAST(${columns[i]} AS VARCHAR)`).join(', ')}) AS shown, count(*) AS n
       FROM ${staging} GROUP BY ${columns.join(', ')} HAVING count(*) > 1 ORDER BY count(*) DESC, shown LIMIT 5`,
  );
  if (rows.length === 0) return;
  const named = rows.map((row) => `${row.shown} (${row.n} rows)`).join('; ');
  throw badRequest(`the body gives a key more than once: ${named}; each key may appear once in an upsert`);
}

/**
 * Keeps what undoes the upsert (table-versions.ts): nothing when the table was empty (undo
 * empties it), else the rows it is about to replace and the body's keys.
 */
async function keepReplaced(
  session: Session,
  ref: TableRef,
  staging: string,
  key: readonly string[],
): Promise<Undo> {
  if (!(await hasRows(session, ref))) return { kind: 'all-added' };
  const keys = versionTableName();
  const data = versionTableName();
  const names = key.map(quoteIdentifier).join(', ');
  await session.run(
    `CREATE TABLE ${qualifiedName(ref.namespace, keys)} AS SELECT DISTINCT ${names} FROM ${staging}`,
  );
  const match = key.map((name) => `t.${quoteIdentifier(name)} = k.${quoteIdentifier(name)}`).join(' AND ');
  await session.run(
    `CREATE TABLE ${qualifiedName(ref.namespace, data)} AS
       SELECT t.* FROM ${qualifiedName(ref.namespace, ref.tableName)} t SEMI JOIN ${qualifiedName(ref.namespace, keys)} k ON ${match}`,
  );
  return { kind: 'rows-replaced', data, keys, key: [...key] };
}

export async function upsertRows(
  database: Database,
  account: Account,
  ref: TableRef,
  format: InsertFormat,
  received: ReceivedBody,
  givenKey: string | undefined,
  policy: VersionPolicy,
): Promise<UpsertOutcome> {
  assertCanWrite(account, ref.namespace);
  const table = await database.read((session) => writableTable(session, account, ref, 'upserts write'));
  const key = upsertKey(givenKey, table.keyColumns, table.declaredColumns, ref);
  const plan = keyedPlan(await readPlan(database, received, format, table.declaredColumns), key);
  const staging = quoteIdentifier(`upsert_${ulid().toLowerCase()}`);
  const target = qualifiedName(ref.namespace, ref.tableName);
  try {
    const outcome = await database.write(async (session) => {
      const now = await writableTable(session, account, ref, 'upserts write');
      if (JSON.stringify(now.declaredColumns) !== JSON.stringify(table.declaredColumns)) {
        throw conflict(`table ${fullName(ref)} was replaced during the upsert; send the rows again`);
      }
      const [staged] = await session.all<{ Count: bigint }>(
        `CREATE TEMP TABLE ${staging} AS ${convertedRows(plan)}`,
      );
      try {
        await refuseDuplicateKeys(session, staging, key);
        const undo = policy.kept > 0 ? await keepReplaced(session, ref, staging, key) : undefined;
        const match = key
          .map((name) => `${target}.${quoteIdentifier(name)} = s.${quoteIdentifier(name)}`)
          .join(' AND ');
        const [deleted] = await session.all<{ Count: bigint }>(
          `DELETE FROM ${target} USING ${staging} s WHERE ${match}`,
        );
        const names = plan.sources.map((s) => quoteIdentifier(s.column.name)).join(', ');
        await session.run(`INSERT INTO ${target} (${names}) SELECT ${names} FROM ${staging}`);
        const rowsWritten = Number(staged?.Count ?? 0);
        const rowsReplaced = Number(deleted?.Count ?? 0);
        const counts = {
          rowCount: now.rowCount - rowsReplaced + rowsWritten,
          sizeBytes: now.sizeBytes + received.bytes,
          at: new Date(),
        };
        if (undo) {
          await recordRowsChanged(session, ref, counts);
          await recordVersion(session, ref, policy, now, 'upsert', undo);
        } else {
          await recordUnversioned(session, ref, now, 'upsert', counts);
        }
        return { rowsWritten, rowsReplaced };
      } finally {
        // After a failed statement the transaction refuses everything; its rollback drops the table.
        await session.run(`DROP TABLE IF EXISTS ${staging}`).catch(() => undefined);
      }
    });
    database.checkpointAfter(outcome.rowsWritten);
    return outcome;
  } catch (error) {
    throw await bodyFailure(database, plan, error);
  }
}
