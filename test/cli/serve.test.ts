import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnService } from '../support/child-service.js';
import { tempDir } from '../support/service.js';

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
  // 'close', not 'exit': the output may still be in the pipes when the process has exited.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}

describe('serve', () => {
  it('on a first start with no key anywhere, creates and prints a local key that works', async () => {
    const dataDir = freshDir();
    const service = await spawnService(dataDir, { API_KEYS: '', DEMO_DATA: 'on' });
    await new Promise((r) => setTimeout(r, 200));
    // The start-up lines end with the key, alone on its line.
    const startup = service.output().split('\n');
    const created = startup.findIndex((line) =>
      line.startsWith('Created a local API key (handle "local", premium, admin), saved in'),
    );
    expect(created).toBeGreaterThan(startup.findIndex((line) => line.startsWith('Workspace: ')));
    expect(startup[created]).toMatch(/; send it in the X-Service-Api-Key header:$/);
    const key = startup[created + 2];
    expect(key).toMatch(/^sk_\S+$/);
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
    expect(again.output()).toMatch(
      new RegExp(`The local API key \\(handle "local", premium, admin\\), from .*\\n.*\\n${key}\\n`),
    );
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

  it('on a taken port, says so and how to choose another, with exit code 4', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const { code, output } = await exitOf(['serve', '--port', String(port)], { DATA_DIR: freshDir() });
      expect(code).toBe(4);
      expect(output).toContain(
        `error: port ${port} on 127.0.0.1 is already in use by another program (another server?); choose another with --port 9000 or PORT=9000 (0 takes any free port)`,
      );
    } finally {
      taken.close();
    }
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
