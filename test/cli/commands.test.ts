import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { runCli as spawnCli, spawnService } from '../support/child-service.js';
import { tempDir } from '../support/service.js';

/**
 * The command line as scripts use it: what each command prints and which exit code it
 * ends with (0 done, 1 failed, 2 usage or configuration error, 3 database in use).
 */

const FIXTURE_QUERIES = path.resolve(import.meta.dirname, '../fixtures/queries');

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Children still running at the end (a test failed half-way) are stopped, not left behind. */
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
});

function runCli(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawnCli(args, env);
  children.add(child);
  return child;
}

function freshDir() {
  const dir = tempDir('cli-');
  dirs.push(dir);
  return dir;
}

async function exitOf(args: string[], env: Record<string, string> = {}) {
  const child = runCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c) => {
    stdout += c;
  });
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr, output: stdout + stderr };
}

/** Every variable of DESIGN.md §2, each of which a flag overrides. */
const DESIGN_VARIABLES = [
  'PORT',
  'HOST',
  'DATA_DIR',
  'PUBLIC_BASE_URL',
  'API_KEYS',
  'REFRESH_INTERVAL_SECONDS',
  'MAX_UPLOAD_BYTES',
  'MAX_DATAPOINTS_PER_REQUEST',
  'MAX_RESULT_ROWS',
  'RESULT_RETENTION_HOURS',
  'RATE_LIMITS',
];

describe('help and version', () => {
  it('--version prints the package version and exits 0', async () => {
    const { code, stdout } = await exitOf(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(packageJson.version);
  });

  it('--help lists the commands and the exit codes; each command has its own --help', async () => {
    const [top, serve, keys, demo, refresh, helpRefresh] = await Promise.all([
      exitOf(['--help']),
      exitOf(['serve', '--help']),
      exitOf(['keys', 'create', '--help']),
      exitOf(['demo', '--help']),
      exitOf(['refresh', '--help']),
      exitOf(['help', 'refresh']),
    ]);
    for (const result of [top, serve, keys, demo, refresh, helpRefresh]) expect(result.code).toBe(0);
    for (const command of ['serve', 'keys', 'demo', 'refresh']) expect(top.stdout).toContain(command);
    expect(top.stdout).toMatch(/Exit codes:[\s\S]*3 +the database file is held by another process/);
    for (const variable of DESIGN_VARIABLES)
      expect(serve.stdout).toMatch(new RegExp(`\\(env\\s+${variable}\\)`));
    expect(keys.stdout).toContain('--handle <name>');
    expect(keys.stdout).toContain('--data-dir <dir>');
    expect(demo.stdout).toContain('--scale <n>');
    expect(refresh.stdout).toContain('--query <id>');
    expect(helpRefresh.stdout).toBe(refresh.stdout);
  });
});

describe.concurrent('usage errors end with exit code 2 and say what was wrong', () => {
  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--no-such-flag'], /unknown option '--no-such-flag'/],
    [['refresh', '--port', '1'], /unknown option '--port'/],
    [['keys', 'create'], /required option '--handle <name>' not specified/],
    [
      ['keys', 'create', '--handle', 'Not A Handle'],
      /handle "Not A Handle" must start with a lowercase letter/,
    ],
    [['keys', 'delete'], /unknown command 'delete'/],
    [['demo', '--scale', 'lots'], /--scale <n>' argument 'lots' is invalid/],
    [
      ['serve', '--port', 'eighty'],
      /--port <port>' argument 'eighty' is invalid. PORT must be a whole number/,
    ],
    [['serve', '--rate-limits', 'gold:1/1'], /RATE_LIMITS entry "gold:1\/1"/],
    [['serve', '--duckdb-memory-limit', 'half'], /DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB/],
    [['serve', '--auth-failure-limit', 'lots'], /AUTH_FAILURE_LIMIT must be a whole number/],
    [['serve', '--public-base-url', 'ftp://x'], /PUBLIC_BASE_URL must be an http or https URL/],
    [['serve', '--api-keys', 'secret-key-123=Bad Handle'], /API_KEYS: handle "Bad Handle"/],
    [['refresh', '--query', 'x'], /a saved-query id is a positive whole number/],
    [['refresh', '--query', '999'], /no saved query 999; the saved queries are 3693850/],
  ])('%j', async (args, message) => {
    const { code, stderr } = await exitOf(args, { DATA_DIR: freshDir() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('never repeats a key list given on the command line', async () => {
    const { code, stderr } = await exitOf(['serve', '--api-keys', 'very-secret-key-value'], {
      DATA_DIR: freshDir(),
    });
    expect(code).toBe(2);
    expect(stderr).not.toContain('very-secret-key-value');
  });
});

describe('flags override the environment', () => {
  it('serves with --port and --data-dir over bad PORT and DATA_DIR values', async () => {
    const dataDir = freshDir();
    const child = runCli(['serve', '--port', '0', '--data-dir', dataDir, '--demo-data', 'off'], {
      PORT: 'not-a-port',
      DATA_DIR: '/nonexistent/never',
      API_KEYS: 'flag-test-key-0001=flagged',
    });
    let output = '';
    child.stdout?.on('data', (c) => {
      output += c;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    for (let i = 0; i < 300 && !/Serving on/.test(output); i++) await new Promise((r) => setTimeout(r, 50));
    expect(output).toContain(`(data directory ${dataDir}; keys: 1 from API_KEYS;`);
    expect(output).toMatch(/saved queries: 3693850 \(AVS metrics\)\)/);
    expect(fs.existsSync(path.join(dataDir, 'warehouse.duckdb'))).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('keys create', () => {
  it('prints only the key on stdout, and keeps only its hash', async () => {
    const dataDir = freshDir();
    const { code, stdout, stderr } = await exitOf(['keys', 'create', '--handle', 'dana', '--premium'], {
      DATA_DIR: dataDir,
    });
    expect(code).toBe(0);
    const key = stdout.trim();
    expect(key).toMatch(/^sk_[\w-]{43}$/);
    expect(stderr).toContain('Created a premium key for "dana"');
    const file = fs.readFileSync(path.join(dataDir, 'keys.json'), 'utf8');
    expect(file).toContain('"handle": "dana"');
    expect(file).not.toContain(key);
  });
});

describe('refresh', () => {
  it('refuses a data directory without a database (exit 1)', async () => {
    const { code, stderr } = await exitOf(['refresh'], { DATA_DIR: freshDir() });
    expect(code).toBe(1);
    expect(stderr).toMatch(/no database at .*warehouse\.duckdb: start the service once \(or run demo\)/);
  });

  it('runs the saved queries once and exits 0; 3 while a server holds the database', async () => {
    const dataDir = freshDir();
    const demo = await exitOf(['demo', '--scale', '1', '--data-dir', dataDir]);
    expect(demo.code).toBe(0);
    const refreshed = await exitOf(['refresh', '--data-dir', dataDir]);
    expect(refreshed.stderr).toBe('');
    expect(refreshed.code).toBe(0);
    expect(refreshed.stdout).toMatch(
      /^3693850 \(AVS metrics\): completed, 40 rows in [\d.]+ s \(execution \w{26}\)\n$/,
    );

    const server = await spawnService(dataDir);
    children.add(server.process);
    const held = await exitOf(['refresh', '--data-dir', dataDir]);
    expect(held.code).toBe(3);
    expect(held.stderr).toMatch(/already in use/);
    // The server serves the result the refresh stored.
    const response = await fetch(`${server.url}/v1/restaking/avs-stats?queryID=3693850&limit=1`, {
      headers: { 'x-service-api-key': 'alice-free-key-0001' },
    });
    expect(((await response.json()) as { state: string }).state).toBe('QUERY_STATE_COMPLETED');
    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('exits 1 and says which query failed', async () => {
    const dataDir = freshDir();
    expect((await exitOf(['demo', '--data-dir', dataDir])).code).toBe(0);
    const { code, stdout, stderr } = await exitOf(
      ['refresh', '--queries-dir', FIXTURE_QUERIES, '--query', '3693850', '--query', '1004'],
      { DATA_DIR: dataDir },
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/^3693850 \(AVS metrics\): completed, 40 rows/m);
    expect(stdout).toMatch(/^1004 \(Flaky\): FAILED in [\d.]+ s: Catalog Error/m);
    expect(stderr).toContain('error: a saved query failed');
  });

  it('stops a long refresh on SIGTERM within a second or two (exit 1), leaving the database usable', async () => {
    const dataDir = freshDir();
    expect((await exitOf(['demo', '--data-dir', dataDir])).code).toBe(0);
    const child = runCli(['refresh', '--queries-dir', FIXTURE_QUERIES, '--query', '1002'], {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    });
    let output = '';
    child.stdout?.on('data', (c) => {
      output += c;
    });
    child.stderr?.on('data', (c) => {
      output += c;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    for (let i = 0; i < 300 && !/execution started/.test(output); i++)
      await new Promise((r) => setTimeout(r, 50));
    const signalled = performance.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(performance.now() - signalled).toBeLessThan(3_000);
    expect(output).toContain('error: stopped by SIGTERM before the refresh finished');
    const again = await exitOf(['refresh', '--data-dir', dataDir]);
    expect(again.code).toBe(0);
  });
});
