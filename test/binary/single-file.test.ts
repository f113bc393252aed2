import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };

/**
 * The single executable file, as a data team would use it: built with `npm run build:binary`
 * (here into a temporary directory, so a developer's dist/ is left alone), copied alone into
 * an empty directory, run there with nothing else: no node_modules, no source tree, a
 * minimal environment and an empty cache for the native library.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const BUILD_TIMEOUT_MS = 240_000;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'single-file-'));
const runDir = path.join(scratch, 'run');
const cacheDir = path.join(scratch, 'cache');
let binary = '';
let buildOutput = '';

const children = new Set<ChildProcess>();
afterAll(() => {
  // Whatever a failed test left running, then the files.
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});

beforeAll(async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'scripts/build-binary.ts', '--out', path.join(scratch, 'dist')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.on('data', (c) => {
    buildOutput += c;
  });
  child.stderr.on('data', (c) => {
    buildOutput += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`build:binary failed (${code}):\n${buildOutput}`);
  const built = buildOutput.trim().split('\n').at(-1) ?? '';
  fs.mkdirSync(runDir);
  binary = path.join(runDir, path.basename(built));
  fs.copyFileSync(built, binary);
  fs.chmodSync(binary, 0o755);
}, BUILD_TIMEOUT_MS);

/** Only what a bare machine has; in particular no NODE_OPTIONS, NODE_PATH or npm variables. */
function bareEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: '/usr/bin:/bin', HOME: scratch, XDG_CACHE_HOME: cacheDir, LOG_LEVEL: 'warn', ...extra };
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}

function start(args: string[], extra: Record<string, string> = {}): Run {
  const child = spawn(binary, args, {
    cwd: runDir,
    env: bareEnvironment(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => {
    output += c;
  });
  child.stderr?.on('data', (c) => {
    output += c;
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, output: () => output, exited };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the single executable file', () => {
  it('is one file whose build printed its path last', () => {
    expect(buildOutput.trim().split('\n').at(-1)).toMatch(/dist\/restaking-data-service$/);
    expect(fs.readdirSync(runDir)).toEqual([path.basename(binary)]);
  });

  it('answers --version and --help', async () => {
    const version = start(['--version']);
    expect(await version.exited).toBe(0);
    expect(version.output().trim()).toBe(packageJson.version);
    const help = start(['refresh', '--help']);
    expect(await help.exited).toBe(0);
    expect(help.output()).toContain('run the saved queries once and exit');
  });

  it('serves from an empty directory: demo data, the metrics, uploads, the settings page and the workspace; stops on SIGTERM', async () => {
    const service = start([], { PORT: '0' });
    const url = await waitFor(
      'the start-up line',
      () => /Serving on (http:\/\/\S+)/.exec(service.output())?.[1],
    );
    expect(service.output()).toContain(`(data directory ${path.join(runDir, 'data')}; keys: 1 in `);
    expect(service.output()).toContain('saved queries: 3693850 (AVS metrics))');
    await waitFor('/health', async () => ((await fetch(`${url}/health`)).ok ? true : undefined));
    const key = fs.readFileSync(path.join(runDir, 'data', 'dev-api-key.txt'), 'utf8').trim();
    const headers = { 'x-service-api-key': key };

    const metrics = await waitFor('the metrics', async () => {
      const response = await fetch(`${url}/v1/restaking/avs-stats?queryID=3693850&limit=3`, { headers });
      const body = (await response.json()) as {
        state: string;
        result?: { rows: Record<string, unknown>[]; metadata: { total_row_count: number } };
      };
      return body.state === 'QUERY_STATE_COMPLETED' ? body : undefined;
    });
    expect(metrics.result?.metadata.total_row_count).toBe(40);
    expect(metrics.result?.rows).toHaveLength(3);
    expect(metrics.result?.rows[0]).toMatchObject({
      avs_name: expect.any(String),
      total_TVL: expect.any(Number),
    });

    const uploaded = await fetch(`${url}/v1/table/upload/csv`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: 'prices', data: 'day,token,price\n2024-01-01,stETH,2301.5\n' }),
    });
    expect(await uploaded.json()).toMatchObject({
      success: true,
      table_name: 'dataset_prices',
      row_count: 1,
    });
    const tables = (await (await fetch(`${url}/v1/tables`, { headers })).json()) as {
      tables: { full_name: string; row_count: number }[];
    };
    expect(tables.tables).toContainEqual(
      expect.objectContaining({ full_name: 'local.dataset_prices', row_count: 1 }),
    );

    // Users' SQL, checked on the sandbox's worker thread, which runs the bundle embedded for it.
    const sql = (text: string) =>
      fetch(`${url}/v1/sql/execute`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ sql: text }),
      });
    const refused = await sql('SELECT price FROM dataset_nothing');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: 'table dataset_nothing does not exist at position 18' });
    const accepted = (await (await sql('SELECT price FROM dataset_prices')).json()) as {
      execution_id: string;
    };
    const result = await waitFor('the execution', async () => {
      const response = await fetch(`${url}/v1/execution/${accepted.execution_id}/results`, { headers });
      const body = (await response.json()) as { state: string; result?: { rows: unknown[] } };
      return body.state === 'QUERY_STATE_COMPLETED' ? body : undefined;
    });
    expect(result.result?.rows).toEqual([{ price: 2301.5 }]);

    // The pages: the bundle made at build time. The data page's files and the workspace's
    // share one script (chunk-…), and the workspace's imports the chart's when a chart is first drawn.
    const filesOf = async (pagePath: string) => {
      const page = await fetch(`${url}${pagePath}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      return [...(await page.text()).matchAll(/\/assets\/([\w.-]+)/g)].map((m) => m[1] as string);
    };
    const unhashed = (names: string[]) =>
      names.map((name) => name.replace(/-([0-9a-f]{12}|[A-Z0-9]{8})\./, '.')).sort();
    const settings = await filesOf('/settings/data');
    expect(unhashed(settings)).toEqual(['chunk.js', 'settings.css', 'settings.js']);
    const assets = await filesOf('/');
    expect(unhashed(assets)).toEqual([
      'chunk.js',
      'favicon.svg',
      'licenses.txt',
      'workspace.css',
      'workspace.js',
    ]);
    const script = await (
      await fetch(`${url}/assets/${assets.find((n) => n.startsWith('workspace-') && n.endsWith('.js'))}`)
    ).text();
    const chart = [...new Set(script.match(/chart-library-[A-Z0-9]{8}\.js/g))];
    expect(chart).toHaveLength(1);
    for (const name of [...settings, ...assets, ...chart]) {
      const response = await fetch(`${url}/assets/${name}`);
      expect(response.status, name).toBe(200);
      expect((await response.arrayBuffer()).byteLength, name).toBeGreaterThan(100);
    }

    const held = start(['refresh']);
    expect(await held.exited).toBe(3);

    const signalled = performance.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(5_000);
    expect(fs.readdirSync(runDir).sort()).toEqual(['data', path.basename(binary)]);
  });

  it('runs its commands on the data it left: refresh, then serve again with the upload kept', async () => {
    const refresh = start(['refresh']);
    expect(await refresh.exited).toBe(0);
    expect(refresh.output()).toMatch(/^3693850 \(AVS metrics\): completed, 40 rows/);

    const service = start(['serve', '--port', '0']);
    const url = await waitFor(
      'the start-up line',
      () => /Serving on (http:\/\/\S+)/.exec(service.output())?.[1],
    );
    expect(service.output()).not.toContain('Created a local API key');
    const key = fs.readFileSync(path.join(runDir, 'data', 'dev-api-key.txt'), 'utf8').trim();
    const tables = (await (
      await fetch(`${url}/v1/tables`, { headers: { 'x-service-api-key': key } })
    ).json()) as {
      tables: { full_name: string }[];
    };
    expect(tables.tables.map((t) => t.full_name)).toContain('local.dataset_prices');
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(0);
  });
});
