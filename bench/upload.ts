import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type BenchRow, median } from './bench-table.js';
import { writeBenchmarkCsv } from './benchmark-csv.js';
import { writeExportCsv } from './export-csv.js';
import { writeMixedCsv } from './mixed-csv.js';
import { measurePostgresCopy } from './postgres-copy.js';
import { type Child, peakRss, runTs, startServiceProcess, waitForLine } from './processes.js';
import { writeWideCsv } from './wide-csv.js';

/**
 * The CSV upload over HTTP (issue 13), each figure against baselines measured in the same
 * run, runs interleaved:
 * - DuckDB's own `read_csv` of the same file into a fresh database, in its own process;
 * - the receive floor: bare node:http in its own process reading the same body and dropping
 *   it (on 2 cores the local client's sending costs CPU too, so this is what any server pays);
 * - target: upload / (floor + direct) at most 1.2 on a ~195 MB CSV of mixed, real-looking
 *   values (bench/mixed-csv.ts), and the server's peak RSS at most 250 MB above DuckDB's own
 *   for the direct load; on the six-decimal data set (bench/benchmark-csv.ts) no slower than
 *   before (BENCHMARKS.md), beside PostgreSQL's COPY of the same CSV where it is installed;
 * - wide uploads: 10, 1,000 and 10,000 columns of the same bytes, time and peak RSS, each
 *   beside DuckDB's direct load of the same file.
 * Where the time went is in each upload's `upload stored` log line (receiveMs, loadMs).
 */

const KEY = 'bench-key-00000001';
const TARGET_BODY_BYTES = 199_000_000;
const WIDE_BYTES = 50_000_000;

/** Where the last complete UTF-8 sequence of `bytes` ends. */
function completeUtf8(bytes: Buffer): number {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && ((bytes[i] as number) & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  const lead = bytes[i];
  if (lead === undefined || lead < 0xc0) return bytes.length;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return length === continuation + 1 ? bytes.length : i;
}

/** The JSON upload body, written around the CSV without holding it as one string. */
export function writeBody(csvFile: string, bodyFile: string, tableName = 'bench'): void {
  const out = fs.openSync(bodyFile, 'w');
  fs.writeSync(
    out,
    `{"table_name":${JSON.stringify(tableName)},"description":"upload benchmark","is_private":false,"data":"`,
  );
  const input = fs.openSync(csvFile, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let carry = Buffer.alloc(0);
  for (;;) {
    const read = fs.readSync(input, buffer, 0, buffer.length, null);
    if (read === 0) break;
    const bytes = Buffer.concat([carry, buffer.subarray(0, read)]);
    const end = completeUtf8(bytes);
    fs.writeSync(out, JSON.stringify(bytes.toString('utf8', 0, end)).slice(1, -1));
    carry = Buffer.from(bytes.subarray(end));
  }
  fs.writeSync(out, '"}');
  fs.closeSync(input);
  fs.closeSync(out);
}

/** POSTs a file as the upload's body: the JSON form, or (`contentType` given) the file itself. */
function postFile(
  url: string,
  file: string,
  contentType = 'application/json',
  query = '',
): Promise<{ status: number; ms: number; body: string }> {
  const size = fs.statSync(file).size;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/table/upload/csv${query}`,
      {
        method: 'POST',
        headers: { 'content-type': contentType, 'content-length': size, 'x-service-api-key': KEY },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
      },
    );
    req.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
  });
}

async function directLoad(csvFile: string, dir: string): Promise<{ ms: number; rss: number }> {
  const child = runTs('bench/servers/duckdb-direct-load.ts', [
    csvFile,
    path.join(dir, `direct-${Date.now()}.duckdb`),
  ]);
  const line = await waitForLine(child, /(\{"ms".*\})/, 900_000);
  await child.exited;
  return JSON.parse(line) as { ms: number; rss: number };
}

async function startFloor(): Promise<{ child: Child; url: string }> {
  const child = runTs('bench/servers/receive-floor.ts');
  const port = await waitForLine(child, /listening on (\d+)/);
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The receive and load times of each upload, from the server's `upload stored` lines. */
function uploadTimings(output: string): string {
  const lines = output.split('\n').filter((line) => line.includes('"upload stored"'));
  return lines
    .map((line) => {
      const entry = JSON.parse(line) as { receiveMs: number; loadMs: number };
      return `${(entry.receiveMs / 1000).toFixed(2)}+${(entry.loadMs / 1000).toFixed(2)}`;
    })
    .join(', ');
}

interface DataSetRuns {
  uploads: number[];
  /** The same CSV sent as the body itself (text/csv). */
  rawUploads: number[];
  directs: { ms: number; rss: number }[];
  floors: number[];
  serverPeak: number;
  timings: string;
}

/** Direct load, receive floor and upload of one data set, interleaved, `runs` times each. */
async function measureDataSet(csv: string, body: string, dir: string, runs: number): Promise<DataSetRuns> {
  const floor = await startFloor();
  const service = await startServiceProcess(path.join(dir, `data-${path.basename(csv)}`), {
    API_KEYS: `${KEY}=bench:premium`,
    LOG_LEVEL: 'info',
  });
  const runsOf: DataSetRuns = {
    uploads: [],
    rawUploads: [],
    directs: [],
    floors: [],
    serverPeak: 0,
    timings: '',
  };
  try {
    for (let i = 0; i < runs; i++) {
      runsOf.directs.push(await directLoad(csv, dir));
      const received = await postFile(floor.url, body);
      if (received.status !== 200) throw new Error(`receive floor answered ${received.status}`);
      runsOf.floors.push(received.ms);
      // The JSON form and the CSV itself, each first in every other round.
      const forms = [
        async () => {
          const uploaded = await postFile(service.url, body);
          if (uploaded.status !== 200) throw new Error(`upload failed: ${uploaded.status} ${uploaded.body}`);
          runsOf.uploads.push(uploaded.ms);
        },
        async () => {
          const raw = await postFile(service.url, csv, 'text/csv', '?table_name=bench');
          if (raw.status !== 200) throw new Error(`raw CSV upload failed: ${raw.status} ${raw.body}`);
          runsOf.rawUploads.push(raw.ms);
        },
      ];
      for (const form of i % 2 === 0 ? forms : forms.reverse()) await form();
    }
  } finally {
    runsOf.serverPeak = peakRss(service.child.process.pid as number);
    runsOf.timings = uploadTimings(service.child.output());
    await service.stop();
    floor.child.process.kill('SIGTERM');
    await floor.child.exited;
  }
  return runsOf;
}

const seconds = (values: readonly number[]) => values.map((ms) => (ms / 1000).toFixed(2)).join(', ');

function dataSetRows(
  name: string,
  rows: number,
  bodyBytes: number,
  measured: DataSetRuns,
  target: string,
): BenchRow[] {
  const upload = median(measured.uploads);
  const direct = median(measured.directs.map((d) => d.ms));
  const floor = median(measured.floors);
  const directPeak = Math.max(...measured.directs.map((d) => d.rss));
  return [
    {
      benchmark: 'ingest',
      case: `${name}: HTTP upload, ${(bodyBytes / 1e6).toFixed(0)} MB JSON body (${rows} rows)`,
      value: upload / 1000,
      unit: 's',
      baseline: { name: 'receive floor + DuckDB read_csv', value: (floor + direct) / 1000 },
      ratio: upload / (floor + direct),
      target,
      note: `upload ${seconds(measured.uploads)} (receive+rest: ${measured.timings}); direct ${seconds(measured.directs.map((d) => d.ms))}; floor ${seconds(measured.floors)}; upload/direct ${(upload / direct).toFixed(2)}×`,
    },
    {
      benchmark: 'ingest',
      case: `${name}: the same CSV as a text/csv body`,
      value: median(measured.rawUploads) / 1000,
      unit: 's',
      baseline: { name: 'JSON-wrapped body', value: upload / 1000 },
      ratio: median(measured.rawUploads) / upload,
      target: '≤ 1×',
      note: `raw ${seconds(measured.rawUploads)}; JSON ${seconds(measured.uploads)}; raw/(floor + direct) ${(median(measured.rawUploads) / (floor + direct)).toFixed(2)}×`,
    },
    {
      benchmark: 'ingest',
      case: `${name}: server peak RSS during uploads`,
      value: measured.serverPeak / 1e6,
      unit: 'MB',
      baseline: { name: 'DuckDB direct load peak', value: directPeak / 1e6 },
      target: '≤ +250 MB',
      note: `difference ${((measured.serverPeak - directPeak) / 1e6).toFixed(0)} MB`,
    },
  ];
}

/** One upload of a `columns`-wide CSV of WIDE_BYTES, in a fresh server, beside DuckDB's direct load. */
async function wideRow(columns: number, dir: string): Promise<BenchRow> {
  const csv = path.join(dir, `wide-${columns}.csv`);
  const body = path.join(dir, `wide-${columns}.json`);
  const rows = writeWideCsv(csv, columns, WIDE_BYTES);
  writeBody(csv, body);
  const direct = await directLoad(csv, dir);
  const service = await startServiceProcess(path.join(dir, `data-wide-${columns}`), {
    API_KEYS: `${KEY}=bench:premium`,
    LOG_LEVEL: 'info',
  });
  let upload: { status: number; ms: number; body: string };
  let peak = 0;
  let timings = '';
  try {
    upload = await postFile(service.url, body);
    if (upload.status !== 200) throw new Error(`wide upload failed: ${upload.status} ${upload.body}`);
  } finally {
    peak = peakRss(service.child.process.pid as number);
    timings = uploadTimings(service.child.output());
    await service.stop();
    fs.rmSync(csv, { force: true });
    fs.rmSync(body, { force: true });
  }
  return {
    benchmark: 'ingest, width',
    case: `${columns} columns × ${rows} rows, ${(WIDE_BYTES / 1e6).toFixed(0)} MB`,
    value: upload.ms / 1000,
    unit: 's',
    baseline: { name: 'DuckDB read_csv direct', value: direct.ms / 1000 },
    ratio: upload.ms / direct.ms,
    note: `server peak RSS ${(peak / 1e6).toFixed(0)} MB, DuckDB direct ${(direct.rss / 1e6).toFixed(0)} MB; receive+rest ${timings}`,
  };
}

/** Which parts run: all by default; `npx tsx bench/upload.ts mixed wide` for some (mixed, export, six, wide). */
export async function runUploadBenchmark(
  runs = 3,
  parts = ['mixed', 'export', 'six', 'wide'],
): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-'));
  const log = (line: string) => process.stderr.write(`upload: ${line}\n`);
  try {
    const results: BenchRow[] = [];
    // Aim the JSON bodies just under the limit: escaping adds about one byte per line.
    const sets = [
      { part: 'mixed', name: 'mixed values', write: writeMixedCsv, target: '≤ 1.2×', postgres: false },
      {
        part: 'export',
        name: 'a database export (2-decimal money, comments of 20–120 characters)',
        write: writeExportCsv,
        target: '≤ 1.2×',
        postgres: false,
      },
      {
        part: 'six',
        name: 'six-decimal amounts',
        write: writeBenchmarkCsv,
        target: 'no slower than before',
        postgres: true,
      },
    ].filter((set) => parts.includes(set.part));
    for (const set of sets) {
      const csv = path.join(dir, 'data.csv');
      const body = path.join(dir, 'body.json');
      const rows = set.write(csv, TARGET_BODY_BYTES - 4_000_000);
      writeBody(csv, body);
      const bodyBytes = fs.statSync(body).size;
      log(
        `${set.name}: ${rows} rows, CSV ${(fs.statSync(csv).size / 1e6).toFixed(1)} MB, body ${(bodyBytes / 1e6).toFixed(1)} MB`,
      );
      const measured = await measureDataSet(csv, body, dir, runs);
      results.push(...dataSetRows(set.name, rows, bodyBytes, measured, set.target));
      if (set.postgres) {
        const postgres = await measurePostgresCopy(csv, runs);
        const upload = median(measured.uploads);
        results.push(
          'skipped' in postgres
            ? {
                benchmark: 'ingest',
                case: 'HTTP upload vs PostgreSQL COPY',
                value: upload / 1000,
                unit: 's',
                note: postgres.skipped,
              }
            : {
                benchmark: 'ingest',
                case: `${set.name}: HTTP upload vs ${postgres.version} COPY FROM STDIN (psql, same CSV)`,
                value: upload / 1000,
                unit: 's',
                baseline: { name: `${postgres.version} COPY`, value: median(postgres.runsMs) / 1000 },
                ratio: upload / median(postgres.runsMs),
                note: `COPY runs: ${seconds(postgres.runsMs)} (${postgres.rows} rows)`,
              },
        );
      }
      fs.rmSync(csv, { force: true });
      fs.rmSync(body, { force: true });
    }
    for (const columns of parts.includes('wide') ? [10, 1_000, 10_000] : []) {
      log(`wide: ${columns} columns`);
      results.push(await wideRow(columns, dir));
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  const parts = process.argv.slice(2);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  console.log(renderTable(await runUploadBenchmark(runs, parts.length > 0 ? parts : undefined)));
}
