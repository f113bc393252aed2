import fs from 'node:fs/promises';
import type { Account } from '../auth/account.js';
import { badRequest, conflict } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { OutOfMemoryError, raise, StorageError } from '../storage/storage-error.js';
import { convertValue } from './column-values.js';
import { NDJSON_LINE, ndjsonBlankLine } from './csv-dialect.js';
import { parseCsvHeader } from './csv-header.js';
import { outOfMemory } from './csv-loader.js';
import { trimTrailingNewlines } from './file-lines.js';
import { diagnoseInsert } from './insert-diagnosis.js';
import {
  csvPlan,
  type InsertFormat,
  type InsertPlan,
  ndjsonPlan,
  parquetPlan,
  planReader,
  stringList,
} from './insert-plan.js';
import { checkParquetFile, parquetColumns } from './parquet-body.js';
import type { ReceivedBody } from './receive-body.js';
import { assertCanWrite, findVisibleTable, fullName, type TableRef } from './table-access.js';
import { recordRowsAdded, type TableRecord } from './table-catalog.js';
import type { DeclaredColumn } from './table-schema.js';
import { recordUnversioned, recordVersion, type VersionPolicy, versionTableName } from './table-versions.js';

/**
 * The insert operation (DESIGN §4): appends a CSV or NDJSON body to a created table, all
 * rows or none. One INSERT … SELECT over DuckDB's reader converts and appends every row in
 * a single parallel pass inside one write transaction, together with the catalog's counts.
 * When any value fails, the transaction rolls back and the diagnosis names the first
 * faulty line and column; the happy path pays nothing for that.
 */

/** How much of the body's start is read for the CSV header. */
const HEADER_BYTES = 1 << 16;

export interface InsertOutcome {
  rowsWritten: number;
}

/** A created table `account` may see, with its declared columns: what inserts and upserts write to. */
export async function writableTable(
  session: Session,
  account: Account,
  ref: TableRef,
  operation = 'inserts append',
): Promise<TableRecord & { declaredColumns: DeclaredColumn[] }> {
  const table = await findVisibleTable(session, account, ref);
  if (!table.declaredColumns) {
    throw conflict(
      `table ${fullName(ref)} was stored by a CSV upload, which replaces its data; ${operation} only to tables made with the create operation`,
    );
  }
  return { ...table, declaredColumns: table.declaredColumns };
}

async function insertableColumns(
  session: Session,
  account: Account,
  ref: TableRef,
): Promise<DeclaredColumn[]> {
  return (await writableTable(session, account, ref)).declaredColumns;
}

/** Refuses early, before a large body is read, what the insert would refuse anyway. */
export async function checkInsertTarget(database: Database, account: Account, ref: TableRef): Promise<void> {
  assertCanWrite(account, ref.namespace);
  await database.read((session) => insertableColumns(session, account, ref));
}

async function readHeader(file: string, size: number): Promise<string[]> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.allocUnsafe(Math.min(size, HEADER_BYTES));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const header = parseCsvHeader(head.subarray(0, bytesRead), size <= HEADER_BYTES);
    if (!header) throw badRequest('the CSV is empty: its first line must name the columns');
    return header.columns;
  } finally {
    await handle.close();
  }
}

function insertStatement(plan: InsertPlan, ref: TableRef): string {
  const target = `${qualifiedName(ref.namespace, ref.tableName)} (${plan.sources.map((s) => quoteIdentifier(s.column.name)).join(', ')})`;
  return `INSERT INTO ${target} ${convertedRows(plan)}`;
}

/**
 * The body's rows converted to the table's types, one column per source named as the table's
 * column; a value that does not fit raises (then `diagnoseInsert` says where).
 */
export function convertedRows(plan: InsertPlan): string {
  const values = plan.sources
    .map((s) => {
      const value = convertValue(s.column, s.text);
      const checked = s.key
        ? `CASE WHEN ${s.text} IS NULL THEN ${raise('a key column has no value')} ELSE ${value} END`
        : value;
      return `${checked} AS ${quoteIdentifier(s.column.name)}`;
    })
    .join(', ');
  if (plan.format !== 'ndjson') return `SELECT ${values} FROM ${planReader(plan)}`;
  const pointers = stringList(plan.pointers);
  const names = stringList(plan.sources.map((s) => s.column.name));
  const wellFormed = `json_valid(${NDJSON_LINE}) AND json_type(${NDJSON_LINE}) = 'OBJECT'
    AND list_has_all(${names}, json_keys(${NDJSON_LINE}))
    AND len(json_keys(${NDJSON_LINE})) = len(list_distinct(json_keys(${NDJSON_LINE})))
    AND NOT list_has_any(json_type(${NDJSON_LINE}, ${pointers}), ['OBJECT', 'ARRAY'])`;
  return `SELECT ${values} FROM (SELECT ${plan.textColumns} FROM (
      SELECT ${NDJSON_LINE}, json_extract_string(${NDJSON_LINE}, ${pointers}) AS ${plan.valuesName}
        FROM ${planReader(plan)}
       WHERE CASE WHEN ${ndjsonBlankLine} THEN false WHEN ${wellFormed} THEN true
             ELSE ${raise('line is not a JSON object of the table columns')} END))`;
}

function sameColumns(a: readonly DeclaredColumn[], b: readonly DeclaredColumn[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What the body gives and how each value is read; a body that is empty or not its format is a 400. */
export async function readPlan(
  database: Database,
  received: ReceivedBody,
  format: InsertFormat,
  columns: readonly DeclaredColumn[],
): Promise<InsertPlan> {
  if (format === 'parquet') {
    await checkParquetFile(received.file);
    const body = await database.read((session) => parquetColumns(session, received.file));
    return parquetPlan(received.file, body, columns);
  }
  const size = await trimTrailingNewlines(received.file);
  if (size === 0) {
    throw badRequest(
      format === 'csv'
        ? 'the body is empty: send a CSV whose first line names the columns'
        : 'the body is empty: send one JSON object per line',
    );
  }
  return format === 'csv'
    ? csvPlan(received.file, received.lineEnd, await readHeader(received.file, size), columns)
    : ndjsonPlan(received.file, columns);
}

/** A failed write of a body's rows, as the client's 400 when the body is at fault. */
export async function bodyFailure(database: Database, plan: InsertPlan, error: unknown): Promise<unknown> {
  if (error instanceof OutOfMemoryError) return outOfMemory(plan.fieldCount);
  if (!(error instanceof StorageError)) return error;
  return (await database.read((session) => diagnoseInsert(session, plan, error))) ?? error;
}

export async function insertRows(
  database: Database,
  account: Account,
  ref: TableRef,
  format: InsertFormat,
  received: ReceivedBody,
  policy: VersionPolicy,
): Promise<InsertOutcome> {
  assertCanWrite(account, ref.namespace);
  const columns = await database.read((session) => insertableColumns(session, account, ref));
  const plan = await readPlan(database, received, format, columns);
  try {
    const outcome = await database.write(async (session) => {
      const before = await writableTable(session, account, ref);
      if (!sameColumns(before.declaredColumns, columns)) {
        throw conflict(`table ${fullName(ref)} was replaced during the insert; send the rows again`);
      }
      const rows = await appendRows(session, ref, plan, policy, before);
      await recordRowsAdded(session, ref, { rows, bytes: received.bytes, at: new Date() });
      return { rowsWritten: rows };
    });
    database.checkpointAfter(outcome.rowsWritten);
    return outcome;
  } catch (error) {
    throw await bodyFailure(database, plan, error);
  }
}

/**
 * Appends the body's rows, keeping what undoes it (table-versions.ts): nothing for a table
 * that was empty (undo empties it), else the rows added, loaded once into the version's table
 * and appended from there. Returns the rows appended.
 */
async function appendRows(
  session: Session,
  ref: TableRef,
  plan: InsertPlan,
  policy: VersionPolicy,
  before: TableRecord,
): Promise<number> {
  if (policy.kept === 0 || !(await hasRows(session, ref))) {
    const [result] = await session.all<{ Count: bigint }>(insertStatement(plan, ref));
    if (policy.kept === 0) await recordUnversioned(session, ref, before, 'insert');
    else await recordVersion(session, ref, policy, before, 'insert', { kind: 'all-added' });
    return Number(result?.Count ?? 0);
  }
  const kept = versionTableName();
  const data = qualifiedName(ref.namespace, kept);
  const [result] = await session.all<{ Count: bigint }>(`CREATE TABLE ${data} AS ${convertedRows(plan)}`);
  const names = plan.sources.map((s) => quoteIdentifier(s.column.name)).join(', ');
  await session.run(
    `INSERT INTO ${qualifiedName(ref.namespace, ref.tableName)} (${names}) SELECT ${names} FROM ${data}`,
  );
  await recordVersion(session, ref, policy, before, 'insert', { kind: 'rows-added', data: kept });
  return Number(result?.Count ?? 0);
}

/** Whether the table holds any row (the catalog's count may lag a table changed outside the API). */
export async function hasRows(session: Session, ref: TableRef): Promise<boolean> {
  const rows = await session.all(`SELECT 1 FROM ${qualifiedName(ref.namespace, ref.tableName)} LIMIT 1`);
  return rows.length > 0;
}
