import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { THREAD_POOL_SIZE } from './src/workload/thread-pool.js';

/**
 * Three projects. `process` and `programs`: test files whose tests start child processes
 * (the command line, the single file, a browser, `mount`); their global setup bundles the
 * command line once per run (test/support/cli-bundle.ts). `programs` (browsers, the official
 * Python client, the README's examples) time nothing and run two files at a time; `process`
 * times deadlines and runs last, one file at a time. `fast`: everything else, in-process against a real
 * DuckDB and a real listening server; `npm run test:fast` runs it alone. A test file that
 * starts the command line elsewhere fails with a message pointing here (child-service.ts).
 *
 * Measured on this 2-core machine (docs/library-notes.md, "vitest 4 and esbuild"): vitest's
 * default of one worker per core but one ran every file in turn, with the second core idle
 * while a process test waited on its child; a fresh process per file (`isolate`) spent more
 * than a quarter of the CPU re-importing DuckDB, express and the service for each file. The
 * process tests run after the fast ones, one file at a time, so that their shutdown deadlines
 * compete with none of the suite's own work. Splitting off `programs` took the suite from
 * 120 s to 114 s of vitest's duration on a quiet machine (`npm test` 122 s to 116 s).
 */
/** Process tests that time a deadline (exit within seconds of a signal) or a load they cut short. */
const DEADLINE_TESTS = [
  ...['test/cli', 'test/binary', 'test/faults'].map((folder) => `${folder}/**/*.test.ts`),
];
/** Process tests that time nothing: browsers and programs driving a server. */
const PROGRAM_TESTS = [
  'test/browser/**/*.test.ts',
  // The official Python client and the README's curl examples run as programs of their own.
  'test/sdk/python-*.test.ts',
  'test/queries/readme-examples.test.ts',
  'test/cli/serve.test.ts',
  'test/cli/upload.test.ts',
  // psql, Python's psycopg2 and SQLAlchemy against the Postgres wire protocol.
  'test/pgwire/programs/**/*.test.ts',
];
const PROCESS_TESTS = [...DEADLINE_TESTS, ...PROGRAM_TESTS];

// The services the tests start in-process and as children run DuckDB statements on libuv's
// pool, sized when a process starts (src/workload/thread-pool.ts): the workers inherit this.
process.env.UV_THREADPOOL_SIZE ??= String(THREAD_POOL_SIZE);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    isolate: false,
    // vitest's default leaves one core free: on 2 cores, one worker.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: PROCESS_TESTS },
      },
      {
        extends: true,
        test: {
          name: 'programs',
          include: PROGRAM_TESTS,
          // They time nothing: a poll waits as long as their own helpers do (a browser's run
          // and render took over vitest's default second once, with both cores busy).
          expect: { poll: { timeout: 15_000 } },
          globalSetup: ['test/support/cli-bundle.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: DEADLINE_TESTS,
          exclude: PROGRAM_TESTS,
          globalSetup: ['test/support/cli-bundle.ts'],
          sequence: { groupOrder: 2 },
          // One file at a time: their exit deadlines are wall time, and a second file's
          // children slow what they time (a 190 MB load in test/cli/shutdown.test.ts took
          // 9.1 s of an 8 s limit with two files at once); with other work on the 2 cores,
          // one file at a time took as long as two (92.6 s both).
          fileParallelism: false,
        },
      },
    ],
  },
});
