import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { type BenchRow, median } from './bench-table.js';
import { writeBenchmarkCsv } from './benchmark-csv.js';
import { startServiceProcess } from './processes.js';

/**
 * The insert operation over HTTP with a ~100 MB CSV into a created table, against DuckDB
 * loading the same file directly (`CREATE TABLE AS SELECT * FROM read_csv(...)` into a
 * fresh database file), in the same run on the same machine; medians of 3, interleaved.
 * Target (issue 5): insert time <= 1.5x the direct load.
 *
 *   npx tsx bench/table-insert.ts [--mb 100] [--runs 3]
 */

const KEY = 'bench-key-00000001';
const TARGET_RATIO = 1.5;

export interface TableInsertResult extends BenchRow {
  baseline: { name: string; value: number };
  ratio: number;
  runs: { insertSeconds: number[]; directSeconds: number[] };
}

/** The columns of the benchmark CSV (bench/benchmark-csv.ts), declared for the created table. */
const SCHEMA = [
  { name: 'block_number', type: 'bigint', nullable: false },
  { name: 'log_index', type: 'bigint', nullable: false },
  { name: 'tx_hash', type: 'varchar' },
  { name: 'staker', type: 'varchar' },
  { name: 'token', type: 'varchar' },
  { name: 'amount', type: 'double' },
  { name: 'block_time', type: 'timestamp' },
  { name: 'is_deposit', type: 'boolean' },
  { name: 'memo', type: 'varchar' },
];

/** The service as users run it: its own process, through the CLI. */
type Service = Awaited<ReturnType<typeof startServiceProcess>>;

async function call(url: string, method: string, urlPath: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${url}${urlPath}`, {
    method,
    headers: { 'x-service-api-key': KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Streams the file as the body, with Content-Length, as a client uploading a file would. */
function postCsv(url: string, file: string): Promise<{ status: number; body: string }> {
  const size = fs.statSync(file).size;
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/table/bench/events/insert`,
      {
        method: 'POST',
        headers: { 'x-service-api-key': KEY, 'content-type': 'text/csv', 'content-length': size },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

async function timeInsert(service: Service, file: string, expectedRows: number): Promise<number> {
  // A fresh table each run, as the direct load makes a fresh one.
  await call(service.url, 'DELETE', '/v1/table/bench/events').catch(() => undefined);
  await call(service.url, 'POST', '/v1/table/create', {
    namespace: 'bench',
    table_name: 'events',
    schema: SCHEMA,
  });
  const started = performance.now();
  const { status, body } = await postCsv(service.url, file);
  const seconds = (performance.now() - started) / 1000;
  if (status !== 200) throw new Error(`insert answered ${status}: ${body}`);
  const written = (JSON.parse(body) as { rows_written: number }).rows_written;
  if (written !== expectedRows) throw new Error(`insert wrote ${written} rows, expected ${expectedRows}`);
  return seconds;
}

async function timeDirectLoad(dir: string, file: string, run: number): Promise<number> {
  const database = path.join(dir, `direct-${run}.duckdb`);
  const instance = await DuckDBInstance.create(database);
  const connection = await instance.connect();
  try {
    const started = performance.now();
    await connection.run('CREATE TABLE events AS SELECT * FROM read_csv(?)', [file]);
    return (performance.now() - started) / 1000;
  } finally {
    connection.closeSync();
    instance.closeSync();
    fs.rmSync(database, { force: true });
    fs.rmSync(`${database}.wal`, { force: true });
  }
}

export async function runTableInsertBenchmark(
  options: { megabytes?: number; runs?: number; log?: (line: string) => void } = {},
): Promise<TableInsertResult> {
  const megabytes = options.megabytes ?? 100;
  const runs = options.runs ?? 3;
  const log = options.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-insert-'));
  const csv = path.join(dir, 'events.csv');
  let service: Service | undefined;
  try {
    const rows = writeBenchmarkCsv(csv, megabytes * 1_000_000);
    const bytes = fs.statSync(csv).size;
    log(`CSV: ${(bytes / 1e6).toFixed(1)} MB, ${rows} rows, ${SCHEMA.length} columns`);
    service = await startServiceProcess(path.join(dir, 'service'), { API_KEYS: `${KEY}=bench:premium` });
    const insertSeconds: number[] = [];
    const directSeconds: number[] = [];
    for (let run = 0; run < runs; run++) {
      directSeconds.push(await timeDirectLoad(dir, csv, run));
      insertSeconds.push(await timeInsert(service, csv, rows));
      log(
        `run ${run + 1}: direct read_csv ${directSeconds[run]?.toFixed(2)} s, insert over HTTP ${insertSeconds[run]?.toFixed(2)} s`,
      );
    }
    const insert = median(insertSeconds);
    const direct = median(directSeconds);
    return {
      benchmark: 'table insert',
      case: `${(bytes / 1e6).toFixed(0)} MB CSV, ${rows} rows`,
      value: insert,
      unit: 's',
      baseline: { name: 'DuckDB CREATE TABLE AS read_csv', value: direct },
      ratio: insert / direct,
      target: `<= ${TARGET_RATIO}x`,
      note: `median of ${runs}; insert includes the HTTP transfer`,
      runs: { insertSeconds, directSeconds },
    };
  } finally {
    await service?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function flag(name: string): number | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runTableInsertBenchmark({ megabytes: flag('mb'), runs: flag('runs') });
  console.log(
    `insert over HTTP: ${result.value.toFixed(2)} s; DuckDB direct load: ${result.baseline.value.toFixed(2)} s; ratio ${result.ratio.toFixed(2)} (target ${result.target})`,
  );
  process.exitCode = result.ratio <= TARGET_RATIO ? 0 : 1;
}
