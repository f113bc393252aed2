import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadDemoData } from '../src/demo/demo-data.js';
import { RESTAKING_NAMESPACE, type SourceTableName } from '../src/demo/source-tables.js';
import { Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/service-schema.js';
import type { BenchRow } from './bench-table.js';

/**
 * How long one refresh of the AVS metrics (saved query 3693850) takes over the demo data
 * at scales 1, 10 and 100. Each scale gets a fresh database file; the query's result is
 * materialised with CREATE TABLE … AS, as a snapshot is. The baseline is one pass over the
 * share changes (the largest table) summing every shares_delta, measured the same way, so
 * the ratio says how many such passes a refresh costs whatever the machine's load.
 * Target: under 5 s at scale 100 on a 2-core machine.
 */

export interface MetricsRefreshMeasurement {
  scale: number;
  rows: Record<SourceTableName, number>;
  loadSeconds: number;
  /** Median of the runs. */
  queryMs: number;
  queryRunsMs: number[];
  baselineMs: number;
  resultRows: number;
}

const SCALES = [1, 10, 100] as const;
const RUNS = 3;
const TARGET_MS_AT_100 = 5_000;

const QUERY_FILE = path.join(import.meta.dirname, '..', 'queries', '3693850-avs-metrics.sql');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export async function measureScale(scale: number, sql: string): Promise<MetricsRefreshMeasurement> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-metrics-'));
  const database = await Database.open({ path: path.join(dir, 'warehouse.duckdb') });
  try {
    await migrate(database);
    const loadStarted = performance.now();
    const summary = await loadDemoData(database, { scale });
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    // Checkpointed, as a long-running service's tables are; otherwise the first run pays for it.
    await database.dedicated((session) => session.run('CHECKPOINT'));

    const queryRunsMs: number[] = [];
    const baselineRunsMs: number[] = [];
    let resultRows = 0;
    for (let run = 0; run < RUNS; run++) {
      queryRunsMs.push(
        await timed(() =>
          database.dedicated((session) => session.run(`CREATE OR REPLACE TABLE bench_snapshot AS ${sql}`)),
        ),
      );
      baselineRunsMs.push(
        await timed(() =>
          database.dedicated((session) =>
            session.run(
              `CREATE OR REPLACE TABLE bench_baseline AS
                 SELECT count(*) AS n, sum(shares_delta) AS shares FROM ${RESTAKING_NAMESPACE}.operator_share_changes`,
            ),
          ),
        ),
      );
    }
    const [count] = await database.read((session) =>
      session.all<{ n: bigint }>('SELECT count(*) AS n FROM bench_snapshot'),
    );
    resultRows = Number(count?.n ?? 0);
    return {
      scale,
      rows: summary.rows,
      loadSeconds,
      queryMs: median(queryRunsMs),
      queryRunsMs,
      baselineMs: median(baselineRunsMs),
      resultRows,
    };
  } finally {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function renderMeasurements(measurements: readonly MetricsRefreshMeasurement[]): string {
  const header = [
    'scale',
    'avs',
    'registrations',
    'delegations',
    'share changes',
    'strategies',
    'query ms (median of 3)',
    'runs ms',
    'baseline scan ms',
    'load s',
  ];
  const lines = measurements.map((m) => [
    String(m.scale),
    m.rows.avs.toLocaleString('en-US'),
    m.rows.operator_avs_registrations.toLocaleString('en-US'),
    m.rows.staker_delegations.toLocaleString('en-US'),
    m.rows.operator_share_changes.toLocaleString('en-US'),
    String(m.rows.strategies),
    m.queryMs.toFixed(0),
    m.queryRunsMs.map((ms) => ms.toFixed(0)).join(' / '),
    m.baselineMs.toFixed(0),
    m.loadSeconds.toFixed(1),
  ]);
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((line) => (line[i] ?? '').length)));
  const render = (line: string[]) =>
    `| ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`;
  return [render(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(render)].join(
    '\n',
  );
}

function toBenchRows(measurements: readonly MetricsRefreshMeasurement[]): BenchRow[] {
  return measurements.map((m) => ({
    benchmark: 'metrics refresh',
    case: `AVS metrics, demo scale ${m.scale} (${m.rows.operator_share_changes.toLocaleString('en-US')} share changes)`,
    value: m.queryMs,
    unit: 'ms',
    baseline: { name: 'one pass summing shares_delta', value: m.baselineMs },
    ratio: m.queryMs / m.baselineMs,
    ...(m.scale === 100 ? { target: `< ${TARGET_MS_AT_100} ms` } : {}),
    note: `demo load ${m.loadSeconds.toFixed(1)} s`,
  }));
}

export async function measureMetricsRefresh(
  scales: readonly number[] = SCALES,
  onMeasured?: (measurement: MetricsRefreshMeasurement) => void,
): Promise<MetricsRefreshMeasurement[]> {
  const sql = fs.readFileSync(QUERY_FILE, 'utf8');
  const measurements: MetricsRefreshMeasurement[] = [];
  for (const scale of scales) {
    const measurement = await measureScale(scale, sql);
    measurements.push(measurement);
    onMeasured?.(measurement);
  }
  return measurements;
}

export async function runMetricsRefreshBenchmark(): Promise<BenchRow[]> {
  return toBenchRows(await measureMetricsRefresh());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [oneMinute] = os.loadavg();
  process.stderr.write(
    `metrics refresh benchmark: ${os.cpus().length} cores, load average ${oneMinute?.toFixed(2)} at start\n`,
  );
  const measurements = await measureMetricsRefresh(SCALES, (m) =>
    process.stderr.write(
      `  scale ${m.scale}: query ${m.queryMs.toFixed(0)} ms, load ${m.loadSeconds.toFixed(1)} s\n`,
    ),
  );
  process.stdout.write(`${renderMeasurements(measurements)}\n`);
}
