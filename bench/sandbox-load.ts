import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchRow, median } from './bench-table.js';
import { cpuSeconds, startServiceProcess, threadCpuSeconds } from './processes.js';

/**
 * The sandbox under load (issue 22, item 3): 8 clients, each with its own key, send
 * `POST /v1/sql/execute` with 64 KiB texts of hostile shapes back to back, while another
 * client asks `GET /health` every 10 ms and a third `GET /v1/tables` every 100 ms. The
 * baseline is the same polling of the same service, idle, in the same run. Target: /health
 * p99 under 50 ms under load. Printed beside it: the checks answered per second (any status:
 * a refusal is a finished check too), and the service's CPU split between its main thread
 * (the event loop) and every other thread. Run with one check worker and with two
 * (SANDBOX_WORKERS), to choose the default for a 2-core machine.
 */

const LOAD_SECONDS = Number(process.env.BENCH_SANDBOX_LOAD_SECONDS ?? 15);
const IDLE_SECONDS = Number(process.env.BENCH_SANDBOX_IDLE_SECONDS ?? 3);
const CLIENTS = 8;
const HEALTH_EVERY_MS = 10;
const TABLES_EVERY_MS = 100;
const TEXT_BYTES = 64 * 1024;
/** SANDBOX_WORKERS of each run, e.g. `BENCH_SANDBOX_WORKERS=1`. */
const WORKER_COUNTS = (process.env.BENCH_SANDBOX_WORKERS ?? '1,2').split(',').map(Number);

const keyOf = (client: number) => `bench-sandbox-key-${String(client).padStart(4, '0')}`;

/** `prefix` + parts joined by `separator` + `suffix`, as long as fits in `bytes`. */
function fill(prefix: string, part: (i: number) => string, separator: string, suffix: string): string {
  const parts: string[] = [];
  let length = prefix.length + suffix.length;
  for (let i = 0; ; i++) {
    const next = part(i);
    if (length + next.length + separator.length > TEXT_BYTES) break;
    parts.push(next);
    length += next.length + separator.length;
  }
  return prefix + parts.join(separator) + suffix;
}

/** Hostile shapes, each as long as the sandbox accepts; each runs cheaply if accepted. */
export const HOSTILE_TEXTS: { name: string; sql: string }[] = [
  { name: 'AND chain', sql: fill('SELECT 1 WHERE ', () => '1=1', ' AND ', '') },
  { name: 'OR chain', sql: fill('SELECT 1 WHERE ', () => '1=1', ' OR ', '') },
  { name: 'IN list', sql: fill('SELECT 1 WHERE 1 IN (', (i) => String(i), ', ', ')') },
  {
    name: 'UNION ALL chain',
    sql: fill('SELECT count(*) FROM (', () => 'SELECT 1', ' UNION ALL ', ')'),
  },
  { name: 'many CTEs', sql: fill('WITH ', (i) => `c${i} AS (SELECT ${i})`, ', ', ' SELECT 1') },
  { name: 'long string literal', sql: `SELECT length('${'x'.repeat(TEXT_BYTES - 40)}')` },
];

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Requests `url` every `everyMs` (one at a time) until `until()`; the latencies in ms. */
async function poll(url: string, everyMs: number, key: string | undefined, until: () => boolean) {
  const latencies: number[] = [];
  while (!until()) {
    const started = performance.now();
    const response = await fetch(url, key ? { headers: { 'x-service-api-key': key } } : {});
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
    latencies.push(performance.now() - started);
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return latencies;
}

/** The service's event-loop delay since the last scrape of /metrics (prom-client's), in ms. */
async function eventLoopDelay(base: string): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const seconds = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    p99: seconds('nodejs_eventloop_lag_p99_seconds') * 1000,
    max: seconds('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

/** Sends the texts in turn until `until()`; the statuses answered, counted. */
async function client(base: string, key: string, offset: number, until: () => boolean) {
  const statuses = new Map<number, number>();
  for (let i = offset; !until(); i++) {
    const text = HOSTILE_TEXTS[i % HOSTILE_TEXTS.length] as { sql: string };
    const response = await fetch(`${base}/api/v1/sql/execute`, {
      method: 'POST',
      headers: { 'x-service-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: text.sql, performance: 'medium' }),
    });
    await response.arrayBuffer();
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  }
  return statuses;
}

export async function runSandboxLoadBenchmark(log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const workers of WORKER_COUNTS) rows.push(...(await underLoad(workers, log)));
  return rows;
}

async function underLoad(workers: number, log: (line: string) => void): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sandbox-load-'));
  const keys = Array.from({ length: CLIENTS }, (_, i) => `${keyOf(i)}=user${i}:premium`).join(',');
  const service = await startServiceProcess(path.join(dir, 'data'), {
    API_KEYS: keys,
    DEMO_DATA: 'off',
    RATE_LIMITS: 'off',
    SANDBOX_WORKERS: String(workers),
  });
  const pid = service.child.process.pid as number;
  try {
    const base = service.url;
    // Each shape once, so that nothing is measured for the first time under load.
    const warm = await client(
      base,
      keyOf(0),
      0,
      (() => {
        let sent = 0;
        return () => sent++ >= HOSTILE_TEXTS.length;
      })(),
    );
    log(`warm-up answers: ${[...warm].map(([status, n]) => `${n}× ${status}`).join(', ')}`);

    let idleEnd = Date.now() + IDLE_SECONDS * 1000;
    const [idleHealth, idleTables] = await Promise.all([
      poll(`${base}/health`, HEALTH_EVERY_MS, undefined, () => Date.now() > idleEnd),
      poll(`${base}/api/v1/tables`, TABLES_EVERY_MS, keyOf(0), () => Date.now() > idleEnd),
    ]);
    idleEnd = 0;

    // prom-client's event-loop histogram restarts at each scrape: this one opens the window.
    await eventLoopDelay(base);
    const cpuBefore = { all: cpuSeconds(pid), split: threadCpuSeconds(pid) };
    const loadEnd = Date.now() + LOAD_SECONDS * 1000;
    const done = () => Date.now() > loadEnd;
    const started = performance.now();
    const [health, tables, ...clients] = await Promise.all([
      poll(`${base}/health`, HEALTH_EVERY_MS, undefined, done),
      poll(`${base}/api/v1/tables`, TABLES_EVERY_MS, keyOf(0), done),
      ...Array.from({ length: CLIENTS }, (_, i) => client(base, keyOf(i), i, done)),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const delay = await eventLoopDelay(base);
    const split = threadCpuSeconds(pid);
    const mainCpu = split.main - cpuBefore.split.main;
    const otherCpu = split.others - cpuBefore.split.others;
    const statuses = new Map<number, number>();
    for (const counts of clients) {
      for (const [status, n] of counts) statuses.set(status, (statuses.get(status) ?? 0) + n);
    }
    const checks = [...statuses.values()].reduce((a, b) => a + b, 0);
    const answered = [...statuses].map(([status, n]) => `${n}× ${status}`).join(', ');
    log(
      `${workers} worker(s): ${checks} checks in ${seconds.toFixed(1)} s (${answered}); /health p50 ${median(health).toFixed(1)} ms, p99 ${percentile(health, 99).toFixed(1)} ms, max ${Math.max(...health).toFixed(0)} ms; event loop delay p99 ${delay.p99.toFixed(0)} ms, max ${delay.max.toFixed(0)} ms; /v1/tables p99 ${percentile(tables, 99).toFixed(0)} ms; CPU main ${mainCpu.toFixed(1)} s, other threads ${otherCpu.toFixed(1)} s`,
    );
    const name = `${CLIENTS} clients × 64 KiB hostile texts, ${LOAD_SECONDS} s, ${workers} check worker${workers > 1 ? 's' : ''}`;
    return [
      {
        benchmark: 'sandbox (load)',
        case: `/health p50, ${name}`,
        value: median(health),
        unit: 'ms',
        baseline: { name: '/health p50 idle', value: median(idleHealth) },
        ratio: median(health) / median(idleHealth),
      },
      {
        benchmark: 'sandbox (load)',
        case: `/health p99, ${name}`,
        value: percentile(health, 99),
        unit: 'ms',
        baseline: { name: '/health p99 idle', value: percentile(idleHealth, 99) },
        ratio: percentile(health, 99) / percentile(idleHealth, 99),
        target: '< 50 ms',
      },
      {
        benchmark: 'sandbox (load)',
        case: `event loop delay p99 (max), ${name}`,
        value: delay.p99,
        unit: 'ms',
        note: `max ${delay.max.toFixed(0)} ms (prom-client's monitorEventLoopDelay: how late a timer fired, whether JavaScript held the loop or its thread waited for a core)`,
      },
      {
        benchmark: 'sandbox (load)',
        case: `GET /v1/tables p99, ${name}`,
        value: percentile(tables, 99),
        unit: 'ms',
        baseline: { name: 'idle', value: percentile(idleTables, 99) },
        ratio: percentile(tables, 99) / percentile(idleTables, 99),
      },
      {
        benchmark: 'sandbox (load)',
        case: `checks answered, ${name}`,
        value: checks / seconds,
        unit: '/s',
        note: `${answered}; service CPU: main thread ${mainCpu.toFixed(1)} s, other threads ${otherCpu.toFixed(1)} s (${(cpuSeconds(pid) - cpuBefore.all).toFixed(1)} s in all)`,
      },
    ];
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
