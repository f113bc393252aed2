import fs from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { runProgram } from '../../src/cli/program.js';
import { tempDir } from '../support/service.js';

/**
 * The command line in-process (src/cli/program.ts): its help, and every usage or
 * configuration error it refuses, with the exit code it ends with (2) and the message on
 * stderr. A refusal happens before anything starts, so none of these needs a process;
 * test/cli checks that the codes reach the shell from a real one.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/**
 * Runs one command line with `env` over the process environment. The defaults keep a
 * command that wrongly went ahead harmless: a fresh data directory, any free port, no demo.
 */
async function run(args: string[], env: Record<string, string> = {}) {
  const dataDir = tempDir('command-line-');
  dirs.push(dataDir);
  const environment = { DATA_DIR: dataDir, PORT: '0', DEMO_DATA: 'off', LOG_LEVEL: 'silent', ...env };
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  let stdout = '';
  let stderr = '';
  const code = await runProgram(['node', 'restaking-data-service', ...args], {
    writeOut: (text) => {
      stdout += text;
    },
    writeErr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr, dataDir };
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

describe('help', () => {
  it('--help lists the commands and the exit codes; each command has its own --help', async () => {
    const top = await run(['--help']);
    const serve = await run(['serve', '--help']);
    const keys = await run(['keys', 'create', '--help']);
    const demo = await run(['demo', '--help']);
    const refresh = await run(['refresh', '--help']);
    const helpRefresh = await run(['help', 'refresh']);
    for (const result of [top, serve, keys, demo, refresh, helpRefresh]) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
    }
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

  it('--version prints the package version', async () => {
    const { code, stdout } = await run(['--version']);
    expect(code).toBe(0);
    expect(stdout).toBe(`${packageJson.version}\n`);
  });
});

describe('usage errors end with exit code 2 and say what was wrong', () => {
  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--no-such-flag'], /unknown option '--no-such-flag'/],
    [['serve', '--no-such-flag'], /unknown option '--no-such-flag'/],
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
    [
      ['refresh', '--queries-dir', '/nonexistent/queries'],
      /cannot read the saved-query folder \/nonexistent\/queries/,
    ],
  ])('%j', async (args, message) => {
    const { code, stdout, stderr, dataDir } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
    // Exit code 2 means nothing was changed.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it('never repeats a key list given on the command line', async () => {
    const { code, stdout, stderr } = await run(['serve', '--api-keys', 'very-secret-key-value']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/API_KEYS entry/);
    expect(stdout + stderr).not.toContain('very-secret-key-value');
  });
});

describe('serve refuses a bad configuration value in the environment with exit code 2', () => {
  it.each([
    [{ PORT: 'eighty' }, /PORT must be a whole number/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ API_KEYS: 'nohandle' }, /API_KEYS entry/],
    [{ RATE_LIMITS: 'gold:1/1' }, /RATE_LIMITS entry/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /PUBLIC_BASE_URL must be an http or https URL/],
    [{ MAX_UPLOAD_BYTES: '-5' }, /MAX_UPLOAD_BYTES must be a whole number/],
    [{ AUTH_FAILURE_LIMIT: '0' }, /AUTH_FAILURE_LIMIT must be a whole number/],
    [{ DUCKDB_MEMORY_LIMIT: 'lots' }, /DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB, got "lots"/],
    [{ DUCKDB_MEMORY_LIMIT: '2GB; DROP TABLE x' }, /DUCKDB_MEMORY_LIMIT must be a size/],
  ])('%j', async (env, message) => {
    const { code, stdout, stderr, dataDir } = await run(['serve'], env);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`^error: ${message.source}`));
    expect(stdout).toBe('');
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
