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
export function lowerWorkerThreads(niceness = WORKER_NICENESS): number {
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

/** Keeps doing so until the returned function is called. */
export function keepWorkerThreadsLower(niceness = WORKER_NICENESS): () => void {
  lowerWorkerThreads(niceness);
  const timer = setInterval(() => lowerWorkerThreads(niceness), LOOK_AGAIN_MS);
  timer.unref();
  return () => clearInterval(timer);
}
