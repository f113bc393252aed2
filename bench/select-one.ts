import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, BENCH_KEY as KEY } from './bench-api.js';
import { median } from './bench-table.js';
import { cpuSeconds, startServiceProcess, threadCpuSeconds } from './processes.js';

/**
 * Benchmark (a) of `bench/queries.ts` alone, without the 10-million-row table: `SELECT 1`
 * end to end (execute → status every 1 ms until completed → first page), N runs, with the
 * service's CPU per run (main thread and others) and the load average. `BENCH_THREADS=1`
 * adds each thread's CPU per run (Node 20 names none: the four of libuv's pool run DuckDB's
 * statements). `BENCH_CPU_PROF_DIR=dir` profiles the service
 * (`npx tsx bench/cpu-profile.ts dir/*.cpuprofile`). A first 30 runs warm up uncounted.
 *
 *   npx tsx bench/select-one.ts [RUNS]
 */

const RUNS = Number(process.argv[2] ?? 300);

async function selectOne(base: string): Promise<{ ms: number; polls: number }> {
  const started = performance.now();
  const { execution_id: id } = await api<{ execution_id: string }>(`${base}/api/v1/sql/execute`, {
    method: 'POST',
    body: JSON.stringify({ sql: 'SELECT 1 AS one', performance: 'medium' }),
  });
  let polls = 0;
  for (;;) {
    polls++;
    const status = await api<{ state: string; is_execution_finished: boolean }>(
      `${base}/api/v1/execution/${id}/status`,
    );
    if (status.is_execution_finished) {
      if (status.state !== 'QUERY_STATE_COMPLETED') throw new Error(JSON.stringify(status));
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await api(`${base}/api/v1/execution/${id}/results?limit=32000`);
  return { ms: performance.now() - started, polls };
}

/** CPU ticks (hundredths of a second, user + system) of each live thread, from /proc. */
function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // The thread ended since the listing.
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(tid, Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-select-one-'));
const profileDir = process.env.BENCH_CPU_PROF_DIR;
const service = await startServiceProcess(
  dir,
  { API_KEYS: `${KEY}=bench:premium`, DEMO_DATA: 'off' },
  profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [],
);
try {
  const pid = service.child.process.pid as number;
  for (let i = 0; i < 30; i++) await selectOne(service.url);
  const cpu = cpuSeconds(pid);
  const threads = threadCpuSeconds(pid);
  const ticksBefore = threadTicks(pid);
  const times: number[] = [];
  let polls = 0;
  for (let i = 0; i < RUNS; i++) {
    const run = await selectOne(service.url);
    times.push(run.ms);
    polls += run.polls;
  }
  const after = threadCpuSeconds(pid);
  if (process.env.BENCH_THREADS) {
    for (const [tid, ticks] of threadTicks(pid)) {
      const used = ticks - (ticksBefore.get(tid) ?? 0);
      if (used > 0) console.log(`thread ${tid}: ${((used * 10) / RUNS).toFixed(2)} ms per run`);
    }
  }
  const perRun = (s: number) => ((s * 1000) / RUNS).toFixed(2);
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `select 1: median ${median(times).toFixed(2)} ms, p90 ${sorted[Math.floor(RUNS * 0.9)]?.toFixed(2)} ms, ` +
      `status polls ${(polls / RUNS).toFixed(2)} per run; service CPU ${perRun(cpuSeconds(pid) - cpu)} ms per run ` +
      `(main ${perRun(after.main - threads.main)}, others ${perRun(after.others - threads.others)}); load ${os.loadavg()[0]?.toFixed(2)}`,
  );
} finally {
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
