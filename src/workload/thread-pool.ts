/**
 * libuv's thread pool, on which every DuckDB statement of `@duckdb/node-api` runs (a
 * Napi::AsyncWorker) from its start to its end, beside Node's own file operations. Its
 * default of 4 threads let two long users' queries and two refreshes take all of it: every
 * other statement (a page, `GET /v1/tables`, a sandbox check) and every file read then
 * waited for one of them to end. libuv sizes the pool once, on its first use, which in an ES
 * module entry point comes before the module's first line (Node's loader reads files on the
 * pool: measured with a statement blocked on a FIFO, 2026-11-27, docs/library-notes.md), so
 * the variable is set where the process starts: `npm start`'s script, the single file's
 * banner, the tests' configuration.
 */
export const THREAD_POOL_SIZE = 64;

export const THREAD_POOL_BANNER = `process.env.UV_THREADPOOL_SIZE ??= '${THREAD_POOL_SIZE}';`;

/** The pool's size as this process started with it (libuv's default is 4, its maximum 1024). */
export function threadPoolSize(): number {
  const size = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(size) && size > 0 ? Math.min(size, 1024) : 4;
}

/**
 * Statements that may run at once, besides a margin for file operations: the pool must have
 * a thread for each, or the one past it waits for another to end.
 */
export function threadsNeeded(statements: number): number {
  return statements + 8;
}
