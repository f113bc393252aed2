import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
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
const COLUMNS = 6;
/** The largest page the datapoint cap allows for six columns. */
const PAGE_ROWS = Math.floor(MAX_DATAPOINTS / COLUMNS);
/** A page size no request of the page walk uses, so that no such page has been written ahead. */
const COLD_PAGE_ROWS = PAGE_ROWS - 1;

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
async function jsonPages(client: Client, base: string, id: string): Promise<Omit<Measured, 'cpu' | 'rss'>> {
  const walked = await client.run({
    kind: 'walk',
    url: `${base}/api/v1/execution/${id}/results?limit=${PAGE_ROWS}`,
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
    /** Single pages not written ahead (a limit no page before asked for), at three offsets. */
    const coldOffsets = [0, Math.floor(ROWS / 2), ROWS - COLD_PAGE_ROWS];
    const cold = coldOffsets.map(() => ({ ours: [] as number[], duck: [] as number[] }));
    const floors = { json: [] as number[], csv: [] as number[] };
    let floor: { json: { child: Child; url: string }; csv: { child: Child; url: string } } | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      // A new execution each round: the service's answer caches start cold, as for a reader of a new result.
      const id = await execute(service.url);
      if (round === 0) {
        const lines = await csvLines(service.url, id);
        if (lines !== ROWS + 1) throw new Error(`the CSV held ${lines} lines, not ${ROWS + 1}`);
      }
      // Odd rounds measure DuckDB first: neither side always runs on a machine just warmed by the other.
      const duckFirst = round % 2 === 1;
      const duckJsonBefore = duckFirst ? await copyTo(direct, 'json', dir) : undefined;
      const json = await onService(pid, () => jsonPages(client, service.url, id));
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
      benchmark: 'whole results',
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
      benchmark: 'whole results',
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
      benchmark: 'whole results',
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
      benchmark: 'whole results',
      case: 'server peak RSS while serving a whole result, above its RSS before',
      value: Math.max(...all.map(growth)) / 1e6,
      unit: 'MB',
      note: `JSON pages ${list(runs.json.map((r) => growth(r) / 1e6))} MB, CSV ${list(runs.csv.map((r) => growth(r) / 1e6))} MB; RSS before ${MB(runs.json[0]?.rss?.before ?? 0)}; service CPU in all ${cpuSeconds(pid).toFixed(1)} s`,
    });
    for (const server of floor ? [floor.json, floor.csv] : []) {
      server.child.process.kill('SIGTERM');
      await server.child.exited;
    }
  } finally {
    client.close();
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
