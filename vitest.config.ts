import { defineConfig } from 'vitest/config';

/**
 * Test files whose tests start child processes (the command line, a browser, `mount`): the
 * `process` project, which bundles the command line once per run (test/support/cli-bundle.ts).
 * Everything else is the `fast` project, which `npm run test:fast` runs alone.
 */
const PROCESS_TESTS = ['test/cli', 'test/binary', 'test/faults', 'test/browser'].map(
  (folder) => `${folder}/**/*.test.ts`,
);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: (process.env.VT_POOL ?? 'forks') as 'forks',
    ...(process.env.VT_WORKERS ? { maxWorkers: Number(process.env.VT_WORKERS) } : {}),
    ...(process.env.VT_ISOLATE ? { isolate: process.env.VT_ISOLATE === 'true' } : {}),
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: PROCESS_TESTS },
      },
      {
        extends: true,
        test: { name: 'process', include: PROCESS_TESTS, globalSetup: ['test/support/cli-bundle.ts'] },
      },
    ],
  },
});
