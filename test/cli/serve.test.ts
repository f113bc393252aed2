import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnService } from '../support/child-service.js';
import { startTestService, tempDir } from '../support/service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function freshDir() {
  const dir = tempDir('serve-');
  dirs.push(dir);
  return dir;
}

async function exitOf(args: string[], env: Record<string, string> = {}) {
  const child = runCli(args, env);
  let output = '';
  child.stdout?.on('data', (c) => {
    output += c;
  });
  child.stderr?.on('data', (c) => {
    output += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

describe('serve', () => {
  it('on a first start with no key anywhere, creates and prints a local key that works', async () => {
    const dataDir = freshDir();
    const service = await spawnService(dataDir, { API_KEYS: '', DEMO_DATA: 'on' });
    await new Promise((r) => setTimeout(r, 200));
    const key = /Created a local API key \(handle "local", premium, admin\): (sk_\S+)/.exec(
      service.output(),
    )?.[1];
    expect(key).toBeDefined();
    expect(fs.readFileSync(path.join(dataDir, 'dev-api-key.txt'), 'utf8').trim()).toBe(key);
    const account = await fetch(`${service.url}/v1/account`, { headers: { 'x-service-api-key': key ?? '' } });
    expect(await account.json()).toEqual({ handle: 'local', plan: 'premium', admin: true });
    // The demo data set is loaded and the metrics query has run: real rows within seconds.
    let metrics: { state?: string; result?: { rows: { avs_name: string; num_operators: number }[] } } = {};
    for (let i = 0; i < 100 && metrics.state !== 'QUERY_STATE_COMPLETED'; i++) {
      const response = await fetch(`${service.url}/v1/restaking/avs-stats?queryID=3693850&limit=5`, {
        headers: { 'x-service-api-key': key ?? '' },
      });
      metrics = (await response.json()) as typeof metrics;
      if (metrics.state !== 'QUERY_STATE_COMPLETED') await new Promise((r) => setTimeout(r, 100));
    }
    expect(metrics.state).toBe('QUERY_STATE_COMPLETED');
    expect(metrics.result?.rows).toHaveLength(5);
    expect(metrics.result?.rows.map((r) => r.avs_name)).toContain('EigenDA');
    service.process.kill('SIGINT');
    expect(await service.exited).toBe(0);

    const again = await spawnService(dataDir, { API_KEYS: '' });
    expect(again.output()).not.toContain('Created a local API key');
    await new Promise((r) => setTimeout(r, 200));
    expect(again.output()).toContain(`Local API key: ${key}`);
    again.process.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });

  it('shuts down cleanly on SIGTERM while a request is in flight', async () => {
    const dataDir = freshDir();
    const service = await spawnService(dataDir);
    const inFlight = fetch(`${service.url}/v1/tables`, {
      headers: { 'x-service-api-key': 'alice-free-key-0001' },
    });
    service.process.kill('SIGTERM');
    const response = await inFlight.catch(() => undefined);
    if (response) expect(response.status).toBe(200);
    expect(await service.exited).toBe(0);
    expect(service.output()).not.toMatch(/error/i);
  });

  it('refuses a bad configuration value with a clear message and exit code 2', async () => {
    for (const [env, message] of [
      [{ PORT: 'eighty' }, /PORT must be a whole number/],
      [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
      [{ API_KEYS: 'nohandle' }, /API_KEYS entry/],
      [{ RATE_LIMITS: 'gold:1/1' }, /RATE_LIMITS entry/],
      [{ PUBLIC_BASE_URL: 'ftp://x' }, /PUBLIC_BASE_URL must be an http or https URL/],
      [{ MAX_UPLOAD_BYTES: '-5' }, /MAX_UPLOAD_BYTES must be a whole number/],
      [{ AUTH_FAILURE_LIMIT: '0' }, /AUTH_FAILURE_LIMIT must be a whole number/],
      [
        { DUCKDB_MEMORY_LIMIT: 'lots' },
        /DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 4GB, got "lots"/,
      ],
      [{ DUCKDB_MEMORY_LIMIT: '2GB; DROP TABLE x' }, /DUCKDB_MEMORY_LIMIT must be a size/],
    ] as const) {
      const { code, output } = await exitOf(['serve'], { DATA_DIR: freshDir(), ...env });
      expect(code).toBe(2);
      expect(output).toMatch(message);
    }
  });

  it("passes DUCKDB_MEMORY_LIMIT to DuckDB's memory_limit", async () => {
    const memoryLimit = async (env: Record<string, string>) => {
      const service = await startTestService(env, freshDir());
      try {
        const [row] = await service.database.read((session) =>
          session.all<{ limit: string }>("SELECT current_setting('memory_limit') AS limit"),
        );
        return row?.limit;
      } finally {
        await service.stop();
      }
    };
    expect(await memoryLimit({ DUCKDB_MEMORY_LIMIT: '512MB' })).toBe('488.2 MiB');
    expect(await memoryLimit({ DUCKDB_MEMORY_LIMIT: '1GiB' })).toBe('1.0 GiB');
    // Unset: DuckDB's own default, a share of the machine's memory.
    expect(await memoryLimit({})).toMatch(/^\d+(\.\d+)? GiB$/);
  });

  it('refuses an unknown flag with exit code 2', async () => {
    const { code, output } = await exitOf(['serve', '--no-such-flag']);
    expect(code).toBe(2);
    expect(output).toMatch(/unknown option/);
  });

  it('refuses to start when another process holds the database', async () => {
    const dataDir = freshDir();
    const first = await spawnService(dataDir);
    const { code, output } = await exitOf(['serve'], { DATA_DIR: dataDir, PORT: '0' });
    expect(code).toBe(3);
    expect(output).toMatch(/already in use/);
    first.process.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });
});
