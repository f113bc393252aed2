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
    pool: 'forks',
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
