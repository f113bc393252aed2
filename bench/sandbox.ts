import fs from 'node:fs';
import path from 'node:path';
import { loadDemoData } from '../src/demo/demo-data.js';
import { SqlChecker } from '../src/queries/sandbox/checker-pool.js';
import { MAX_SQL_BYTES, sandboxSql } from '../src/queries/sandbox/sandbox-sql.js';
import { tableResolver } from '../src/queries/sandbox/table-resolver.js';
import { Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/service-schema.js';
import { type BenchRow, median } from './bench-table.js';

/**
 * What the sandbox adds to a user's query (DESIGN §10): `sandboxSql` from SQL text to checked
 * SQL (json_serialize_sql, the walk, resolving the tables, json_deserialize_sql and the second
 * parse and walk), for SQL texts from 60 bytes to the largest accepted. The baseline is
 * `SELECT 1` run on the same connection, DuckDB's fixed cost per statement, so the ratio says
 * how many such statements the check costs whatever the machine's load. Target: a millisecond
 * or two for ordinary SQL, within the service overhead of ≤ 15 ms for `select 1`. The check
 * runs on the checker's worker thread (one, as the service's default), its tables resolved
 * here; `SELECT 1` on the main thread took 0.8 ms before the worker (2026-11-27, load 2).
 */

const RUNS = 30;

const METRICS_SQL = fs.readFileSync(
  path.join(import.meta.dirname, '..', 'queries', '3693850-avs-metrics.sql'),
  'utf8',
);

/** Repeats `part` joined by `separator` to just under MAX_SQL_BYTES. */
function largest(prefix: string, part: string, separator: string): string {
  const count = Math.floor((MAX_SQL_BYTES - prefix.length) / (part.length + separator.length));
  return prefix + Array(count).fill(part).join(separator);
}

const CASES: { name: string; sql: string; refused?: boolean }[] = [
  { name: 'select 1', sql: 'select 1' },
  {
    name: 'small query',
    sql: 'SELECT avs_name, count(*) AS n FROM restaking.avs GROUP BY avs_name ORDER BY n DESC LIMIT 10',
  },
  { name: 'AVS metrics query', sql: METRICS_SQL },
  {
    name: 'largest: a UNION of 1-row selects',
    sql: largest('', "SELECT avs_name FROM restaking.avs WHERE avs_name = 'x'", ' UNION ALL '),
  },
  { name: 'largest: an IN list', sql: `${largest('SELECT 1 WHERE 1 IN (', '123456', ', ')})` },
  {
    name: 'the longest AND chain accepted (2,800 terms)',
    sql: `SELECT 1 WHERE ${Array(2_800).fill('true').join(' AND ')}`,
  },
  {
    name: 'largest: one long AND chain, refused before parsing',
    sql: largest('SELECT 1 WHERE ', 'true', ' AND '),
    refused: true,
  },
];

export async function runSandboxBenchmark(): Promise<BenchRow[]> {
  const database = await Database.open({
    path: ':memory:',
    catalogReaders: 1,
    resultReaders: 1,
    allowedDirectories: [],
  });
  const checker = new SqlChecker({ workers: 1, maxWaiting: 10, maxWaitMs: 60_000 });
  try {
    await migrate(database);
    await loadDemoData(database, { scale: 1 });
    const admin = { handle: 'root', plan: 'premium' as const, admin: true };
    return await database.read(async (session) => {
      const resolve = tableResolver(session, admin);
      const baseline: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        await session.all('SELECT 1');
        baseline.push(performance.now() - started);
      }
      const baselineMs = median(baseline);
      const rows: BenchRow[] = [];
      // The worker starts once, as the service starts it at once (SqlChecker.warm).
      await sandboxSql(checker, 'SELECT 1', resolve);
      for (const { name, sql, refused } of CASES) {
        const runs: number[] = [];
        for (let i = 0; i < (sql.length > 10_000 ? 5 : RUNS); i++) {
          const started = performance.now();
          const checked = sandboxSql(checker, sql, resolve);
          if (refused)
            await checked.then(
              () => Promise.reject(new Error(`${name} was accepted`)),
              () => undefined,
            );
          else await checked;
          runs.push(performance.now() - started);
        }
        const value = median(runs);
        rows.push({
          benchmark: 'sandbox',
          case: `${name} (${Buffer.byteLength(sql).toLocaleString('en-US')} B)`,
          value,
          unit: 'ms',
          baseline: { name: 'SELECT 1 run', value: baselineMs },
          ratio: value / baselineMs,
          target: sql.length < 10_000 ? '1–2 ms' : '',
        });
      }
      return rows;
    });
  } finally {
    await checker.close();
    await database.close();
  }
}
