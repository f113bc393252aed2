import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
  // 'close', not 'exit': the output may still be in the pipes when the process has exited.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr, output: stdout + stderr };
}

describe('exit codes reach the shell', () => {
  // Every refusal and its code is tested in-process (test/config/command-line.test.ts);
  // here, that main.ts ends a real process with the code and the message.
  it('--version prints the package version and exits 0', async () => {
    const { code, stdout } = await exitOf(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(packageJson.version);
  });

  it('a refused flag and a refused variable end with exit code 2 and the message on stderr', async () => {
    const [flag, variable] = await Promise.all([
      exitOf(['serve', '--port', 'eighty'], { DATA_DIR: freshDir() }),
      exitOf(['serve'], { DATA_DIR: freshDir(), PORT: 'eighty' }),
    ]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--port <port>' argument 'eighty' is invalid. PORT must be a whole number/);
    expect(variable.code).toBe(2);
    expect(variable.stderr).toMatch(/^error: PORT must be a whole number, got "eighty"$/m);
    expect(flag.stdout + variable.stdout).toBe('');
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

describe('compact', () => {
  it('gives back the space of a dropped table, keeping every row, result and id; 3 while a server runs', async () => {
    const dataDir = freshDir();
    expect((await exitOf(['demo', '--data-dir', dataDir])).code).toBe(0);
    const server = await spawnService(dataDir);
    children.add(server.process);
    const call = (urlPath: string, init: RequestInit = {}) =>
      fetch(`${server.url}${urlPath}`, {
        ...init,
        headers: { 'x-service-api-key': 'alice-free-key-0001', 'content-type': 'application/json' },
      });
    // About 28 MB of CSV, then dropped; a query saved, whose id and result must survive.
    const rows = Array.from({ length: 400_000 }, (_, i) => `${i},${randomBytes(32).toString('hex')}`);
    const upload = await call('/v1/table/upload/csv', {
      method: 'POST',
      body: JSON.stringify({ table_name: 'big', data: `id,hash\n${rows.join('\n')}\n` }),
    });
    expect(upload.status).toBe(200);
    // A table written after it keeps the file's end in use: a checkpoint cannot cut the file.
    const after = await call('/v1/table/upload/csv', {
      method: 'POST',
      body: JSON.stringify({ table_name: 'kept', data: `id,hash\n${rows.slice(0, 200_000).join('\n')}\n` }),
    });
    expect(after.status).toBe(200);
    expect((await call('/v1/table/alice/dataset_big', { method: 'DELETE' })).status).toBe(200);
    const saved = (await (
      await call('/v1/query', {
        method: 'POST',
        body: JSON.stringify({ name: 'n', query_sql: 'SELECT 7 AS n' }),
      })
    ).json()) as { query_id: number };
    // The metrics' first refresh done, so that its result is there to survive.
    for (let i = 0; i < 500; i++) {
      const answer = await call('/v1/restaking/avs-stats?queryID=3693850&limit=1');
      if (((await answer.json()) as { state: string }).state === 'QUERY_STATE_COMPLETED') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const held = await exitOf(['compact', '--data-dir', dataDir]);
    expect(held.code).toBe(3);
    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const file = path.join(dataDir, 'warehouse.duckdb');
    const before = fs.statSync(file).size;
    const compacted = await exitOf(['compact', '--data-dir', dataDir]);
    expect(compacted.stderr).toBe('');
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toMatch(
      /^Compacted .*warehouse\.duckdb from [\d.]+ MB to [\d.]+ MB in [\d.]+ s\n$/,
    );
    expect(fs.statSync(file).size).toBeLessThan(before - 4_000_000);
    expect(fs.existsSync(`${file}.compacting`)).toBe(false);

    const again = await spawnService(dataDir);
    children.add(again.process);
    const metrics = await fetch(`${again.url}/v1/restaking/avs-stats?queryID=3693850&limit=1`, {
      headers: { 'x-service-api-key': 'alice-free-key-0001' },
    });
    expect(((await metrics.json()) as { state: string }).state).toBe('QUERY_STATE_COMPLETED');
    const kept = await fetch(`${again.url}/v1/table/alice/dataset_kept`, {
      headers: { 'x-service-api-key': 'alice-free-key-0001' },
    });
    expect(((await kept.json()) as { row_count: number }).row_count).toBe(200_000);
    const next = await fetch(`${again.url}/v1/query`, {
      method: 'POST',
      headers: { 'x-service-api-key': 'alice-free-key-0001', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'm', query_sql: 'SELECT 8 AS n' }),
    });
    expect(((await next.json()) as { query_id: number }).query_id).toBe(saved.query_id + 1);
    again.process.kill('SIGTERM');
    expect(await again.exited).toBe(0);
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

  // The refresh stores without the storing watch: its row counter is its connection's own, new
  // for each run, and a result of no rows never moves it (`currval` then fails).
  it('stores a result of no rows', async () => {
    const dataDir = freshDir();
    expect((await exitOf(['demo', '--data-dir', dataDir])).code).toBe(0);
    const queriesDir = freshDir();
    fs.writeFileSync(
      path.join(queriesDir, '1006-empty.sql'),
      '-- id: 1006\n-- name: Empty\n-- refresh_seconds: 86400\nSELECT 1 AS n WHERE false\n',
    );
    const { code, stdout } = await exitOf(['refresh', '--queries-dir', queriesDir, '--query', '1006'], {
      DATA_DIR: dataDir,
    });
    expect(stdout).toMatch(/^1006 \(Empty\): completed, 0 rows/m);
    expect(code).toBe(0);
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
