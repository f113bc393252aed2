import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { median } from './bench-table.js';
import { type Child, runTs, startServiceProcess, waitForLine } from './processes.js';
import { SERVING_KEY, SERVING_REQUESTS, SERVING_SETUPS, waitForMetrics, warmUp } from './serving.js';

/**
 * CPU time per request of the service and of the Express floor, each server alone on CPU 0
 * and this process (the load generator) on CPU 1: the figure least disturbed by whatever
 * else the machine runs. Reports the main thread's CPU (where JavaScript runs) and the whole
 * process's (GC helpers, DuckDB's threads, the kernel's work on its sockets).
 *
 *   npx tsx bench/serving-cpu.ts [--seconds 8] [--rounds 3] [--cases 0,2] [--no-floor]
 *                                [--deployed] [--profile DIR] [NAME=VALUE …]
 *
 * The service runs as in `npm run bench` (RATE_LIMITS=off, LOG_LEVEL=warn), or with
 * `--deployed` as deployed (request log and rate limits on); NAME=VALUE pairs go to its
 * environment besides. `--profile DIR` runs the service with `--cpu-prof` and writes its
 * profile into DIR.
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const SECONDS = Number(option('--seconds', '8'));
const ROUNDS = Number(option('--rounds', '3'));
const PROFILE_DIR = option('--profile', '');
/** Which of the serving benchmark's requests, by index (all by default). */
const CASES = option('--cases', '').split(',').filter(Boolean).map(Number);
const WITH_FLOOR = !args.includes('--no-floor');
const ENV = {
  ...(args.includes('--deployed') ? SERVING_SETUPS.deployed : {}),
  ...Object.fromEntries(
    args
      .filter((a) => /^[A-Z_]+=/.test(a))
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  ),
};
const CONNECTIONS = 10;
const SERVER_CPU = '0';
const LOAD_CPU = '1';

/** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
const CLOCK_TICKS = 100;

function ticks(statFile: string): number {
  const fields = fs.readFileSync(statFile, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds (user + system) of the whole process and of its main thread. */
function cpu(pid: number): { process: number; main: number } {
  return {
    process: ticks(`/proc/${pid}/stat`) / CLOCK_TICKS,
    main: ticks(`/proc/${pid}/task/${pid}/stat`) / CLOCK_TICKS,
  };
}

function pin(pid: number, cpuList: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // -a: every thread, also those started before (DuckDB's, libuv's).
    const child = spawn('taskset', ['-a', '-cp', cpuList, String(pid)], { stdio: 'ignore' });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`taskset exited ${code}`))));
  });
}

interface Measured {
  requests: number;
  rps: number;
  p99: number;
  mainMicros: number;
  processMicros: number;
}

async function measure(url: string, pid: number): Promise<Measured> {
  // Pinned again before each load: threads started since (DuckDB starts some lazily) follow.
  await pin(pid, SERVER_CPU);
  await warmUp(url);
  // A profile counts the load after its last idle second: the warm-up is left out.
  if (PROFILE_DIR) await new Promise((resolve) => setTimeout(resolve, 2000));
  const before = cpu(pid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { 'x-service-api-key': SERVING_KEY },
  });
  const after = cpu(pid);
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const total = result.requests.total;
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p99: result.latency.p99,
    mainMicros: ((after.main - before.main) * 1e6) / total,
    processMicros: ((after.process - before.process) * 1e6) / total,
  };
}

async function withFloor<T>(
  file: string,
  contentType: string,
  use: (port: string, child: Child) => Promise<T>,
) {
  const child = runTs('bench/servers/fixed-response.ts', ['express', file, contentType]);
  const port = await waitForLine(child, /listening on (\d+)/);
  try {
    return await use(port, child);
  } finally {
    child.process.kill('SIGTERM');
    await child.exited;
  }
}

const summary = (runs: Measured[]) =>
  `${median(runs.map((r) => r.rps)).toFixed(0)} req/s, p99 ${median(runs.map((r) => r.p99))} ms, ` +
  `CPU µs/request main ${median(runs.map((r) => r.mainMicros)).toFixed(1)} ` +
  `(${runs.map((r) => r.mainMicros.toFixed(0)).join(', ')}), process ${median(runs.map((r) => r.processMicros)).toFixed(1)}; ` +
  `${runs.reduce((sum, r) => sum + r.requests, 0)} requests`;

await pin(process.pid, LOAD_CPU);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-serving-cpu-'));
const service = await startServiceProcess(
  path.join(dir, 'data'),
  { API_KEYS: `${SERVING_KEY}=bench:premium`, ...ENV },
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE_DIR)}`] : [],
);
console.log(
  `${new Date().toISOString()} load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`service environment: ${JSON.stringify(ENV)}${PROFILE_DIR ? ', profiled' : ''}`);
try {
  await waitForMetrics(service.url);
  const pid = service.child.process.pid as number;
  for (const [index, request] of SERVING_REQUESTS.entries()) {
    // The setups of the serving benchmark are chosen here by NAME=VALUE or --deployed.
    if (request.setup !== undefined || (CASES.length > 0 && !CASES.includes(index))) continue;
    const response = await fetch(`${service.url}${request.path}`, {
      headers: { 'x-service-api-key': SERVING_KEY },
    });
    const file = path.join(dir, 'body');
    fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    const contentType = response.headers.get('content-type') ?? 'application/json';
    const ours: Measured[] = [];
    const floor: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(await measure(`${service.url}${request.path}`, pid));
      if (!WITH_FLOOR) continue;
      floor.push(
        await withFloor(file, contentType, (port, child) =>
          measure(`http://127.0.0.1:${port}${request.path}`, child.process.pid as number),
        ),
      );
    }
    console.log(`${request.name} (${fs.statSync(file).size} B)`);
    console.log(`  service: ${summary(ours)}`);
    if (!WITH_FLOOR) continue;
    console.log(`  express: ${summary(floor)}`);
    console.log(
      `  ratio req/s ${(median(ours.map((r) => r.rps)) / median(floor.map((r) => r.rps))).toFixed(2)}, ` +
        `floor/service main CPU ${(median(floor.map((r) => r.mainMicros)) / median(ours.map((r) => r.mainMicros))).toFixed(2)}`,
    );
  }
} finally {
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(
  `${new Date().toISOString()} load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
