import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

/**
 * The insert operation over HTTP with a ~100 MB CSV into a created table, against DuckDB
 * loading the same file directly (`CREATE TABLE AS SELECT * FROM read_csv(...)` into a
 * fresh database file), in the same run on the same machine; medians of 3, interleaved.
 * Target (issue 5): insert time <= 1.5x the direct load.
 *
 *   npx tsx bench/table-insert.ts [--mb 100] [--runs 3]
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const KEY = 'bench-key-00000001';
const TARGET_RATIO = 1.5;

export interface TableInsertResult {
  benchmark: string;
  case: string;
  /** Median seconds of the insert over HTTP. */
  value: number;
  unit: string;
  baseline: { name: string; value: number };
  ratio: number;
  target: string;
  note: string;
  runs: { insertSeconds: number[]; directSeconds: number[] };
}

export const SCHEMA = [
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

/** A CSV shaped like on-chain events, matching SCHEMA (and what read_csv infers from it). */
export function writeCsv(file: string, targetBytes: number): number {
  const fd = fs.openSync(file, 'w');
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const hex = (length: number) => {
    let out = '';
    while (out.length < length)
      out += Math.floor(random() * 0xffffffff)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, length);
  };
  const tokens = ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH'];
  let written = 0;
  let rows = 0;
  let batch = `${SCHEMA.map((c) => c.name).join(',')}\n`;
  while (written + batch.length < targetBytes) {
    const block = 18_000_000 + Math.floor(rows / 12);
    const time = new Date(Date.UTC(2023, 8, 1) + block * 12_000).toISOString().slice(0, 19).replace('T', ' ');
    const memo = rows % 9 === 0 ? '"restake, then delegate"' : `note ${rows % 1000}`;
    batch += `${block},${rows % 40},0x${hex(64)},0x${hex(40)},${tokens[rows % tokens.length]},${(random() * 1000).toFixed(6)},${time},${rows % 3 === 0},${memo}\n`;
    rows++;
    if (batch.length > 1 << 20) {
      fs.writeSync(fd, batch);
      written += batch.length;
      batch = '';
    }
  }
  fs.writeSync(fd, batch);
  fs.closeSync(fd);
  return rows;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

interface Service {
  url: string;
  stop(): Promise<void>;
}

/** The service as users run it: its own process, through the CLI. */
async function startService(dataDir: string): Promise<Service> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMITS: 'off',
      API_KEYS: `${KEY}=bench:premium`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = Date.now() + 120_000;
  for (;;) {
    const match = /Serving on (http:\/\/\S+)/.exec(output);
    if (match?.[1]) {
      return {
        url: match[1],
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > until)
      throw new Error(`the service did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    const rows = writeCsv(csv, megabytes * 1_000_000);
    const bytes = fs.statSync(csv).size;
    log(`CSV: ${(bytes / 1e6).toFixed(1)} MB, ${rows} rows, ${SCHEMA.length} columns`);
    service = await startService(path.join(dir, 'service'));
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
