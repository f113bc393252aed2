import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type BenchRow, median } from './bench-table.js';
import { cpuSeconds, runTs, startServiceProcess, waitForLine } from './processes.js';

/**
 * Requests per second and p99 latency of typical results requests against the service,
 * and, in the same run, against a minimal Express 5 app and bare node:http answering the
 * same bytes: the framework's floor and the platform's. Targets (issue 17): every page at
 * least 0.9× the minimal Express app, `sample_count` at least 0.8×, p99 no worse. The
 * service runs as `npm run bench` always ran it (request log off, rate limits off), and once
 * more as deployed (request log on, rate limits on, with a limit the load never reaches) for
 * the first page. The load generator shares the machine's cores with the servers, so
 * requests per second are noisy on a small machine; the CPU time each server spends per
 * request, also reported, is the steadier comparison (`bench/serving-cpu.ts` measures it
 * with each server alone on a core).
 */

export const SERVING_KEY = 'bench-key-00000001';
const KEY = SERVING_KEY;
const DURATION_SECONDS = Number(process.env.BENCH_SERVING_SECONDS ?? 8);
const CONNECTIONS = 10;

/** How the service runs: as the benchmark always ran it, or as deployed. */
type Setup = 'bench' | 'deployed';

export const SERVING_SETUPS: Record<Setup, Record<string, string>> = {
  bench: {},
  deployed: { LOG_LEVEL: 'info', RATE_LIMITS: 'free:600/60,premium:100000000/600' },
};

export const SERVING_REQUESTS: { name: string; path: string; target?: string; setup?: Setup }[] = [
  {
    name: 'metrics, no parameters',
    path: '/api/v1/restaking/avs-stats?queryID=3693850',
    target: '≥ 0.9× Express',
  },
  {
    name: 'metrics, filters+sort_by+limit+columns',
    path: `/api/v1/restaking/avs-stats?queryID=3693850&filters=${encodeURIComponent('num_operators > 5 AND total_TVL > 0')}&sort_by=${encodeURIComponent('num_stakers desc')}&limit=10&columns=avs_name,avs_contract_address,num_operators,num_stakers,total_TVL`,
    target: '≥ 0.9× Express',
  },
  {
    name: 'metrics, sample_count=10',
    path: '/api/v1/restaking/avs-stats?queryID=3693850&sample_count=10',
    target: '≥ 0.8× Express',
  },
  {
    name: 'metrics, no parameters, request log and rate limits on',
    path: '/api/v1/restaking/avs-stats?queryID=3693850',
    target: '≥ 0.9× Express',
    setup: 'deployed',
  },
];

interface Load {
  rps: number;
  p99: number;
  /** CPU time the server process spent per request (user + system), in microseconds. */
  cpuMicros: number;
}

/**
 * Load not measured, before each measured one: each round starts the floors afresh, and a
 * server's first second (compiling its hot functions) would count against it.
 */
export async function warmUp(url: string): Promise<void> {
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers: { 'x-service-api-key': KEY } });
}

async function load(url: string, pid: number): Promise<Load> {
  await warmUp(url);
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_SECONDS,
    headers: { 'x-service-api-key': KEY },
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuMicros = ((cpuSeconds(pid) - cpuBefore) * 1e6) / result.requests.total;
  return { rps: result.requests.average, p99: result.latency.p99, cpuMicros };
}

async function floor(
  kind: 'express' | 'http',
  file: string,
  contentType: string,
  urlPath: string,
): Promise<Load> {
  const child = runTs('bench/servers/fixed-response.ts', [kind, file, contentType]);
  const port = await waitForLine(child, /listening on (\d+)/);
  try {
    return await load(`http://127.0.0.1:${port}${urlPath}`, child.process.pid as number);
  } finally {
    child.process.kill('SIGTERM');
    await child.exited;
  }
}

export async function waitForMetrics(url: string): Promise<void> {
  const until = Date.now() + 300_000;
  for (;;) {
    const response = await fetch(`${url}${SERVING_REQUESTS[0]?.path}`, {
      headers: { 'x-service-api-key': KEY },
    });
    const body = (await response.json()) as { state?: string };
    if (body.state === 'QUERY_STATE_COMPLETED') return;
    if (Date.now() > until) throw new Error(`the metrics never completed: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function runServingBenchmark(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const setup of Object.keys(SERVING_SETUPS) as Setup[]) {
    const requests = SERVING_REQUESTS.filter((request) => (request.setup ?? 'bench') === setup);
    rows.push(...(await runSetup(setup, requests)));
  }
  return rows;
}

async function runSetup(setup: Setup, requests: typeof SERVING_REQUESTS): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-serving-'));
  const service = await startServiceProcess(path.join(dir, 'data'), {
    API_KEYS: `${KEY}=bench:premium`,
    ...SERVING_SETUPS[setup],
  });
  const rows: BenchRow[] = [];
  try {
    await waitForMetrics(service.url);
    for (const request of requests) {
      const response = await fetch(`${service.url}${request.path}`, {
        headers: { 'x-service-api-key': KEY },
      });
      if (response.status !== 200)
        throw new Error(`${request.path}: ${response.status} ${await response.text()}`);
      const file = path.join(dir, 'body');
      fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      const contentType = response.headers.get('content-type') ?? 'application/json';
      // Alternate the servers over a few rounds so drift on a shared machine hits all alike.
      const ours: Load[] = [];
      const express: Load[] = [];
      const bare: Load[] = [];
      for (let round = 0; round < 3; round++) {
        ours.push(await load(`${service.url}${request.path}`, service.child.process.pid as number));
        express.push(await floor('express', file, contentType, request.path));
        bare.push(await floor('http', file, contentType, request.path));
      }
      const rps = median(ours.map((l) => l.rps));
      const expressRps = median(express.map((l) => l.rps));
      const bareRps = median(bare.map((l) => l.rps));
      rows.push({
        benchmark: 'serving',
        case: `${request.name} (${fs.statSync(file).size} B)`,
        value: rps,
        unit: 'req/s',
        baseline: { name: 'minimal Express 5', value: expressRps },
        ratio: rps / expressRps,
        ...(request.target ? { target: request.target } : {}),
        note:
          `p99 ${median(ours.map((l) => l.p99))} ms (Express ${median(express.map((l) => l.p99))} ms); ` +
          `CPU ${median(ours.map((l) => l.cpuMicros)).toFixed(0)} µs/request (Express ${median(express.map((l) => l.cpuMicros)).toFixed(0)} µs); ` +
          `bare node:http ${bareRps.toFixed(0)} req/s`,
      });
    }
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  console.log(renderTable(await runServingBenchmark()));
}
