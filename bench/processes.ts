import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');

export interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}

/** Characters of a child's output kept (its last ones). */
const OUTPUT_KEPT = 1 << 20;

/** Runs a TypeScript file of this project in a child Node process (through tsx). */
export function runTs(
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Child {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', file, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Only the tail is kept: a server logging every request writes megabytes in a benchmark.
  const append = (chunk: Buffer) => {
    output += chunk;
    if (output.length > 2 * OUTPUT_KEPT) output = output.slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? '?')),
  );
  return { process: child, output: () => output, exited };
}

/** Waits until the child prints a line matching `pattern`; returns the first group. */
export async function waitForLine(child: Child, pattern: RegExp, timeoutMs = 120_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(child.output());
    if (match) return match[1] ?? match[0];
    if (child.process.exitCode !== null) throw new Error(`process exited early:\n${child.output()}`);
    if (Date.now() > until) throw new Error(`timed out waiting for ${pattern}:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
const CLOCK_TICKS = 100;

/** User + system CPU seconds of a live process so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // Fields 14 and 15 of stat (utime, stime), counted after the command name's closing paren.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Peak resident memory of a live process, from /proc (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}

/** Starts the service in a child process on a free port; resolves with its URL. */
export async function startServiceProcess(
  dataDir: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<{ child: Child; url: string; stop: () => Promise<void> }> {
  const child = runTs(
    'src/cli/main.ts',
    ['serve'],
    { PORT: '0', PG_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMITS: 'off', ...env },
    nodeArgs,
  );
  const url = await waitForLine(child, /Serving on (http:\/\/\S+)/);
  return {
    child,
    url,
    stop: async () => {
      child.process.kill('SIGTERM');
      await child.exited;
    },
  };
}

/**
 * CPU seconds of a live process split by thread: the main thread (JavaScript, and the
 * socket writes libuv does there) and every other thread (DuckDB's statements run on
 * libuv's pool and DuckDB's own threads; V8's GC and compiler helpers are there too).
 * Node 20 names none of its threads, so this is the finest split /proc gives.
 */
export function threadCpuSeconds(pid: number): { main: number; others: number } {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.split(') ')[1]?.split(' ') ?? [];
  const main = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  // The process's total also keeps the time of threads that have ended.
  return { main, others: cpuSeconds(pid) - main };
}

/** Resets a live process's peak resident memory (VmHWM) to its current RSS (Linux ≥ 4.0). */
export function resetPeakRss(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Resident memory of a live process now, from /proc (VmRSS), in bytes. */
export function currentRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}
