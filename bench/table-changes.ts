import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/service-schema.js';
import { saveTable } from '../src/tables/table-catalog.js';
import { createDeclaredTable, type DeclaredColumn } from '../src/tables/table-schema.js';
import { BENCH_KEY as KEY } from './bench-api.js';
import { type BenchRow, median } from './bench-table.js';
import { startServiceProcess } from './processes.js';

/**
 * Changing rows of a large table (issue 24), over HTTP against the service in a child process,
 * each against DuckDB doing the same change to the same rows directly in this process, in the
 * same run, interleaved:
 *  - upsert of 1,000,000 rows (half of them new, half replacing rows spread over the table) into
 *    a 10,000,000-row table, against DuckDB's own `INSERT OR REPLACE` of the same CSV into the
 *    same rows with a PRIMARY KEY (what DuckDB needs for it). Target ≤ 2×.
 *  - delete-rows with a filter, against DuckDB's `DELETE` with the same predicate: one trader's
 *    trades (a few hundred rows, spread), and a token's small trades (~3% of the rows). Target
 *    ≤ 1.2×.
 * Each with the default TABLE_VERSIONS_KEPT=1 (the previous version kept for restore) and with 0
 * (no version): what keeping a version costs is the difference. Every change is committed, and
 * undone before the next round (a restore, or DuckDB's own statements on the baseline), untimed.
 * The table looks like a DEX trades export: timestamps, 0x hashes and addresses, 18-decimal
 * amounts in raw units (uint256), USD doubles, quoted text with commas and quotes.
 */

const ROWS = Number(process.env.BENCH_CHANGE_ROWS ?? 10_000_000);
const UPSERT_ROWS = Number(process.env.BENCH_UPSERT_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_CHANGE_ROUNDS ?? 5);
const TRADERS = 20_000;

const COLUMNS: DeclaredColumn[] = [
  { name: 'trade_id', type: 'bigint', nullable: false },
  { name: 'block_time', type: 'timestamp', nullable: true },
  { name: 'block_number', type: 'bigint', nullable: true },
  { name: 'tx_hash', type: 'varchar', nullable: true },
  { name: 'trader', type: 'varchar', nullable: true },
  { name: 'token', type: 'varchar', nullable: true },
  { name: 'amount_raw', type: 'uint256', nullable: true },
  { name: 'amount_usd', type: 'double', nullable: true },
  { name: 'note', type: 'varchar', nullable: true },
];

const traderOf = (k: string) => `'0x' || left(md5(${k}::VARCHAR) || md5((${k} + 1)::VARCHAR), 40)`;

/** The trades, deterministic: row `i` of the table (or of the upsert, with other values). */
function tradesSql(from: string, salt: number): string {
  return `SELECT i AS trade_id,
      TIMESTAMP '2024-01-01' + to_microseconds(i * 250000) AS block_time,
      19000000 + i // 50 AS block_number,
      '0x' || md5(i::VARCHAR) || md5((i + ${salt})::VARCHAR) AS tx_hash,
      ${traderOf(`(hash(i) % ${TRADERS})`)} AS trader,
      ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH', 'USDC', 'WBTC'][i % 8 + 1] AS token,
      CAST(CAST((hash(i + ${salt}) % 1000000000000)::HUGEINT * 1000000000000 + i % 997 AS VARCHAR) AS BIGNUM) AS amount_raw,
      (hash(i * 3 + ${salt}) % 10000000) / 100.0 AS amount_usd,
      CASE i % 7 WHEN 0 THEN 'rebalance, weekly' WHEN 1 THEN 'said "gm" first' END AS note
    FROM ${from}`;
}

/** The upsert's rows: every 20th row of the table with new values, and as many new rows. */
const UPSERT_SQL = tradesSql(
  `(SELECT range * 20 AS i FROM range(${UPSERT_ROWS / 2}) UNION ALL SELECT ${ROWS} + range AS i FROM range(${UPSERT_ROWS / 2}))`,
  7,
);

async function makeDataDir(dir: string): Promise<string> {
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const database = await Database.open({ path: path.join(dataDir, 'warehouse.duckdb') });
  try {
    await migrate(database);
    await database.write(async (session) => {
      await createDeclaredTable(session, 'bench', 'trades', COLUMNS);
      await session.run(`INSERT INTO bench.trades ${tradesSql(`range(${ROWS}) r(i)`, 0)}`);
      await saveTable(session, {
        namespace: 'bench',
        tableName: 'trades',
        description: 'DEX trades',
        isPrivate: false,
        updatedAt: new Date(),
        rowCount: ROWS,
        sizeBytes: 0,
        declaredColumns: COLUMNS,
        keyColumns: ['trade_id'],
      });
    });
    await database.dedicated((session) => session.run('CHECKPOINT'));
  } finally {
    await database.close();
  }
  return dataDir;
}

/**
 * The same rows in DuckDB directly: `trades` keyed for INSERT OR REPLACE, `plain` as the
 * service's table is (no index) for DELETE; and the upsert's CSV.
 */
async function baseline(dir: string, upsertCsv: string): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(path.join(dir, 'direct.duckdb'));
  const connection = await instance.connect();
  const types = COLUMNS.map((c) => `${c.name} ${c.type === 'uint256' ? 'BIGNUM' : c.type.toUpperCase()}`);
  await connection.run(`CREATE TABLE trades (${types.join(', ')}, PRIMARY KEY (trade_id))`);
  await connection.run(`INSERT INTO trades ${tradesSql(`range(${ROWS}) r(i)`, 0)}`);
  await connection.run(`COPY (${UPSERT_SQL}) TO '${upsertCsv}' (HEADER)`);
  // The rows the upsert replaces, to put back between rounds.
  await connection.run(
    `CREATE TABLE replaced AS SELECT * FROM trades WHERE trade_id % 20 = 0 AND trade_id < ${UPSERT_ROWS * 10}`,
  );
  // DELETE's baseline is the table as the service has it: without the key's index to maintain.
  await connection.run(`CREATE TABLE plain (${types.join(', ')})`);
  await connection.run('INSERT INTO plain SELECT * FROM trades');
  await connection.run('CHECKPOINT');
  return connection;
}

const csvColumns = `{${COLUMNS.map((c) => `'${c.name}': '${c.type === 'uint256' ? 'BIGNUM' : c.type.toUpperCase()}'`).join(', ')}}`;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function call(
  base: string,
  urlPath: string,
  body: string | Buffer,
  type: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${urlPath}`, {
    method: 'POST',
    headers: { 'x-service-api-key': KEY, 'content-type': type },
    body,
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`${urlPath}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function currentVersion(base: string): Promise<number> {
  const response = await fetch(`${base}/v1/table/bench/trades/versions`, {
    headers: { 'x-service-api-key': KEY },
  });
  const body = (await response.json()) as { versions: { version: number; current: boolean }[] };
  return (body.versions.find((v) => v.current) as { version: number }).version;
}

interface Case {
  name: string;
  baseline: string;
  target: string;
  /** Untimed SQL on DuckDB before its change (what its undo needs). */
  prepareDirect?: (at: number) => string;
  /** DuckDB's own change. */
  direct: (at: number) => string;
  /** Its undo, when the service's change is undone too (versions kept: a restore). */
  undoDirect: (at: number) => string;
  /** The service's change. */
  service: (base: string, at: number) => Promise<unknown>;
  /** Its undo when no version is kept; undefined: the change is left (the next round changes other rows). */
  undoService?: (base: string) => Promise<unknown>;
}

const TOKENS = ['USDC', 'WBTC', 'stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH'];

function deleteCase(name: string, predicate: (at: number) => string): Case {
  return {
    name,
    baseline: 'DuckDB DELETE',
    target: '≤ 1.2×',
    prepareDirect: (at) => `CREATE OR REPLACE TEMP TABLE gone AS SELECT * FROM plain WHERE ${predicate(at)}`,
    direct: (at) => `DELETE FROM plain WHERE ${predicate(at)}`,
    undoDirect: () => 'INSERT INTO plain SELECT * FROM gone',
    service: (base, at) =>
      call(
        base,
        '/v1/table/bench/trades/delete-rows',
        JSON.stringify({ filters: predicate(at) }),
        'application/json',
      ),
  };
}

function cases(dir: string, upsertCsv: string, traders: readonly string[]): Case[] {
  const upsertBody = fs.readFileSync(upsertCsv);
  const restoreCsv = path.join(dir, 'restore.csv');
  return [
    {
      name: `upsert ${UPSERT_ROWS.toLocaleString('en-US')} rows (half new) into ${ROWS.toLocaleString('en-US')}`,
      baseline: 'DuckDB INSERT OR REPLACE',
      target: '≤ 2×',
      direct: () =>
        `INSERT OR REPLACE INTO trades SELECT * FROM read_csv('${upsertCsv}', header = true, columns = ${csvColumns})`,
      undoDirect: () =>
        `DELETE FROM trades WHERE trade_id >= ${ROWS}; INSERT OR REPLACE INTO trades SELECT * FROM replaced`,
      service: (base) => call(base, '/v1/table/bench/trades/upsert', upsertBody, 'text/csv'),
      undoService: async (base) => {
        await call(
          base,
          '/v1/table/bench/trades/delete-rows',
          JSON.stringify({ filters: `trade_id >= ${ROWS}` }),
          'application/json',
        );
        await call(base, '/v1/table/bench/trades/upsert', fs.readFileSync(restoreCsv), 'text/csv');
      },
    },
    deleteCase('delete-rows: one trader (~500 rows, spread)', (at) => `trader = '${traders[at]}'`),
    deleteCase(
      "delete-rows: a token's small trades (~3% of rows)",
      // Rows of their own each round: a token, and past the eighth round another quarter of the amounts.
      (at) =>
        `token = '${TOKENS[at % TOKENS.length]}' AND amount_usd >= ${25000 * Math.floor(at / TOKENS.length)} AND amount_usd < ${25000 * (Math.floor(at / TOKENS.length) + 1)}`,
    ),
  ];
}

export async function runTableChangesBenchmark(
  log: (line: string) => void = console.error,
): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-changes-'));
  const upsertCsv = path.join(dir, 'upsert.csv');
  try {
    log(`making ${ROWS} rows, twice (the service's table, and DuckDB's directly)`);
    const dataDir = await makeDataDir(dir);
    const direct = await baseline(dir, upsertCsv);
    await direct.run(`COPY replaced TO '${path.join(dir, 'restore.csv')}' (HEADER)`);
    const traders: string[] = [];
    for (let at = 0; at < 2 * ROUNDS; at++) {
      const reader = await direct.runAndReadAll(`SELECT ${traderOf(String(1000 + at))}`);
      traders.push(String(reader.getRows()[0]?.[0]));
    }
    const rows: BenchRow[] = [];
    // Versions kept (the default), then none; each round changes rows of its own (`at`).
    for (const kept of [1, 0]) {
      rows.push(...(await measure(dataDir, direct, cases(dir, upsertCsv, traders), kept, log)));
    }
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  dataDir: string,
  direct: DuckDBConnection,
  all: readonly Case[],
  kept: number,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const service = await startServiceProcess(dataDir, {
    API_KEYS: `${KEY}=bench:premium:admin`,
    TABLE_VERSIONS_KEPT: String(kept),
  });
  try {
    for (const change of all) {
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const at = kept === 1 ? round : round + ROUNDS;
        if (change.prepareDirect) await direct.run(change.prepareDirect(at));
        theirs.push(await timed(() => direct.run(`BEGIN; ${change.direct(at)}; COMMIT`)));
        const version = kept === 1 ? await currentVersion(service.url) : 0;
        ours.push(await timed(() => change.service(service.url, at)));
        if (kept === 1) {
          await call(
            service.url,
            '/v1/table/bench/trades/restore',
            JSON.stringify({ version }),
            'application/json',
          );
          await direct.run(`BEGIN; ${change.undoDirect(at)}; COMMIT`);
        } else if (change.undoService) {
          await change.undoService(service.url);
          await direct.run(`BEGIN; ${change.undoDirect(at)}; COMMIT`);
        }
        log(
          `${change.name}, TABLE_VERSIONS_KEPT=${kept}, round ${round + 1}: service ${ours[round]?.toFixed(0)} ms, DuckDB ${theirs[round]?.toFixed(0)} ms`,
        );
      }
      const value = median(ours);
      const base = median(theirs);
      rows.push({
        benchmark: 'table changes',
        case: `${change.name}, TABLE_VERSIONS_KEPT=${kept}`,
        value,
        unit: 'ms',
        baseline: { name: change.baseline, value: base },
        ratio: value / base,
        target: change.target,
        note: `service ${ours.map((ms) => ms.toFixed(0)).join(', ')}; DuckDB ${theirs.map((ms) => ms.toFixed(0)).join(', ')} (each committed; the service's over HTTP)`,
      });
    }
  } finally {
    await service.stop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  console.log(renderTable(await runTableChangesBenchmark()));
}
