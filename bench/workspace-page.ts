import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { bundleWebPages } from '../src/packaging/web-assets.js';
import { type BenchRow, median } from './bench-table.js';
import { startServiceProcess } from './processes.js';

/**
 * The workspace page (issue 15) in Debian's headless Chromium against the service on
 * loopback. Targets: the first load of the page with all its files under 1 MB compressed and
 * under 300 ms; a 10,000-row result's first page rendered within 100 ms of its arrival
 * (from the first byte of the answer to the grid laid out: reading and parsing the JSON,
 * building the rows, layout; as the page itself measures it, 'results-rendered'). The data settings page, plain files without a
 * bundle, is the baseline of the first load.
 */

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'bench-key-00000001';
const RUNS = 7;
const QUERY_ID = 1201;
const TEN_THOUSAND_ROWS = `-- id: ${QUERY_ID}
-- name: Ten thousand rows
-- description: For the workspace benchmark: a 10,000-row result of mixed types.
-- refresh_seconds: 86400
SELECT range AS id, 'row ' || range AS label, range * 1.5 AS amount,
  DATE '2024-01-01' + CAST(range % 365 AS INTEGER) AS day, range % 7 = 0 AS flag,
  range * 1000000000000 AS big
FROM range(10000) ORDER BY id
`;

interface Load {
  ms: number;
  bytes: number;
  files: number;
}

/** A first visit: an empty cache, the page and every file it loads, until the load event. */
async function firstLoad(browser: Browser, url: string, ready: string): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForSelector(ready, { state: 'visible' });
    // Browser code, as text: this file is compiled without the DOM's types.
    return (await page.evaluate(`(() => {
      const navigation = performance.getEntriesByType('navigation')[0];
      const resources = performance.getEntriesByType('resource');
      // transferSize: bytes on the wire, compressed, headers included.
      const bytes = navigation.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0);
      return { ms: navigation.loadEventEnd - navigation.startTime, bytes, files: resources.length + 1 };
    })()`)) as Load;
  } finally {
    await context.close();
  }
}

async function waitForExecution(url: string, executionId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const response = await fetch(`${url}/v1/execution/${executionId}/status`, {
      headers: { 'x-service-api-key': KEY },
    });
    const body = (await response.json()) as { state: string };
    if (body.state === 'QUERY_STATE_COMPLETED') return;
    if (body.state !== 'QUERY_STATE_PENDING' && body.state !== 'QUERY_STATE_EXECUTING')
      throw new Error(`the benchmark query ended in ${body.state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the benchmark query did not finish');
}

/** Durations of the page's own 'results-rendered' measure over RUNS loads of the first page. */
async function firstPageRenders(page: Page, executionId: string, pageSize: number): Promise<number[]> {
  const durations: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    await page.evaluate(`performance.clearMeasures('results-rendered'); location.hash = ''`);
    await page.evaluate(`location.hash = ${JSON.stringify(`execution=${executionId}`)}`);
    await page.waitForFunction(() => performance.getEntriesByName('results-rendered').length > 0);
    if ((await page.locator('#page-size').inputValue()) !== String(pageSize)) {
      await page.evaluate(() => performance.clearMeasures('results-rendered'));
      await page.locator('#page-size').selectOption(String(pageSize));
      await page.waitForFunction(() => performance.getEntriesByName('results-rendered').length > 0);
    }
    const rows = await page.locator('#grid-container tbody tr').count();
    if (rows !== pageSize) throw new Error(`the first page shows ${rows} rows, not ${pageSize}`);
    durations.push(
      Number(await page.evaluate(`performance.getEntriesByName('results-rendered')[0].duration`)),
    );
  }
  return durations;
}

export async function runWorkspaceBenchmark(): Promise<BenchRow[]> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium`);
  const rows: BenchRow[] = [];

  // Bundling as at a first start without the cache (in this process, so the cache is untouched).
  const bundles: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await bundleWebPages();
    bundles.push(performance.now() - started);
  }
  rows.push({
    benchmark: 'workspace',
    case: 'bundle the page (esbuild, no cache)',
    value: median(bundles),
    unit: 'ms',
    note: 'once per source change: later starts read node_modules/.cache',
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-workspace-'));
  const queries = path.join(dir, 'queries');
  fs.mkdirSync(queries);
  fs.writeFileSync(path.join(queries, `${QUERY_ID}-ten-thousand.sql`), TEN_THOUSAND_ROWS);
  const service = await startServiceProcess(path.join(dir, 'data'), {
    API_KEYS: `${KEY}=bench:premium`,
    DEMO_DATA: 'off',
    QUERIES_DIR: queries,
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    // The server bundles (or reads its cache) in the background at start: wait for it.
    await fetch(`${service.url}/`);
    const workspace: Load[] = [];
    const settings: Load[] = [];
    for (let run = 0; run < RUNS; run++) {
      workspace.push(await firstLoad(browser, `${service.url}/`, '#api-key'));
      settings.push(await firstLoad(browser, `${service.url}/settings/data`, '#api-key'));
    }
    const ms = median(workspace.map((l) => l.ms));
    const settingsMs = median(settings.map((l) => l.ms));
    const bytes = median(workspace.map((l) => l.bytes));
    rows.push({
      benchmark: 'workspace',
      case: `first load, empty cache (${workspace[0]?.files} files)`,
      value: ms,
      unit: 'ms',
      baseline: { name: 'data settings page', value: settingsMs },
      ratio: ms / settingsMs,
      target: '< 300 ms',
      note: `runs ${workspace.map((l) => l.ms.toFixed(0)).join(', ')} ms`,
    });
    rows.push({
      benchmark: 'workspace',
      case: 'first load, bytes on the wire (brotli)',
      value: bytes / 1000,
      unit: 'kB',
      baseline: { name: 'data settings page', value: median(settings.map((l) => l.bytes)) / 1000 },
      target: '< 1000 kB',
    });

    const submitted = await fetch(`${service.url}/v1/query/${QUERY_ID}/execute`, {
      method: 'POST',
      headers: { 'x-service-api-key': KEY },
    });
    const { execution_id: executionId } = (await submitted.json()) as { execution_id: string };
    await waitForExecution(service.url, executionId);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${service.url}/`);
    await page.locator('#api-key').fill(KEY);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#workspace', { state: 'visible' });
    for (const pageSize of [100, 1000]) {
      const durations = await firstPageRenders(page, executionId, pageSize);
      rows.push({
        benchmark: 'workspace',
        case: `10,000-row result: first page of ${pageSize} rows rendered`,
        value: median(durations),
        unit: 'ms',
        target: pageSize === 100 ? '< 100 ms (the default page)' : undefined,
        note: `max ${Math.max(...durations).toFixed(1)} ms over ${RUNS} runs; from the answer's arrival to the grid laid out`,
      });
    }
    await context.close();
  } finally {
    await browser.close();
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { renderTable } = await import('./bench-table.js');
  console.log(renderTable(await runWorkspaceBenchmark()));
}
