import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { serialize } from 'pg-protocol';
import { BENCH_KEY } from './bench-api.js';
import { type BenchRow, median } from './bench-table.js';
import type { PgwireAnswer, PgwireCommand } from './pgwire-client.js';
import { findTools, freePort, postgresUser, run } from './postgres-copy.js';
import { cpuSeconds, ROOT, startServiceProcess, threadCpuSeconds, waitForLine } from './processes.js';

/**
 * The Postgres wire protocol (issue 23), through npm `pg` in a client process of its own:
 *  (a) a `SELECT 1` round trip against the same through PostgreSQL 15 on this machine (a
 *      throwaway cluster: initdb and pg_ctl in a temporary directory, a free port; as root it
 *      runs as the `postgres` user). Target ≤ 2×. Beside it, round trips that reach DuckDB:
 *      a constant with a bound parameter, and a one-row query over a stored table;
 *  (b) a 1,000,000-row, six-column result streamed to `pg` against DuckDB writing the same
 *      rows with `COPY … TO` a CSV file in this process. Target ≤ 1.5×. Beside it, the CPU
 *      each side used (from /proc), since client and service share this machine's cores:
 *      their sum over the cores is the least time the stream could take here.
 * Rounds alternate between the two sides; medians are reported.
 */

const ROWS = Number(process.env.BENCH_PGWIRE_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_PGWIRE_ROUNDS ?? 5);
const ROUND_TRIPS = Number(process.env.BENCH_PGWIRE_ROUND_TRIPS ?? 2000);

/** The rows of the whole-results benchmark: a bigint, a double, a varchar, a timestamp, a boolean, an address. */
const RESULT_SQL = `SELECT i AS block_number,
  CAST((i * 7919) % 1000003 AS DOUBLE) / 1000 AS amount,
  'token_' || (i % 13) AS token,
  TIMESTAMP '2024-01-01' + to_seconds(i * 13) AS block_time,
  i % 3 = 0 AS staked,
  '0x' || lpad(lower(to_hex((i * 2654435761) % 1099511627776)), 40, '0') AS avs_address
  FROM range(${ROWS}) r(i)`;

class Client {
  private readonly child: ChildProcess;
  private waiting: ((answer: PgwireAnswer) => void) | undefined;

  constructor() {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'bench/pgwire-client.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (answer: PgwireAnswer) => this.waiting?.(answer));
  }

  ask(command: PgwireCommand): Promise<PgwireAnswer> {
    return new Promise((resolve, reject) => {
      this.waiting = (answer) => (answer.error ? reject(new Error(answer.error)) : resolve(answer));
      this.child.send(command);
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  stop(): void {
    this.child.disconnect();
  }
}

interface Postgres {
  port: number;
  version: string;
  stop(): Promise<void>;
}

/** A throwaway PostgreSQL cluster, or why there is none. */
async function startPostgres(): Promise<Postgres | string> {
  const tools = findTools();
  if (!tools) return 'postgresql is not installed (apt-get install postgresql)';
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (process.getuid?.() === 0 && !user) return 'running as root and there is no postgres user';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pgwire-postgres-'));
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  const as = user ? { user } : {};
  const bin = (tool: string) => path.join(tools.bin, tool);
  await run(
    bin('initdb'),
    ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync'],
    as,
  );
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  await run(
    bin('pg_ctl'),
    ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-w', '-o', options, 'start'],
    as,
  );
  return {
    port,
    version: `PostgreSQL ${tools.version}`,
    stop: async () => {
      await run(bin('pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop'], as).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** CPU milliseconds this process has used so far, all threads. */
function ownCpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** CPU milliseconds a process's threads use while `work` runs: the main thread's and the rest's. */
async function cpuDuring<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; main: number; others: number }> {
  const before = threadCpuSeconds(pid);
  const result = await work();
  const after = threadCpuSeconds(pid);
  return {
    result,
    main: (after.main - before.main) * 1000,
    others: (after.others - before.others) * 1000,
  };
}

async function copyBaseline(): Promise<() => Promise<number>> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const file = path.join(os.tmpdir(), `bench-pgwire-copy-${process.pid}.csv`);
  return async () => {
    const started = performance.now();
    await connection.run(`COPY (${RESULT_SQL}) TO '${file}' (FORMAT csv, HEADER true)`);
    const ms = performance.now() - started;
    fs.rmSync(file, { force: true });
    return ms;
  };
}

/** The bytes the service answers a query with (RowDescription to CommandComplete), read raw. */
async function answerBytes(port: number, sql: string): Promise<Buffer> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const parts: Buffer[] = [];
  let phase = 0;
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (data: Buffer) => {
      if (phase === 0 && data[0] === 0x52) {
        phase = 1;
        socket.write(serialize.password(BENCH_KEY));
      } else if (phase === 1 && data.includes(0x5a)) {
        phase = 2;
        socket.write(serialize.query(sql));
      } else if (phase === 2) {
        parts.push(data);
        const tail = data.subarray(-6);
        if (tail[0] === 0x5a && tail.readInt32BE(1) === 5) resolve();
      }
    });
    socket.write(serialize.startup({ user: 'bench', database: 'dune' }));
  });
  socket.destroy();
  // Without the final ReadyForQuery: the canned server adds its own.
  const all = Buffer.concat(parts);
  return all.subarray(0, all.length - 6);
}

/**
 * The floor of (b): a bare server in this process that answers any query with those bytes,
 * already made, to the same client. What remains is the transfer and pg's own parsing.
 */
async function cannedServer(answer: Buffer): Promise<{ port: number; close: () => void }> {
  const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
  const ok = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
  const server = net.createServer({ noDelay: true }, (socket) => {
    let started = false;
    socket.on('error', () => undefined);
    socket.on('data', (data: Buffer) => {
      if (!started) {
        started = true;
        socket.write(Buffer.concat([ok, ready]));
      } else if (data[0] === 0x51) socket.write(Buffer.concat([answer, ready]));
      else if (data[0] === 0x58) socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

export async function runPgwireBenchmark(log: (line: string) => void): Promise<BenchRow[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pgwire-'));
  const service = await startServiceProcess(dataDir, {
    API_KEYS: `${BENCH_KEY}=bench:premium`,
    DEMO_DATA: 'off',
  });
  const port = Number(await waitForLine(service.child, /Postgres wire protocol: [^:]+:(\d+)/));
  const postgres = await startPostgres();
  const client = new Client();
  const ours = { port, user: 'bench', password: BENCH_KEY };
  const rows: BenchRow[] = [];
  try {
    await fetch(`${service.url}/v1/table/upload/csv`, {
      method: 'POST',
      headers: { 'x-service-api-key': BENCH_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: 'one', data: 'id,label\n1,one\n' }),
    });
    const cases: { name: string; sql: string; values?: unknown[] }[] = [
      { name: 'SELECT 1 round trip', sql: 'SELECT 1' },
      { name: 'SELECT $1::INTEGER round trip (extended protocol)', sql: 'SELECT $1::INTEGER', values: [1] },
      { name: 'one row of a stored table, round trip', sql: 'SELECT id, label FROM dataset_one' },
    ];
    const theirs =
      typeof postgres === 'string' ? undefined : { port: postgres.port, user: 'postgres', password: '' };
    if (typeof postgres !== 'string') {
      await run('psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(postgres.port),
        '-U',
        'postgres',
        '-c',
        "CREATE TABLE dataset_one AS SELECT 1 AS id, 'one' AS label",
      ]);
    }
    for (const c of cases) {
      const measured: number[] = [];
      const baseline: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // The first round warms both servers and the client up, and is not counted.
        const count = round === 0 ? 300 : ROUND_TRIPS;
        const mine = await client.ask({ kind: 'round-trips', ...ours, sql: c.sql, values: c.values, count });
        const other = theirs
          ? await client.ask({ kind: 'round-trips', ...theirs, sql: c.sql, values: c.values, count })
          : undefined;
        if (round === 0) continue;
        measured.push(mine.value);
        if (other) baseline.push(other.value);
        log(
          `${c.name}: ${mine.value.toFixed(0)} µs${other ? ` (PostgreSQL ${other.value.toFixed(0)} µs)` : ''}`,
        );
      }
      const value = median(measured);
      const base = baseline.length > 0 ? median(baseline) : undefined;
      rows.push({
        benchmark: 'pgwire',
        case: c.name,
        value,
        unit: 'µs',
        ...(base !== undefined && typeof postgres !== 'string'
          ? { baseline: { name: postgres.version, value: base }, ratio: value / base }
          : { note: typeof postgres === 'string' ? `no baseline: ${postgres}` : '' }),
        ...(c.name.startsWith('SELECT 1') ? { target: '≤ 2×' } : {}),
      });
    }
    const copy = await copyBaseline();
    const canned = await cannedServer(await answerBytes(port, RESULT_SQL));
    const floorSide = { port: canned.port, user: 'floor', password: '' };
    const streamed: number[] = [];
    const copies: number[] = [];
    const floors: number[] = [];
    const cpu = {
      main: [] as number[],
      others: [] as number[],
      client: [] as number[],
      copy: [] as number[],
    };
    const servicePid = service.child.process.pid ?? 0;
    for (let round = 0; round <= ROUNDS; round++) {
      const clientBefore = cpuSeconds(client.pid);
      const stream = await cpuDuring(servicePid, () =>
        client.ask({ kind: 'stream', ...ours, sql: RESULT_SQL }),
      );
      const clientMs = (cpuSeconds(client.pid) - clientBefore) * 1000;
      const answer = stream.result;
      if (answer.rows !== ROWS) throw new Error(`streamed ${answer.rows} rows, not ${ROWS}`);
      const copyBefore = ownCpuMs();
      const copied = await copy();
      const copyMs = ownCpuMs() - copyBefore;
      const floor = await client.ask({ kind: 'stream', ...floorSide, sql: RESULT_SQL });
      if (round === 0) continue;
      streamed.push(answer.value);
      copies.push(copied);
      floors.push(floor.value);
      cpu.main.push(stream.main);
      cpu.others.push(stream.others);
      cpu.client.push(clientMs);
      cpu.copy.push(copyMs);
      log(
        `${ROWS} rows to pg: ${answer.value.toFixed(0)} ms (CPU: service main thread ${stream.main.toFixed(0)} ms, other threads ${stream.others.toFixed(0)}, pg ${clientMs.toFixed(0)}); COPY … TO: ${copied.toFixed(0)} ms (CPU ${copyMs.toFixed(0)} ms); the same bytes from memory: ${floor.value.toFixed(0)} ms`,
      );
    }
    canned.close();
    const value = median(streamed);
    const base = median(copies);
    rows.push({
      benchmark: 'pgwire',
      case: `${ROWS.toLocaleString('en')} rows × 6 columns streamed to pg`,
      value,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY … TO csv', value: base },
      ratio: value / base,
      target: '≤ 1.5×',
    });
    rows.push({
      benchmark: 'pgwire',
      case: 'the same bytes sent from memory to pg (the floor)',
      value: median(floors),
      unit: 'ms',
      baseline: { name: 'DuckDB COPY … TO csv', value: base },
      ratio: median(floors) / base,
      note: 'transfer and pg parsing alone',
    });
    const cores = os.cpus().length;
    const used = median(cpu.main) + median(cpu.others) + median(cpu.client);
    rows.push({
      benchmark: 'pgwire',
      case: `the stream's CPU (service and pg) over ${cores} cores: the least time it could take here`,
      value: used / cores,
      unit: 'ms',
      baseline: { name: 'DuckDB COPY … TO csv', value: base },
      ratio: used / cores / base,
      note: `service main thread ${median(cpu.main).toFixed(0)} ms, other threads ${median(cpu.others).toFixed(0)} ms, pg ${median(cpu.client).toFixed(0)} ms; COPY used ${median(cpu.copy).toFixed(0)} ms of CPU`,
    });
  } finally {
    client.stop();
    await service.stop();
    if (typeof postgres !== 'string') await postgres.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}
