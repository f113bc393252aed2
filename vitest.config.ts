import os from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two projects. `process`: test files whose tests start child processes (the command line,
 * the single file, a browser, `mount`); its global setup bundles the command line once per
 * run (test/support/cli-bundle.ts). `fast`: everything else, in-process against a real
 * DuckDB and a real listening server; `npm run test:fast` runs it alone. A test file that
 * starts the command line elsewhere fails with a message pointing here (child-service.ts).
 *
 * Measured on this 2-core machine (docs/library-notes.md, "vitest 4 and esbuild"): vitest's
 * default of one worker per core but one ran every file in turn, with the second core idle
 * while a process test waited on its child; a fresh process per file (`isolate`) spent more
 * than a quarter of the CPU re-importing DuckDB, express and the service for each file. The
 * process tests run after the fast ones, one file at a time, so that their shutdown deadlines
 * compete with none of the suite's own work.
 */
const PROCESS_TESTS = [
  ...['test/cli', 'test/binary', 'test/faults', 'test/browser'].map((folder) => `${folder}/**/*.test.ts`),
  // The official Python client and the README's curl examples run as programs of their own.
  'test/sdk/python-client.test.ts',
  'test/queries/readme-examples.test.ts',
];

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
          name: 'process',
          include: PROCESS_TESTS,
          globalSetup: ['test/support/cli-bundle.ts'],
          sequence: { groupOrder: 1 },
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
