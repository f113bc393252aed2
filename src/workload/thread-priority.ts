import fs from 'node:fs';
import os from 'node:os';

/**
 * The event loop's thread ahead of every other thread of the process (DESIGN §12). DuckDB runs
 * each statement on a thread of libuv's pool and on its own worker threads; with several long
 * queries at once, as many busy threads as statements shared two cores equally with the main
 * thread, which answers every request: `/health` and status requests waited their turn behind
 * sorts and joins. On Linux a thread has a nice value of its own (setpriority with a thread id),
 * so every thread but the main one is made "nicer": the scheduler then gives the main thread
 * most of a core whenever it has work, and the statements share what is left as before. Threads
 * that appear later (a pool that grows) are found by looking again from time to time. Where
 * the system does not allow it, nothing changes.
 */

/** The nice value of every thread but the main one (the main thread keeps the process's). */
export const WORKER_NICENESS = 10;

const LOOK_AGAIN_MS = 10_000;

/** Threads of this process, by id, from /proc (Linux); none elsewhere. */
function threadIds(): number[] {
  try {
    return fs.readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    return [];
  }
}

/** Sets the nice value of every thread but the main one, now; returns how many were changed. */
function lowerWorkerThreads(niceness = WORKER_NICENESS): number {
  let changed = 0;
  for (const tid of threadIds()) {
    if (tid === process.pid) continue;
    try {
      if (os.getPriority(tid) >= niceness) continue;
      os.setPriority(tid, niceness);
      changed++;
    } catch {
      // Gone meanwhile, or not allowed: it keeps its priority.
    }
  }
  return changed;
}

/**
 * The nice value of a thread that has been busy for DEMOTE_AFTER_MS without a pause: it is
 * running a long statement (a join of minutes, a sort of a large result), and a short one that
 * starts meanwhile on another thread gets most of the cores instead of a share equal to it.
 * Back to WORKER_NICENESS once it pauses (its statement ended). A multilevel feedback queue of
 * two levels, on the operating system's scheduler.
 */
export const LONG_WORK_NICENESS = 19;
const SAMPLE_MS = 200;
const DEMOTE_AFTER_MS = 1_000;
/** Busy: used at least this share of a core since the last look. */
const BUSY_SHARE = 0.6;
/** Paused: used at most this share since the last look. */
const IDLE_SHARE = 0.2;
const CLOCK_TICKS = 100;

/** CPU seconds a thread of this process has used, from /proc (undefined once it has gone). */
function threadCpuSeconds(tid: number): number | undefined {
  try {
    const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

interface Seen {
  cpu: number;
  busySinceMs: number | undefined;
  demoted: boolean;
}

/** Whether this process may give a thread back a lower nice value (root, or RLIMIT_NICE). */
function mayRaisePriority(): boolean {
  const tid = threadIds().find((id) => id !== process.pid);
  if (tid === undefined) return false;
  try {
    const was = os.getPriority(tid);
    os.setPriority(tid, Math.min(was + 1, 19));
    os.setPriority(tid, was);
    return true;
  } catch {
    return false;
  }
}

/** The process's one keeper while any service holds it (tests start several in one process). */
let keeper: { holders: number; stop: () => void; restore: () => void } | undefined;

/**
 * Gives every demoted thread its priority back now: to be called when no statement runs. A
 * long statement's threads (libuv's, and DuckDB's workers, which take every statement's tasks)
 * stayed at LONG_WORK_NICENESS until a look saw them pause, up to SAMPLE_MS later, and the
 * next statement ran on them: a 9 ms query run just after a 900 ms one took 22 ms instead of
 * 11 (`BENCH_ANALYTICS_QUERIES=q21,q22 npm run bench -- analytics`, 2026-11-27). While other
 * statements run, demoted threads stay demoted.
 */
export function restoreDemotedThreads(): void {
  keeper?.restore();
}

/**
 * Keeps every thread but the main one at WORKER_NICENESS, and threads busy without a pause for
 * a second at LONG_WORK_NICENESS, until the returned function is called. Without the right to
 * give a thread its priority back (an unprivileged process without RLIMIT_NICE), threads are
 * only lowered once: a demotion that could not be undone would leave every thread demoted.
 *
 * Threads are the process's, not a service's: one keeper looks at them for every service of
 * the process, and stops when the last lets go. Two keepers at once each demoted the other's
 * threads, and a thread demoted by one that stopped was left at 19 (stop 29's CI).
 */
export function keepWorkerThreadsLower(): () => void {
  keeper ??= { holders: 0, ...startKeeping(WORKER_NICENESS) };
  const held = keeper;
  held.holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--held.holders > 0) return;
    held.stop();
    if (keeper === held) keeper = undefined;
  };
}

function startKeeping(niceness: number): { stop: () => void; restore: () => void } {
  lowerWorkerThreads(niceness);
  const demoting = mayRaisePriority();
  const seen = new Map<number, Seen>();
  let lastLook = 0;
  const look = () => {
    const now = performance.now();
    if (now - lastLook >= LOOK_AGAIN_MS) {
      lowerWorkerThreads(niceness);
      lastLook = now;
    }
    if (demoting) demoteLongWork(seen, now, niceness);
  };
  const timer = setInterval(look, demoting ? SAMPLE_MS : LOOK_AGAIN_MS);
  timer.unref();
  const restore = () => {
    for (const [tid, thread] of seen) {
      thread.busySinceMs = undefined;
      if (thread.demoted && setNiceness(tid, niceness)) thread.demoted = false;
    }
  };
  return {
    stop: () => {
      clearInterval(timer);
      // A thread of libuv's pool outlives the services of the process: it is given its
      // priority back rather than left at 19.
      for (const [tid, thread] of seen) if (thread.demoted) setNiceness(tid, niceness);
    },
    restore,
  };
}

function setNiceness(tid: number, niceness: number): boolean {
  try {
    os.setPriority(tid, niceness);
    return true;
  } catch {
    return false; // Gone meanwhile.
  }
}

function demoteLongWork(seen: Map<number, Seen>, now: number, niceness: number): void {
  const alive = new Set<number>();
  for (const tid of threadIds()) {
    if (tid === process.pid) continue;
    alive.add(tid);
    const cpu = threadCpuSeconds(tid);
    if (cpu === undefined) continue;
    const before = seen.get(tid);
    if (!before) {
      seen.set(tid, { cpu, busySinceMs: undefined, demoted: false });
      continue;
    }
    const share = (cpu - before.cpu) / (SAMPLE_MS / 1000);
    before.cpu = cpu;
    if (share >= BUSY_SHARE) before.busySinceMs ??= now - SAMPLE_MS;
    else if (share <= IDLE_SHARE) before.busySinceMs = undefined;
    const long = before.busySinceMs !== undefined && now - before.busySinceMs >= DEMOTE_AFTER_MS;
    if (long === before.demoted) continue;
    if (setNiceness(tid, long ? LONG_WORK_NICENESS : niceness)) before.demoted = long;
  }
  for (const tid of seen.keys()) if (!alive.has(tid)) seen.delete(tid);
}
