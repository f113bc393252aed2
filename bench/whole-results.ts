import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { csvRowExpression, jsonRowExpression } from '../src/executions/row-rendering.js';
import { Database } from '../src/storage/database.js';
import { migrate } from '../src/storage/service-schema.js';
import { api, BENCH_KEY as KEY } from './bench-api.js';
import { type BenchRow, median } from './bench-table.js';
import {
  type Child,
  cpuSeconds,
  currentRss,
  peakRss,
  ROOT,
  resetPeakRss,
  runTs,
  startServiceProcess,
  threadCpuSeconds,
  waitForLine,
} from './processes.js';
import type { WholeResultsAnswer, WholeResultsCommand } from './whole-results-client.js';

/**
 * Whole results (issue 17, part 2): a 1,000,000-row, 6-column users' result made through
 * the API (`POST /v1/sql/execute`), read to the end over loopback
 *  (a) as JSON pages through `next_uri`, each as large as the datapoint cap allows, and
 *  (b) as one CSV (`ignore_max_datapoints_per_request=true`),
 * against DuckDB writing the same rows with `COPY … TO` (JSON, CSV) in this process, in the
 * same run, alternating round by round. Targets: CSV ≤ 1.5×, JSON pages ≤ 2×, a page's time
 * independent of its offset (first, middle and last pages printed), the server's RSS bounded.
 *
 * The client (bench/whole-results-client.ts, a lean process of its own) keeps only the first
 * and last few kilobytes of each answer, to read `next_uri` and `row_count` (the CSV's
 * `X-Dune-Next-Uri`): its own parsing is not what is measured. Beside each wall time, CPU
 * time: the service's main thread (JavaScript) and its other threads (DuckDB), from /proc,
 * against this process's for DuckDB's COPY, and the client's.
 *
 * For scale, the floor of the transfer itself: bare node:http answering the same number of
 * bytes from memory (bench/servers/fixed-response.ts), to the same client, in the same run.
 *
 * `BENCH_CPU_PROF_DIR=dir` starts the service with `--cpu-prof` into that folder (read the
 * profile with `npx tsx bench/cpu-profile.ts dir/*.cpuprofile`).
 */

const ROWS = Number(process.env.BENCH_WHOLE_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_WHOLE_ROUNDS ?? 3);
const MAX_DATAPOINTS = 250_000;

/** A result to read whole: its SQL, columns, and the page sizes the datapoint cap gives it. */
interface Shape {
  name: string;
  sql: string;
  columns: number;
  /** The largest page the datapoint cap allows. */
  pageRows: number;
  /** A page size no request of the page walk uses, so that no such page has been written ahead. */
  coldPageRows: number;
}

function shape(name: string, columns: number, sql: string): Shape {
  const pageRows = Math.floor(MAX_DATAPOINTS / columns);
  return { name, sql, columns, pageRows, coldPageRows: pageRows - 1 };
}

/**
 * Six columns of the kinds users' results have: a bigint, a double, a varchar, a timestamp,
 * a boolean and a 0x address. Deterministic; the sandbox allows every function here.
 */
const CHAIN = shape(
  'chain',
  6,
  `SELECT i AS block_number,
  CAST((i * 7919) % 1000003 AS DOUBLE) / 1000 AS amount,
  'token_' || (i % 13) AS token,
  TIMESTAMP '2024-01-01' + to_seconds(i * 13) AS block_time,
  i % 3 = 0 AS staked,
  '0x' || lpad(lower(to_hex((i * 2654435761) % 1099511627776)), 40, '0') AS avs_address
  FROM range(${ROWS}) r(i)`,
);

/**
 * Every type users' results carry (issue 27, part 3): timestamps with milliseconds, timestamps
 * with time zone, doubles as tools print them (`0.30000000000000004`, `1e-7`, `123456.789`),
 * 2- and 18-decimal decimals, big integers past 64 bits (HUGEINT), dates, text with quotes,
 * commas and non-ASCII letters, and NULLs in a seventh of the rows of most columns.
 */
const TYPES = shape(
  'types',
  10,
  `SELECT i AS id,
  TIMESTAMP '2024-01-01 00:00:00' + to_milliseconds(i * 1237) AS at_ms,
  CASE WHEN i % 7 = 1 THEN NULL ELSE TIMESTAMPTZ '2024-03-10 01:59:58+00' + to_milliseconds(i * 991) END AS at_tz,
  CASE WHEN i % 7 = 2 THEN NULL ELSE (i % 1000) * 0.1 + (i % 3) * 0.2 END AS ratio,
  CASE WHEN i % 7 = 3 THEN NULL ELSE CAST(i % 100003 AS DOUBLE) / 7 * power(10, (i % 11) - 5) END AS measure,
  CAST((i * 7919) % 10000000 AS DECIMAL(18, 2)) / 100 AS price,
  CASE WHEN i % 7 = 4 THEN NULL ELSE CAST(i AS DECIMAL(38, 18)) + 0.000000000123456789 END AS amount_eth,
  CAST(i AS HUGEINT) * 1000000000000000000 + (i % 997) AS amount_wei,
  DATE '2022-01-01' + CAST(i % 1096 AS INTEGER) AS day,
  CASE WHEN i % 7 = 5 THEN NULL ELSE 'note ' || i || CASE i % 4 WHEN 0 THEN ', "quoted"' WHEN 1 THEN ' café' WHEN 2 THEN ' a\tb' ELSE '' END END AS note
  FROM range(${ROWS}) r(i)`,
);

const SHAPES = [CHAIN, TYPES].filter(
  (s) => !process.env.BENCH_WHOLE_SHAPES || process.env.BENCH_WHOLE_SHAPES.split(',').includes(s.name),
);

/** The HTTP client, in a process of its own (see whole-results-client.ts). */
class Client {
  private readonly child: ChildProcess;
  private waiting: ((answer: WholeResultsAnswer) => void) | undefined;

  constructor() {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'bench/whole-results-client.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (answer: WholeResultsAnswer) => this.waiting?.(answer));
  }

  async run(command: WholeResultsCommand): Promise<WholeResultsAnswer> {
    const answer = await new Promise<WholeResultsAnswer>((resolve) => {
      this.waiting = resolve;
      this.child.send(command);
    });
    if (answer.error) throw new Error(answer.error);
    return answer;
  }

  close(): void {
    this.child.disconnect();
  }
}

/** Runs the result's SQL through the API and waits until its execution has completed. */
async function execute(base: string, sql: string): Promise<string> {
  const { execution_id: id } = await api<{ execution_id: string }>(`${base}/api/v1/sql/execute`, {
    method: 'POST',
    body: JSON.stringify({ sql, performance: 'medium' }),
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
  /** CPU milliseconds of this process (the client) meanwhile: it shares the cores. */
  clientCpu?: number;
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
async function jsonPages(
  client: Client,
  base: string,
  id: string,
  pageRows: number,
): Promise<Omit<Measured, 'cpu' | 'rss'>> {
  const walked = await client.run({
    kind: 'walk',
    url: `${base}/api/v1/execution/${id}/results?limit=${pageRows}`,
    key: KEY,
  });
  if (walked.rows !== ROWS) throw new Error(`the pages held ${walked.rows} rows, not ${ROWS}`);
  return { ms: walked.ms, bytes: walked.bytes, pages: walked.pages ?? [], clientCpu: walked.cpuMs };
}

/** The whole result as one CSV. */
async function oneCsv(client: Client, base: string, id: string): Promise<Omit<Measured, 'cpu' | 'rss'>> {
  const url = `${base}/api/v1/execution/${id}/results/csv?ignore_max_datapoints_per_request=true`;
  const { last: answer, cpuMs } = await client.run({ kind: 'get', url, key: KEY });
  if (answer?.status !== 200) throw new Error(`${url}: ${answer?.status} ${answer?.head.slice(0, 300)}`);
  if (answer.headers['x-dune-next-uri'] !== undefined) throw new Error('the whole CSV has a next page');
  return { ms: answer.ms, bytes: answer.bytes, clientCpu: cpuMs };
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

/** DuckDB's own COPY of the same rows (or of a range of them) to a file, CPU of this whole process. */
async function copyTo(
  connection: Awaited<ReturnType<DuckDBInstance['connect']>>,
  format: 'json' | 'csv',
  dir: string,
  range?: [number, number],
) {
  const file = path.join(dir, `copy.${format}`);
  const source = range
    ? `(SELECT * FROM result WHERE rowid >= ${range[0]} AND rowid < ${range[1]})`
    : 'result';
  const cpu = process.cpuUsage();
  const started = performance.now();
  await connection.run(
    `COPY ${source} TO '${file}' (FORMAT ${format}${format === 'csv' ? ', HEADER true' : ''})`,
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const bytes = fs.statSync(file).size;
  fs.rmSync(file);
  return { ms, bytes, cpu: { main: (used.user + used.system) / 1000, others: 0 } };
}

/** A bare node:http server answering `bytes` bytes from memory to every request. */
async function floorServer(dir: string, name: string, bytes: number): Promise<{ child: Child; url: string }> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.alloc(bytes, 'x'));
  const child = runTs('bench/servers/fixed-response.ts', ['http', file, 'application/octet-stream']);
  const port = await waitForLine(child, /listening on (\d+)/);
  return { child, url: `http://127.0.0.1:${port}/` };
}

/** `count` answers of the floor server, one after the other, as the pages are read. */
async function floorFetch(client: Client, url: string, count: number): Promise<number> {
  const { ms, last } = await client.run({ kind: 'get', url, times: count });
  if (last?.status !== 200) throw new Error(`floor server: ${last?.status}`);
  return ms;
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
  const client = new Client();
  const rows: BenchRow[] = [];
  try {
    for (const measured of SHAPES) {
      log(`${measured.name}: ${measured.columns} columns`);
      rows.push(...(await measureShape(measured, { service, pid, direct, client, dir, log })));
    }
    rows.push(...(await renderingCosts(direct, log)));
  } finally {
    client.close();
    direct.closeSync();
    instance.closeSync();
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

interface Setting {
  service: { url: string };
  pid: number;
  direct: DuckDBConnection;
  client: Client;
  dir: string;
  log: (line: string) => void;
}

/** One shape's rounds: JSON pages, one CSV and cold pages, each against DuckDB's COPY. */
async function measureShape(shape: Shape, setting: Setting): Promise<BenchRow[]> {
  const { service, pid, direct, client, dir, log } = setting;
  const { columns: COLUMNS, pageRows: PAGE_ROWS, coldPageRows: COLD_PAGE_ROWS } = shape;
  const rows: BenchRow[] = [];
  {
    await direct.run(`CREATE OR REPLACE TABLE result AS ${shape.sql}`);
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
    /** Single pages not written ahead (a limit no page before asked for), at three offsets. */
    const coldOffsets = [0, Math.floor(ROWS / 2), ROWS - COLD_PAGE_ROWS];
    const cold = coldOffsets.map(() => ({ ours: [] as number[], duck: [] as number[] }));
    const floors = { json: [] as number[], csv: [] as number[] };
    let floor: { json: { child: Child; url: string }; csv: { child: Child; url: string } } | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      // A new execution each round: the service's answer caches start cold, as for a reader of a new result.
      const id = await execute(service.url, shape.sql);
      if (round === 0) {
        const lines = await csvLines(service.url, id);
        if (lines !== ROWS + 1) throw new Error(`the CSV held ${lines} lines, not ${ROWS + 1}`);
      }
      // Odd rounds measure DuckDB first: neither side always runs on a machine just warmed by the other.
      const duckFirst = round % 2 === 1;
      const duckJsonBefore = duckFirst ? await copyTo(direct, 'json', dir) : undefined;
      const json = await onService(pid, () => jsonPages(client, service.url, id, PAGE_ROWS));
      const duckJson = duckJsonBefore ?? (await copyTo(direct, 'json', dir));
      const duckCsvBefore = duckFirst ? await copyTo(direct, 'csv', dir) : undefined;
      const csv = await onService(pid, () => oneCsv(client, service.url, id));
      const duckCsv = duckCsvBefore ?? (await copyTo(direct, 'csv', dir));
      runs.json.push(json);
      runs.duckJson.push(duckJson);
      runs.csv.push(csv);
      runs.duckCsv.push(duckCsv);
      floor ??= {
        json: await floorServer(dir, 'floor.json', Math.round(json.bytes / (json.pages?.length ?? 1))),
        csv: await floorServer(dir, 'floor.csv', csv.bytes),
      };
      floors.json.push(await floorFetch(client, floor.json.url, json.pages?.length ?? 1));
      floors.csv.push(await floorFetch(client, floor.csv.url, 1));
      for (const [i, offset] of coldOffsets.entries()) {
        const { last: page } = await client.run({
          kind: 'get',
          url: `${service.url}/api/v1/execution/${id}/results?limit=${COLD_PAGE_ROWS}&offset=${offset}`,
          key: KEY,
        });
        if (page?.status !== 200) throw new Error(`cold page: ${page?.status} ${page?.head.slice(0, 300)}`);
        cold[i]?.ours.push(page.ms);
        cold[i]?.duck.push((await copyTo(direct, 'json', dir, [offset, offset + COLD_PAGE_ROWS])).ms);
      }
      const pages = json.pages ?? [];
      log(
        `round ${round + 1}: JSON ${pages.length} pages ${json.ms.toFixed(0)} ms (${MB(json.bytes)}; CPU main ${json.cpu.main.toFixed(0)} + others ${json.cpu.others.toFixed(0)}) ` +
          `vs COPY ${duckJson.ms.toFixed(0)} ms (${MB(duckJson.bytes)}; CPU ${duckJson.cpu.main.toFixed(0)}): ${(json.ms / duckJson.ms).toFixed(2)}×; client CPU ${json.clientCpu?.toFixed(0)} ms; ` +
          `pages first ${pages[0]?.toFixed(0)}, middle ${pages[Math.floor(pages.length / 2)]?.toFixed(0)}, last ${pages.at(-1)?.toFixed(0)} ms; ` +
          `CSV ${csv.ms.toFixed(0)} ms (${MB(csv.bytes)}; CPU main ${csv.cpu.main.toFixed(0)} + others ${csv.cpu.others.toFixed(0)}) ` +
          `vs COPY ${duckCsv.ms.toFixed(0)} ms (${MB(duckCsv.bytes)}; CPU ${duckCsv.cpu.main.toFixed(0)}): ${(csv.ms / duckCsv.ms).toFixed(2)}×; ` +
          `RSS peak +${MB((json.rss?.peak ?? 0) - (json.rss?.before ?? 0))} (JSON), +${MB((csv.rss?.peak ?? 0) - (csv.rss?.before ?? 0))} (CSV); ` +
          `HTTP floor ${floors.json.at(-1)?.toFixed(0)} ms (JSON pages), ${floors.csv.at(-1)?.toFixed(0)} ms (CSV); ` +
          `load ${os.loadavg()[0]?.toFixed(2)}`,
      );
    }
    const load = os.loadavg()[0]?.toFixed(2);
    const cpuTotal = (r: Measured) => r.cpu.main + r.cpu.others;
    const summary = (ours: Measured[], duck: Measured[]) =>
      `runs ${list(ours.map((r) => r.ms))} vs ${list(duck.map((r) => r.ms))} (${ours.map((r, i) => `${(r.ms / (duck[i]?.ms ?? 1)).toFixed(2)}×`).join(', ')}); ` +
      `${MB(ours[0]?.bytes ?? 0)} vs ${MB(duck[0]?.bytes ?? 0)}; ` +
      `CPU ${median(ours.map((r) => r.cpu.main)).toFixed(0)} ms main thread + ${median(ours.map((r) => r.cpu.others)).toFixed(0)} ms other threads vs ${median(duck.map(cpuTotal)).toFixed(0)} ms ` +
      `(${(median(ours.map(cpuTotal)) / median(duck.map(cpuTotal))).toFixed(2)}×), the client ${median(ours.map((r) => r.clientCpu ?? 0)).toFixed(0)} ms`;
    const jsonMs = median(runs.json.map((r) => r.ms));
    const duckJsonMs = median(runs.duckJson.map((r) => r.ms));
    const pageCount = runs.json[0]?.pages?.length ?? 0;
    const pageAt = (index: number) => median(runs.json.map((r) => r.pages?.[index] ?? 0)).toFixed(0);
    rows.push({
      benchmark: `whole results (${shape.name})`,
      case: `JSON pages via next_uri, ${pageCount} of ${PAGE_ROWS.toLocaleString('en-US')} rows (${ROWS.toLocaleString('en-US')} rows × ${COLUMNS} columns)`,
      value: jsonMs,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY TO json', value: duckJsonMs },
      ratio: jsonMs / duckJsonMs,
      target: '≤ 2×',
      note:
        `${summary(runs.json, runs.duckJson)}; pages first ${pageAt(0)}, middle ${pageAt(Math.floor(pageCount / 2))}, ` +
        `last full ${pageAt(pageCount - 2)} ms, the final ${ROWS - (pageCount - 1) * PAGE_ROWS} rows ${pageAt(pageCount - 1)} ms; ` +
        `the same bytes from memory by bare node:http ${median(floors.json).toFixed(0)} ms; load ${load}`,
    });
    const csvMs = median(runs.csv.map((r) => r.ms));
    const duckCsvMs = median(runs.duckCsv.map((r) => r.ms));
    rows.push({
      benchmark: `whole results (${shape.name})`,
      case: `one CSV (ignore_max_datapoints_per_request), ${ROWS.toLocaleString('en-US')} rows × ${COLUMNS} columns`,
      value: csvMs,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY TO csv', value: duckCsvMs },
      ratio: csvMs / duckCsvMs,
      target: '≤ 1.5×',
      note: `${summary(runs.csv, runs.duckCsv)}; the same bytes from memory by bare node:http ${median(floors.csv).toFixed(0)} ms; load ${load}`,
    });
    const coldMs = cold.map((c) => median(c.ours));
    const coldDuck = cold.map((c) => median(c.duck));
    rows.push({
      benchmark: `whole results (${shape.name})`,
      case: `one page of ${COLD_PAGE_ROWS.toLocaleString('en-US')} rows not written ahead, at offset 0 / ${coldOffsets
        .slice(1)
        .map((o) => o.toLocaleString('en-US'))
        .join(' / ')}`,
      value: coldMs[0] ?? 0,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY of the rows to json', value: coldDuck[0] ?? 0 },
      ratio: (coldMs[0] ?? 0) / (coldDuck[0] ?? 1),
      target: 'independent of the offset',
      note: `service ${list(coldMs)} ms, DuckDB ${list(coldDuck, 1)} ms, by offset`,
    });
    const growth = (r: Measured) => (r.rss ? r.rss.peak - r.rss.before : 0);
    const all = [...runs.json, ...runs.csv];
    rows.push({
      benchmark: `whole results (${shape.name})`,
      case: 'server peak RSS while serving a whole result, above its RSS before',
      value: Math.max(...all.map(growth)) / 1e6,
      unit: 'MB',
      note: `JSON pages ${list(runs.json.map((r) => growth(r) / 1e6))} MB, CSV ${list(runs.csv.map((r) => growth(r) / 1e6))} MB; RSS before ${MB(runs.json[0]?.rss?.before ?? 0)}; service CPU in all ${cpuSeconds(pid).toFixed(1)} s`,
    });
    for (const server of floor ? [floor.json, floor.csv] : []) {
      server.child.process.kill('SIGTERM');
      await server.child.exited;
    }
  }
  return rows;
}

/** The column types whose rendering costs are measured, each as a 1,000,000-row column of TYPES. */
const RENDERED_TYPES: { type: string; value: string }[] = [
  { type: 'bigint', value: 'i * 7919' },
  { type: 'double', value: 'CAST(i % 100003 AS DOUBLE) / 7 * power(10, (i % 11) - 5)' },
  { type: 'decimal(18,2)', value: 'CAST((i * 7919) % 10000000 AS DECIMAL(18, 2)) / 100' },
  { type: 'decimal(38,18)', value: 'CAST(i AS DECIMAL(38, 18)) + 0.000000000123456789' },
  { type: 'hugeint', value: 'CAST(i AS HUGEINT) * 1000000000000000000 + (i % 997)' },
  { type: 'timestamp', value: "TIMESTAMP '2024-01-01' + to_milliseconds(i * 1237)" },
  {
    type: 'timestamp with time zone',
    value: "TIMESTAMPTZ '2024-03-10 01:59:58+00' + to_milliseconds(i * 991)",
  },
  { type: 'date', value: "DATE '2022-01-01' + CAST(i % 1096 AS INTEGER)" },
  { type: 'boolean', value: 'i % 3 = 0' },
  { type: 'varchar', value: `'note ' || i || CASE i % 2 WHEN 0 THEN ', "quoted"' ELSE ' café' END` },
  { type: 'varchar with NULLs', value: `CASE WHEN i % 7 = 5 THEN NULL ELSE 'note ' || i END` },
];

/**
 * What rendering costs per type (issue 27, part 3): DuckDB writing one column of 1,000,000
 * values of the type as the service renders its JSON rows and its CSV lines
 * (src/executions/row-rendering.ts), against DuckDB's own `COPY … TO` json and csv of the same
 * column, in this process, median of 3 each.
 */
async function renderingCosts(direct: DuckDBConnection, log: (line: string) => void): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rendering-'));
  const out = path.join(dir, 'out');
  const rows: BenchRow[] = [];
  const timed = async (sql: string) => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      await direct.run(sql);
      times.push(performance.now() - started);
    }
    return median(times);
  };
  try {
    for (const { type, value } of RENDERED_TYPES) {
      await direct.run(`CREATE OR REPLACE TABLE rendered AS SELECT ${value} AS v FROM range(1000000) r(i)`);
      const [described] = (await direct.runAndReadAll('DESCRIBE rendered')).getRowObjects();
      const columns = [{ name: 'v', type: String(described?.column_type).toLowerCase() }];
      const service = {
        json: await timed(
          `COPY (SELECT ${jsonRowExpression(columns)} FROM rendered) TO '${out}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')`,
        ),
        csv: await timed(
          `COPY (SELECT ${csvRowExpression(columns)} FROM rendered) TO '${out}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')`,
        ),
      };
      const duck = {
        json: await timed(`COPY rendered TO '${out}' (FORMAT json)`),
        csv: await timed(`COPY rendered TO '${out}' (FORMAT csv)`),
      };
      log(
        `rendering ${type}: JSON ${service.json.toFixed(0)} vs ${duck.json.toFixed(0)} ms, CSV ${service.csv.toFixed(0)} vs ${duck.csv.toFixed(0)} ms`,
      );
      rows.push({
        benchmark: 'whole results (rendering)',
        case: `${type}: 1,000,000 values as JSON rows / CSV lines`,
        value: service.json,
        unit: 'ms',
        baseline: { name: 'COPY TO json', value: duck.json },
        ratio: service.json / duck.json,
        note: `CSV ${service.csv.toFixed(0)} vs COPY TO csv ${duck.csv.toFixed(0)} ms (${(service.csv / duck.csv).toFixed(2)}×)`,
      });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  const rows = await runWholeResultsBenchmark((line) => process.stderr.write(`whole-results: ${line}\n`));
  console.log(renderTable(rows));
}
