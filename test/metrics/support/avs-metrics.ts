import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESTAKING_NAMESPACE, SOURCE_TABLES, type SourceTableName } from '../../../src/demo/source-tables.js';
import type { Database, QueryResult, Session, SqlValue } from '../../../src/storage/database.js';
import { qualifiedName } from '../../../src/storage/sql.js';
import { createDeclaredTable } from '../../../src/tables/table-schema.js';

/** The saved query's file, run as it is: its header is comments, which are valid SQL. */
export const AVS_METRICS_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../queries/3693850-avs-metrics.sql',
);
export const AVS_METRICS_SQL = fs.readFileSync(AVS_METRICS_FILE, 'utf8');

export const TOKEN_COLUMNS = [
  'cbETH_TVL',
  'stETH_TVL',
  'rETH_TVL',
  'ETHx_TVL',
  'ankrETH_TVL',
  'OETH_TVL',
  'osETH_TVL',
  'swETH_TVL',
  'wBETH_TVL',
  'sfrxETH_TVL',
  'lsETH_TVL',
  'mETH_TVL',
  'beacon_chain_ETH_TVL',
] as const;

export const METRICS_COLUMNS = [
  'avs_name',
  'avs_contract_address',
  'num_operators',
  'total_TVL',
  'num_stakers',
  ...TOKEN_COLUMNS,
] as const;

export type MetricsRow = Record<(typeof METRICS_COLUMNS)[number], unknown>;

export async function createSourceTables(database: Database): Promise<void> {
  await database.write(async (session) => {
    for (const source of SOURCE_TABLES) {
      await createDeclaredTable(session, RESTAKING_NAMESPACE, source.name, source.columns, { replace: true });
    }
  });
}

/** Appends rows in the given order (which decides rowid, the last tie-breaker). */
export async function insertRows(
  session: Session,
  table: SourceTableName,
  rows: readonly (readonly SqlValue[])[],
): Promise<void> {
  if (rows.length === 0) return;
  const placeholders = rows.map((row) => `(${row.map(() => '?').join(', ')})`).join(', ');
  await session.run(
    `INSERT INTO ${qualifiedName(RESTAKING_NAMESPACE, table)} VALUES ${placeholders}`,
    rows.flat(),
  );
}

export async function runAvsMetrics(
  database: Database,
): Promise<{ result: QueryResult; rows: MetricsRow[] }> {
  const result = await database.read((session) => session.query(AVS_METRICS_SQL));
  const rows = result.rows.map(
    (values) => Object.fromEntries(result.columns.map((column, i) => [column.name, values[i]])) as MetricsRow,
  );
  return { result, rows };
}
