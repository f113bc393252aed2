import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The workspace's transform layer in a real headless Chromium: materializing a saved query on a
 * schedule, the Views list with its refresh, a pipeline's progress, and the History tab
 * (re-open a result, run its SQL again), each checked against the API.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/workspace-transform');

let service: TestService;
let browser: Browser;
let page: Page;
let daily = 0;
const pageProblems: string[] = [];

const textOf = (locator: Locator) => expect.poll(() => locator.textContent(), { timeout: 15_000 });
const visibility = (locator: Locator) => expect.poll(() => locator.isVisible(), { timeout: 15_000 });
const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
const setHash = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
const editorText = async () =>
  (await page.locator('.cm-placeholder').count()) > 0
    ? ''
    : (await page.locator('.cm-line').allTextContents()).join('\n');
/** The grid's cells of one column, by header name, as text. */
async function gridColumn(name: string): Promise<string[]> {
  const headers = await page.locator('#grid-container thead th').allTextContents();
  const index = headers.findIndex((text) => text.startsWith(name));
  return page.locator(`#grid-container tbody tr td:nth-child(${index + 1})`).allTextContents();
}

async function createQuery(name: string, sql: string): Promise<number> {
  const answer = await service.json<{ query_id: number }>('/v1/query', {
    method: 'POST',
    key: KEYS.bob,
    body: JSON.stringify({ name, query_sql: sql }),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.query_id;
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it`);
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  service = await startTestService();
  const upload = await service.json('/v1/table/upload/csv', {
    ...uploadBody({ table_name: 'events', data: 'day,amount\n2024-01-01,1\n2024-01-01,2\n2024-01-02,5\n' }),
    key: KEYS.bob,
  });
  expect(upload.status).toBe(200);
  daily = await createQuery(
    'Daily totals',
    'SELECT day, sum(amount) AS total FROM dataset_events GROUP BY day ORDER BY day',
  );
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('pageerror', (error) => pageProblems.push(error.message));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) pageProblems.push(message.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('the workspace: views, pipelines, history', () => {
  it('materializes a saved query on a schedule, refusing a schedule too frequent with the service’s words', async () => {
    await page.goto(`${service.url}/`);
    await page.getByLabel('API key', { exact: true }).fill(KEYS.bob);
    await page.keyboard.press('Enter');
    await textOf(page.locator('#signed-in')).toBe('bob · premium');
    await setHash(`query=${daily}`);
    await textOf(page.locator('#editor-heading')).toBe('Daily totals');
    await page.getByRole('button', { name: 'Materialize on a schedule…' }).click();
    const dialog = page.locator('#materialize-dialog');
    await visibility(dialog).toBe(true);
    expect(await dialog.getByLabel('Table name').inputValue()).toBe('result_daily_totals');
    await dialog.getByLabel('Schedule (cron, UTC)').fill('*/5 * * * *');
    await dialog.getByRole('button', { name: 'Materialize' }).click();
    await textOf(page.locator('#materialize-error')).toMatch(/shortest interval allowed is 15 minutes/);
    await shot('01-materialize-refused');
    await dialog.getByLabel('Schedule (cron, UTC)').fill('0 * * * *');
    await dialog.getByRole('button', { name: 'Materialize' }).click();
    await visibility(dialog).toBe(false);
    await textOf(page.locator('#run-status')).toBe(
      'Materialized as dune.bob.result_daily_totals: its first refresh runs now.',
    );
    const view = await service.json<Record<string, unknown>>('/v1/materialized-views/result_daily_totals', {
      key: KEYS.bob,
    });
    expect(view.body).toMatchObject({ query_id: daily, cron_expression: '0 * * * *', is_private: false });
  });

  it('lists the views with schedule, last refresh and next run, and refreshes one now', async () => {
    await visibility(page.locator('#views-panel')).toBe(true);
    const item = page.locator('#view-list li').first();
    await textOf(item.locator('.view-name')).toBe('dune.bob.result_daily_totals');
    await textOf(item).toMatch(/query #\d+ · schedule 0 \* \* \* \* · /);
    await textOf(item).toMatch(/next run \d{4}-\d\d-\d\d \d\d:00 UTC/);
    await page.getByRole('button', { name: 'Refresh dune.bob.result_daily_totals now' }).click();
    await textOf(page.locator('#run-status')).toBe('Refreshed dune.bob.result_daily_totals.');
    const view = (
      await service.json<{ last_refreshed_at: string }>('/v1/materialized-views/result_daily_totals', {
        key: KEYS.bob,
      })
    ).body;
    const shown = view.last_refreshed_at.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
    await textOf(page.locator('#view-list li .view-times').first()).toBe(`last refresh ${shown}`);
    await textOf(page.locator('#view-list li').first()).toMatch(/· 2 rows/);
    await shot('02-views');
  });

  it('runs a query’s pipeline, showing each node as it progresses, then its result', async () => {
    const top = await createQuery('Grand total', 'SELECT sum(total) AS grand FROM result_daily_totals');
    await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'events', data: 'day,amount\n2024-01-03,40\n' }),
      key: KEYS.bob,
    });
    await setHash(`query=${top}`);
    await textOf(page.locator('#editor-heading')).toBe('Grand total');
    await page.getByRole('button', { name: 'Run pipeline' }).click();
    await textOf(page.locator('#pipeline-summary')).toBe('Pipeline completed: 2 of 2 nodes completed');
    expect(await page.locator('#pipeline-nodes li').allTextContents()).toEqual([
      '1. refresh dune.bob.result_daily_totals — completed',
      `2. run query #${top} after 1 — completed`,
    ]);
    await textOf(page.locator('#run-status')).toBe('Pipeline completed.');
    // The view took the new rows before the query read it.
    await expect.poll(() => gridColumn('grand'), { timeout: 15_000 }).toEqual(['40']);
    await shot('03-pipeline');
  });

  it('shows the history, opens a result from it, and runs an ad-hoc query’s SQL again', async () => {
    const sql = "SELECT 'again' AS word, 7 AS n";
    const run = await service.json<{ execution_id: string }>('/v1/sql/execute', {
      method: 'POST',
      key: KEYS.bob,
      body: JSON.stringify({ sql }),
    });
    for (;;) {
      const status = await service.json<{ is_execution_finished: boolean }>(
        `/v1/execution/${run.body.execution_id}/status`,
        { key: KEYS.bob },
      );
      if (status.body.is_execution_finished) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await page.getByRole('tab', { name: 'History' }).click();
    const first = page.locator('#history-list li').first();
    await textOf(first.locator('.history-title')).toBe(sql);
    await textOf(first).toMatch(/completed \d{4}-\d\d-\d\d \d\d:\d\d UTC · 1 row/);
    const total = (await service.json<{ total: number }>('/v1/executions', { key: KEYS.bob })).body.total;
    await textOf(page.locator('#history-status')).toBe(`${total} executions`);
    await shot('04-history');
    await first.getByRole('button', { name: 'Open result' }).click();
    await textOf(page.locator('#results-meta')).toMatch(/^1 row · 2 columns/);
    expect(await gridColumn('word')).toEqual(['again']);
    expect(page.url()).toContain(`#execution=${run.body.execution_id}`);
    await first.getByRole('button', { name: 'Run again' }).click();
    await expect.poll(editorText, { timeout: 15_000 }).toBe(sql);
    await textOf(page.locator('#run-status')).toMatch(/^Completed in /);
    const after = await service.json<{ executions: { execution_id: string; query_sql?: string }[] }>(
      '/v1/executions?limit=1',
      { key: KEYS.bob },
    );
    expect(after.body.executions[0]?.execution_id).not.toBe(run.body.execution_id);
    expect(after.body.executions[0]?.query_sql).toBe(sql);
    // Saved queries' runs open their query.
    const saved = page.locator('#history-list li', { hasText: 'Grand total' }).first();
    await page.getByRole('tab', { name: 'History' }).click();
    await saved.getByRole('button', { name: 'Open query' }).click();
    await textOf(page.locator('#editor-heading')).toBe('Grand total');
    expect(pageProblems).toEqual([]);
  });
});
