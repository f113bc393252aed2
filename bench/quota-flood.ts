import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchRow, median } from './bench-table.js';
import { startServiceProcess } from './processes.js';

/**
 * A key at its MAX_EXECUTIONS_PER_KEY floods the service with `SELECT 1` on eight connections
 * while another key inserts one row every 30 ms: how long the other key's inserts take, against
 * the same inserts alone, and against the same flood by a key far below its quota. Every run of
 * a key at its quota removes its oldest execution, written behind the run on the writer that
 * every key's inserts and uploads wait for (src/executions/key-quotas.ts).
 *
 *   npm run bench -- quota   (BENCH_QUOTA_SECONDS sets each phase's length, default 8)
 */

const SECONDS = Number(process.env.BENCH_QUOTA_SECONDS ?? 8);
const FLOODER = 'alice-key-0000000001';
const INSERTER = 'bob-key-00000000001';
const FLOOD_CONNECTIONS = 8;

const quantile = (values: readonly number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] ?? 0;

interface Phase {
  alone: number[];
  flooded: number[];
  runs: number;
}

async function phase(dir: string, maxExecutions: number): Promise<Phase> {
  const dataDir = fs.mkdtempSync(path.join(dir, 'data-'));
  const service = await startServiceProcess(dataDir, {
    API_KEYS: `${FLOODER}=alice:premium,${INSERTER}=bob:premium`,
    DEMO_DATA: 'off',
    MAX_EXECUTIONS_PER_KEY: String(maxExecutions),
  });
  const post = (key: string, route: string, body: string, type = 'application/json') =>
    fetch(`${service.url}${route}`, {
      method: 'POST',
      headers: { 'x-service-api-key': key, 'content-type': type },
      body,
    });
  try {
    const schema = [
      { name: 'id', type: 'integer' },
      { name: 'v', type: 'integer' },
    ];
    const created = await post(
      INSERTER,
      '/v1/table/create',
      JSON.stringify({ namespace: 'bob', table_name: 'ledger', schema }),
    );
    if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
    let id = 0;
    const insertFor = async (ms: number) => {
      const latencies: number[] = [];
      for (const end = Date.now() + ms; Date.now() < end; ) {
        const started = performance.now();
        const answer = await post(
          INSERTER,
          '/v1/table/bob/ledger/insert',
          `id,v\n${id},${id++}\n`,
          'text/csv',
        );
        if (answer.status !== 200) throw new Error(`insert: ${answer.status} ${await answer.text()}`);
        await answer.text();
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      return latencies;
    };
    const alone = await insertFor(SECONDS * 1000);
    let stop = false;
    let runs = 0;
    const headers = { 'x-service-api-key': FLOODER };
    const flood = Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (!stop) {
        const answer = await post(FLOODER, '/v1/sql/execute', JSON.stringify({ sql: 'SELECT 1 AS one' }));
        const body = (await answer.json()) as { execution_id?: string };
        if (!body.execution_id) continue; // a 429 past the key's queue: it floods all the same
        for (;;) {
          const status = await fetch(`${service.url}/v1/execution/${body.execution_id}/status`, { headers });
          if (((await status.json()) as { is_execution_finished: boolean }).is_execution_finished) break;
        }
        runs++;
      }
    });
    const flooded = await insertFor(SECONDS * 1000);
    stop = true;
    await Promise.all(flood);
    return { alone, flooded, runs };
  } finally {
    await service.stop();
  }
}

export async function runQuotaFloodBenchmark(
  log: (line: string) => void = () => undefined,
): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-quota-'));
  try {
    const atQuota = await phase(dir, 5);
    log(
      `at its quota: inserts alone ${median(atQuota.alone).toFixed(1)} ms, flooded ${median(atQuota.flooded).toFixed(1)} ms; ${atQuota.runs} flood runs`,
    );
    const below = await phase(dir, 1_000_000);
    log(
      `below its quota: inserts alone ${median(below.alone).toFixed(1)} ms, flooded ${median(below.flooded).toFixed(1)} ms; ${below.runs} flood runs`,
    );
    const row = (name: string, p: Phase): BenchRow => ({
      benchmark: 'quota flood',
      case: `another key's one-row inserts while a key ${name} floods SELECT 1 on ${FLOOD_CONNECTIONS} connections`,
      value: median(p.flooded),
      unit: 'ms',
      baseline: { name: 'the same inserts with nobody else', value: median(p.alone) },
      ratio: median(p.flooded) / median(p.alone),
      note: `p99 ${quantile(p.flooded, 0.99).toFixed(1)} ms (alone ${quantile(p.alone, 0.99).toFixed(1)}); ${p.flooded.length} inserts; ${p.runs} flood runs in ${SECONDS} s`,
    });
    const at = row('at its MAX_EXECUTIONS_PER_KEY', atQuota);
    return [
      at,
      row('far below its quota', below),
      {
        benchmark: 'quota flood',
        case: 'inserts while flooded: a key at its quota against one far below it',
        value: median(atQuota.flooded),
        unit: 'ms',
        baseline: { name: 'the flood of a key far below its quota', value: median(below.flooded) },
        ratio: median(atQuota.flooded) / median(below.flooded),
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  console.log(renderTable(await runQuotaFloodBenchmark((line) => process.stderr.write(`quota: ${line}\n`))));
}
