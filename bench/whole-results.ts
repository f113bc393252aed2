import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/service-schema.js';
import { type BenchRow, median } from './bench-table.js';
import {
  cpuSeconds,
  currentRss,
  peakRss,
  resetPeakRss,
  startServiceProcess,
  threadCpuSeconds,
} from './processes.js';

/**
 * Whole results (issue 17, part 2): a 1,000,000-row, 6-column users' result made through
 * the API (`POST /v1/sql/execute`), read to the end over loopback
 *  (a) as JSON pages through `next_uri`, each as large as the datapoint cap allows, and
 *  (b) as one CSV (`ignore_max_datapoints_per_request=true`),
 * against DuckDB writing the same rows with `COPY … TO` (JSON, CSV) in this process, in the
 * same run, alternating round by round. Targets: CSV ≤ 1.5×, JSON pages ≤ 2×, a page's time
 * independent of its offset (first, middle and last pages printed), the server's RSS bounded.
 *
 * The client keeps only the first and last few kilobytes of each answer, to read `next_uri`
 * and `row_count` (the CSV's `X-Dune-Next-Uri`): its own parsing is not what is measured.
 * Beside each wall time, CPU time: the service's main thread (JavaScript) and its other
 * threads (DuckDB), from /proc, against this process's for DuckDB's COPY.
 *
 * `BENCH_CPU_PROF_DIR=dir` starts the service with `--cpu-prof` into that folder (read the
 * profile with `npx tsx bench/cpu-profile.ts dir/*.cpuprofile`).
 */

const KEY = 'bench-key-00000001';
const ROWS = Number(process.env.BENCH_WHOLE_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_WHOLE_ROUNDS ?? 3);
const MAX_DATAPOINTS = 250_000;
const COLUMNS = 6;
/** The largest page the datapoint cap allows for six columns. */
const PAGE_ROWS = Math.floor(MAX_DATAPOINTS / COLUMNS);

/**
 * Six columns of the kinds users' results have: a bigint, a double, a varchar, a timestamp,
 * a boolean and a 0x address. Deterministic; the sandbox allows every function here.
 */
const RESULT_SQL = `SELECT i AS block_number,
  CAST((i * 7919) % 1000003 AS DOUBLE) / 1000 AS amount,
  'token_' || (i % 13) AS token,
  TIMESTAMP '2024-01-01' + to_seconds(i * 13) AS block_time,
  i % 3 = 0 AS staked,
  '0x' || lpad(lower(to_hex((i * 2654435761) % 1099511627776)), 40, '0') AS avs_address
  FROM range(${ROWS}) r(i)`;

interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: number;
  /** The first and last few kilobytes of the body. */
  head: string;
  tail: string;
  ms: number;
}

const EDGE_BYTES = 4096;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** GET over a kept-alive connection, keeping only the body's edges. */
function get(url: string): Promise<Fetched> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { 'x-service-api-key': KEY } }, (response) => {
      let bytes = 0;
      let head = Buffer.alloc(0);
      let previous: Buffer | undefined;
      let last: Buffer | undefined;
      response.on('data', (chunk: Buffer) => {
        if (head.length < EDGE_BYTES)
          head = Buffer.concat([head, chunk.subarray(0, EDGE_BYTES - head.length)]);
        bytes += chunk.length;
        previous = last;
        last = chunk;
      });
      response.on('end', () => {
        const edge = Buffer.concat([previous ?? Buffer.alloc(0), last ?? Buffer.alloc(0)]);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          bytes,
          head: head.toString('utf8'),
          tail: edge.subarray(Math.max(0, edge.length - EDGE_BYTES)).toString('utf8'),
          ms: performance.now() - started,
        });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function api<T>(url: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(url, { ...init, headers: { 'x-service-api-key': KEY } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Runs the result's SQL through the API and waits until its execution has completed. */
async function execute(base: string): Promise<string> {
  const { execution_id: id } = await api<{ execution_id: string }>(`${base}/api/v1/sql/execute`, {
    method: 'POST',
    body: JSON.stringify({ sql: RESULT_SQL, performance: 'medium' }),
  });
  for (;;) {
    const status = await api<{ state: string; is_execution_finished: boolean }>(
      `${base}/api/v1/execution/${id}/status`,
    );
    if (status.is_execution_finished) {
      if (status.state !== 'QUERY_STATE_COMPLETED') throw new Error(JSON.stringify(status));
      return id;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Measured {
  ms: number;
  bytes: number;
  /** CPU milliseconds: the service's main thread and other threads, or DuckDB's process. */
  cpu: { main: number; others: number };
  /** Each page's milliseconds, in order (JSON pages). */
  pages?: number[];
  /** The service's peak RSS during the fetch, and its RSS before, in bytes. */
  rss?: { before: number; peak: number };
}

/** Measures `work` with the service's CPU by thread and its peak RSS. */
async function onService(pid: number, work: () => Promise<Omit<Measured, 'cpu' | 'rss'>>): Promise<Measured> {
  resetPeakRss(pid);
  const before = currentRss(pid);
  const cpu = threadCpuSeconds(pid);
  const measured = await work();
  const after = threadCpuSeconds(pid);
  return {
    ...measured,
    cpu: { main: (after.main - cpu.main) * 1000, others: (after.others - cpu.others) * 1000 },
    rss: { before, peak: peakRss(pid) },
  };
}

/** Every JSON page through next_uri, from the first. */
async function jsonPages(base: string, id: string): Promise<Omit<Measured, 'cpu' | 'rss'>> {
  const started = performance.now();
  let url: string | undefined = `${base}/api/v1/execution/${id}/results?limit=${PAGE_ROWS}`;
  const pages: number[] = [];
  let bytes = 0;
  let rows = 0;
  while (url) {
    const page = await get(url);
    if (page.status !== 200) throw new Error(`${url}: ${page.status} ${page.head.slice(0, 300)}`);
    pages.push(page.ms);
    bytes += page.bytes;
    const count = /"row_count":(\d+)/.exec(page.tail) ?? /"row_count":(\d+)/.exec(page.head);
    if (!count) throw new Error(`${url}: no row_count in the page's edges`);
    rows += Number(count[1]);
    url = /"next_uri":"([^"]+)"/.exec(page.head)?.[1];
  }
  if (rows !== ROWS) throw new Error(`the pages held ${rows} rows, not ${ROWS}`);
  return { ms: performance.now() - started, bytes, pages };
}

/** The whole result as one CSV. */
async function oneCsv(base: string, id: string): Promise<Omit<Measured, 'cpu' | 'rss'>> {
  const url = `${base}/api/v1/execution/${id}/results/csv?ignore_max_datapoints_per_request=true`;
  const answer = await get(url);
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${answer.head.slice(0, 300)}`);
  if (answer.headers['x-dune-next-uri'] !== undefined) throw new Error('the whole CSV has a next page');
  return { ms: answer.ms, bytes: answer.bytes };
}

/** Counts the CSV's lines once, untimed: the timed runs keep only its edges. */
async function csvLines(base: string, id: string): Promise<number> {
  const response = await fetch(
    `${base}/api/v1/execution/${id}/results/csv?ignore_max_datapoints_per_request=true`,
    { headers: { 'x-service-api-key': KEY } },
  );
  let lines = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

/** DuckDB's own COPY of the same rows to a file, CPU of this whole process. */
async function copyTo(
  connection: Awaited<ReturnType<DuckDBInstance['connect']>>,
  format: 'json' | 'csv',
  dir: string,
) {
  const file = path.join(dir, `copy.${format}`);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await connection.run(
    `COPY result TO '${file}' (FORMAT ${format}${format === 'csv' ? ', HEADER true' : ''})`,
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const bytes = fs.statSync(file).size;
  fs.rmSync(file);
  return { ms, bytes, cpu: { main: (used.user + used.system) / 1000, others: 0 } };
}

const MB = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const list = (values: number[], digits = 0) => values.map((v) => v.toFixed(digits)).join(', ');

export async function runWholeResultsBenchmark(
  log: (line: string) => void = () => undefined,
): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-whole-results-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const database = await Database.open({ path: path.join(dataDir, 'warehouse.duckdb') });
  await migrate(database);
  await database.close();

  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const service = await startServiceProcess(
    dataDir,
    {
      API_KEYS: `${KEY}=bench:premium`,
      DEMO_DATA: 'off',
      MAX_DATAPOINTS_PER_REQUEST: String(MAX_DATAPOINTS),
    },
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [],
  );
  const pid = service.child.process.pid as number;
  const instance = await DuckDBInstance.create(path.join(dir, 'direct.duckdb'));
  const direct = await instance.connect();
  const rows: BenchRow[] = [];
  try {
    await direct.run(`CREATE TABLE result AS ${RESULT_SQL}`);
    await direct.run('CHECKPOINT');
    const runs = {
      json: [] as Measured[],
      csv: [] as Measured[],
      duckJson: [] as Measured[],
      duckCsv: [] as Measured[],
    };
    log(
      `load average at start ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      // A new execution each round: the service's answer caches start cold, as for a reader of a new result.
      const id = await execute(service.url);
      if (round === 0) {
        const lines = await csvLines(service.url, id);
        if (lines !== ROWS + 1) throw new Error(`the CSV held ${lines} lines, not ${ROWS + 1}`);
      }
      const json = await onService(pid, () => jsonPages(service.url, id));
      const duckJson = await copyTo(direct, 'json', dir);
      const csv = await onService(pid, () => oneCsv(service.url, id));
      const duckCsv = await copyTo(direct, 'csv', dir);
      runs.json.push(json);
      runs.duckJson.push(duckJson);
      runs.csv.push(csv);
      runs.duckCsv.push(duckCsv);
      const pages = json.pages ?? [];
      log(
        `round ${round + 1}: JSON ${pages.length} pages ${json.ms.toFixed(0)} ms (${MB(json.bytes)}; CPU main ${json.cpu.main.toFixed(0)} + others ${json.cpu.others.toFixed(0)}) ` +
          `vs COPY ${duckJson.ms.toFixed(0)} ms (${MB(duckJson.bytes)}; CPU ${duckJson.cpu.main.toFixed(0)}); ` +
          `pages first ${pages[0]?.toFixed(0)}, middle ${pages[Math.floor(pages.length / 2)]?.toFixed(0)}, last ${pages.at(-1)?.toFixed(0)} ms; ` +
          `CSV ${csv.ms.toFixed(0)} ms (${MB(csv.bytes)}; CPU main ${csv.cpu.main.toFixed(0)} + others ${csv.cpu.others.toFixed(0)}) ` +
          `vs COPY ${duckCsv.ms.toFixed(0)} ms (${MB(duckCsv.bytes)}; CPU ${duckCsv.cpu.main.toFixed(0)}); ` +
          `RSS peak +${MB((json.rss?.peak ?? 0) - (json.rss?.before ?? 0))} (JSON), +${MB((csv.rss?.peak ?? 0) - (csv.rss?.before ?? 0))} (CSV)`,
      );
    }
    const load = os.loadavg()[0]?.toFixed(2);
    const cpuNote = (ours: Measured[], duck: Measured[]) =>
      `CPU ${median(ours.map((r) => r.cpu.main)).toFixed(0)} ms main thread + ${median(ours.map((r) => r.cpu.others)).toFixed(0)} ms other threads vs ${median(duck.map((r) => r.cpu.main)).toFixed(0)} ms`;
    const jsonMs = median(runs.json.map((r) => r.ms));
    const duckJsonMs = median(runs.duckJson.map((r) => r.ms));
    const pageCount = runs.json[0]?.pages?.length ?? 0;
    const pageAt = (index: number) => median(runs.json.map((r) => r.pages?.[index] ?? 0));
    rows.push({
      benchmark: 'whole results',
      case: `JSON pages via next_uri, ${pageCount} of ${PAGE_ROWS.toLocaleString('en-US')} rows (${ROWS.toLocaleString('en-US')} rows × ${COLUMNS} columns)`,
      value: jsonMs,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY TO json', value: duckJsonMs },
      ratio: jsonMs / duckJsonMs,
      target: '≤ 2×',
      note:
        `runs ${list(runs.json.map((r) => r.ms))} vs ${list(runs.duckJson.map((r) => r.ms))}; ${MB(runs.json[0]?.bytes ?? 0)} vs ${MB(runs.duckJson[0]?.bytes ?? 0)}; ` +
        `pages first ${pageAt(0).toFixed(0)}, middle ${pageAt(Math.floor(pageCount / 2)).toFixed(0)}, last ${pageAt(pageCount - 1).toFixed(0)} ms; ` +
        `${cpuNote(runs.json, runs.duckJson)}; load ${load}`,
    });
    const csvMs = median(runs.csv.map((r) => r.ms));
    const duckCsvMs = median(runs.duckCsv.map((r) => r.ms));
    rows.push({
      benchmark: 'whole results',
      case: `one CSV (ignore_max_datapoints_per_request), ${ROWS.toLocaleString('en-US')} rows × ${COLUMNS} columns`,
      value: csvMs,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY TO csv', value: duckCsvMs },
      ratio: csvMs / duckCsvMs,
      target: '≤ 1.5×',
      note: `runs ${list(runs.csv.map((r) => r.ms))} vs ${list(runs.duckCsv.map((r) => r.ms))}; ${MB(runs.csv[0]?.bytes ?? 0)} vs ${MB(runs.duckCsv[0]?.bytes ?? 0)}; ${cpuNote(runs.csv, runs.duckCsv)}; load ${load}`,
    });
    const growth = (r: Measured) => (r.rss ? r.rss.peak - r.rss.before : 0);
    const all = [...runs.json, ...runs.csv];
    rows.push({
      benchmark: 'whole results',
      case: 'server peak RSS while serving a whole result, above its RSS before',
      value: Math.max(...all.map(growth)) / 1e6,
      unit: 'MB',
      note: `JSON pages ${list(runs.json.map((r) => growth(r) / 1e6))} MB, CSV ${list(runs.csv.map((r) => growth(r) / 1e6))} MB; RSS before ${MB(runs.json[0]?.rss?.before ?? 0)}; service CPU in all ${(cpuSeconds(pid)).toFixed(1)} s`,
    });
  } finally {
    agent.destroy();
    direct.closeSync();
    instance.closeSync();
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  const rows = await runWholeResultsBenchmark((line) => process.stderr.write(`whole-results: ${line}\n`));
  console.log(renderTable(rows));
}
