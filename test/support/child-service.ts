import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, inject } from 'vitest';
import { TEST_API_KEYS, tempDir } from './service.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ChildService {
  process: ChildProcess;
  url: string;
  output: () => string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
}

/** Who the process runs as, when not as the test's own user. */
export interface ProcessUser {
  uid: number;
  gid: number;
}

/**
 * How `node` starts the command line. Under vitest: the bundle of this run
 * (test/support/cli-bundle.ts), which only the process tests' project builds, so a test file
 * elsewhere that starts a process is told where it belongs rather than slowing
 * `npm run test:fast`. Outside vitest (the load test, run by tsx): the source through tsx,
 * as `npm start` runs it, since one start costs nothing there.
 */
function commandLine(): string[] {
  if (!process.env.VITEST) return ['--import', 'tsx', 'src/cli/main.ts'];
  const bundle = inject('cliBundle');
  if (!bundle) {
    throw new Error(
      'this test starts the command line in a child process: put its file in DEADLINE_TESTS or PROGRAM_TESTS of vitest.config.ts (test/cli, test/faults, test/browser, …), whose global setup bundles the command line',
    );
  }
  return [bundle];
}

/**
 * Runs the CLI in a child process, as a user would: under vitest `node <bundle> ...`,
 * src/cli/main.ts bundled once per test run, importing the installed packages as
 * `npm start` does.
 */
export function runCli(args: string[], env: Record<string, string> = {}, user?: ProcessUser): ChildProcess {
  return spawn(process.execPath, [...commandLine(), ...args], {
    cwd: ROOT,
    // PG_PORT 0: many servers at once, none on the default port a developer's server may hold.
    env: { ...process.env, LOG_LEVEL: 'warn', PG_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
}

/** Starts `serve` on a free port and waits for its start-up line. */
export async function spawnService(dataDir: string, env: Record<string, string> = {}): Promise<ChildService> {
  const child = runCli(['serve'], {
    PORT: '0',
    DATA_DIR: dataDir,
    API_KEYS: TEST_API_KEYS,
    RATE_LIMITS: 'off',
    DEMO_DATA: 'off',
    ...env,
  });
  let output = '';
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Serving on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    exited.then((code) => reject(new Error(`service exited (${code}) before serving:\n${output}`)));
    setTimeout(() => reject(new Error(`service did not start in time:\n${output}`)), 30_000).unref();
  });
  return { process: child, url, output: () => output, exited };
}

/**
 * For a test file whose tests start servers: `track` each one, and any still running when a
 * test ends (it failed half-way) is killed, not left behind; `freshDir` data directories are
 * removed after the file.
 */
export function childServicesOfThisFile(): {
  track: (service: ChildService) => ChildService;
  freshDir: (prefix: string) => string;
} {
  const running = new Set<ChildService>();
  const dirs: string[] = [];
  afterEach(() => {
    for (const service of running) service.process.kill('SIGKILL');
  });
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    track(service) {
      running.add(service);
      service.exited.then(() => running.delete(service));
      return service;
    },
    freshDir(prefix) {
      const dir = tempDir(prefix);
      dirs.push(dir);
      return dir;
    },
  };
}
