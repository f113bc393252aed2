import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvRowExpression } from '../../src/executions/row-rendering.js';
import { createQuery } from '../queries/support/queries.js';
import { type Envelope, executeAndWait } from '../support/results.js';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The workspace page at / in a real headless Chromium (Debian's, driven by playwright-core):
 * what a data team does with it, checked against the API. One browser for the file; each
 * state is saved as a screenshot in test-artifacts/workspace/ (git-ignored) to look at.
 */

const CHROMIUM = '/usr/bin/chromium';
const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/workspace');
/** 2^63 + 1: exact only if the page shows the API's string digit for digit. */
const BIG = '9223372036854775809';

let service: TestService;
let browser: Browser;
let page: Page;
let numbers: Envelope;
let types: Envelope;
/** Content security policy refusals and uncaught exceptions, of the whole session. */
const pageProblems: string[] = [];

function numbersCsv(count: number): string {
  const lines = ['n,sq,label,big'];
  for (let i = 1; i <= count; i++) lines.push(`${i},${i * i},item ${i % 5},${i === 3 ? BIG : i}`);
  return `${lines.join('\n')}\n`;
}

async function upload(key: string, fields: Record<string, unknown>): Promise<void> {
  const { status, body } = await service.json('/v1/table/upload/csv', { ...uploadBody(fields), key });
  expect(status, JSON.stringify(body)).toBe(200);
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it (apt-get install chromium)`);
  }
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  service = await startTestService({ QUERIES_DIR });
  await upload(KEYS.alice, { table_name: 'numbers', data: numbersCsv(250), description: 'one to 250' });
  await upload(KEYS.alice, {
    table_name: 'prices',
    data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-01,rETH,2512.25\n',
  });
  await upload(KEYS.bob, { table_name: 'bobs_public', data: 'x,y\n1,2\n' });
  await upload(KEYS.bob, { table_name: 'bobs_secret', data: 'x\n1\n', is_private: true });
  numbers = await executeAndWait(service, 1001);
  types = await executeAndWait(service, 1003);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) pageProblems.push(message.text());
  });
  page.on('pageerror', (error) => pageProblems.push(error.message));
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

/** playwright-core has no assertions of its own: vitest polls until the page settles. */
const textOf = (locator: Locator) => expect.poll(() => locator.textContent(), { timeout: 15_000 });
const isFocused = (element: unknown) => {
  const node = element as { getRootNode(): { activeElement: unknown } };
  return node.getRootNode().activeElement === node;
};
const focus = (locator: Locator) => expect.poll(() => locator.evaluate(isFocused), { timeout: 15_000 });
const visibility = (locator: Locator) => expect.poll(() => locator.isVisible(), { timeout: 15_000 });
const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

/** The editor's text, line by line (an empty editor shows a placeholder, which is not text). */
const editorText = async () =>
  (await page.locator('.cm-placeholder').count()) > 0
    ? ''
    : (await page.locator('.cm-line').allTextContents()).join('\n');
const gridRows = () => page.locator('#grid-container tbody tr');
/** The grid's cells of one column, by header name, as text. */
async function columnValues(name: string): Promise<string[]> {
  const headers = await page.locator('#grid-container thead th').allTextContents();
  const index = headers.findIndex((text) => text.startsWith(name));
  return page.locator(`#grid-container tbody tr td:nth-child(${index + 1})`).allTextContents();
}
const status = () => page.locator('#run-status');

/** Navigates within the page: the hash names what to show (`execution=ID`, `query=ID`). */
const setHash = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);

async function showExecution(executionId: string): Promise<void> {
  await setHash(`execution=${executionId}`);
  await textOf(page.locator('#results-meta')).toMatch(/rows?/);
}

describe('the workspace page', () => {
  it('is served with a strict policy; its files have hashed names, are kept for good and compressed', async () => {
    const response = await fetch(`${service.url}/`, { headers: { 'accept-encoding': 'br' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);
    const assets = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((m) => m[1] as string);
    expect(assets).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^workspace-[A-Z0-9]{8}\.js$/),
        expect.stringMatching(/^workspace-[A-Z0-9]{8}\.css$/),
        expect.stringMatching(/^licenses-[0-9a-f]{12}\.txt$/),
      ]),
    );
    const script = assets.find((name) => name.endsWith('.js')) as string;
    const plain = await fetch(`${service.url}/assets/${script}`, {
      headers: { 'accept-encoding': 'identity' },
    });
    const plainBytes = (await plain.arrayBuffer()).byteLength;
    const gzip = await fetch(`${service.url}/assets/${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(gzip.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(gzip.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(gzip.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(plain.headers.get('content-encoding')).toBeNull();
    // fetch decodes; the decoded file is the plain one.
    expect((await gzip.arrayBuffer()).byteLength).toBe(plainBytes);
    const licenses = await (
      await fetch(`${service.url}/assets/${assets.find((n) => n.startsWith('licenses'))}`)
    ).text();
    expect(licenses).toMatch(/@codemirror\/view [\d.]+ \(MIT\)/);
    expect(licenses).toMatch(/@observablehq\/plot [\d.]+ \(ISC\)/);
    for (const missing of ['/assets/nothing.js', '/assets/index.html', '/assets/workspace.js']) {
      const answer = await fetch(`${service.url}${missing}`);
      expect(answer.status, missing).toBe(404);
      expect(await answer.json()).toEqual({ error: expect.stringContaining('no such path') });
    }
  });

  it('asks for the key, then lists the caller’s and public tables, filtered by name', async () => {
    await page.goto(`${service.url}/`);
    await visibility(page.getByLabel('API key', { exact: true })).toBe(true);
    await shot('01-key');
    await page.getByLabel('API key', { exact: true }).fill(KEYS.alice);
    await page.keyboard.press('Enter');
    await textOf(page.locator('#signed-in')).toBe('alice · free');
    await textOf(page.locator('#tables-status')).toBe('3 tables');
    const names = page.locator('#table-list .table-name');
    // Her own first, then other accounts' public ones; never bob's private table.
    expect(await names.allTextContents()).toEqual([
      'alice.dataset_numbers',
      'alice.dataset_prices',
      'bob.dataset_bobs_public',
    ]);
    const facts = await page.locator('#table-list .table-facts').allTextContents();
    expect(facts[0]).toMatch(/^250 rows · [\d.]+ kB$/);
    await page.getByRole('button', { name: 'Columns of alice.dataset_prices' }).click();
    const columns = page.locator('#table-list .column-list li');
    expect(await columns.allTextContents()).toEqual(['daydate', 'tokenvarchar', 'pricedouble']);
    await shot('02-tables');

    await page.getByLabel('Filter tables by name').fill('PRICE');
    await textOf(page.locator('#tables-status')).toBe('1 table of 3 match.');
    expect(await names.allTextContents()).toEqual(['alice.dataset_prices']);
    // Choosing the table fills an empty editor with a query over it; a column goes at the cursor.
    await names.first().click();
    await expect.poll(editorText).toBe('SELECT *\nFROM alice.dataset_prices\nLIMIT 100');
    await page.getByRole('button', { name: 'price', exact: true }).click();
    await expect.poll(editorText).toBe('SELECT *\nFROM alice.dataset_prices\nLIMIT 100price');
    await page.getByLabel('Filter tables by name').fill('');
    await textOf(page.locator('#tables-status')).toBe('3 tables');
  });

  it('shows a result’s rows exactly as the API renders them, paged with next_uri', async () => {
    await showExecution(types.execution_id);
    const api = await service.json<Envelope>(`/v1/execution/${types.execution_id}/results`);
    const rows = api.body.result?.rows ?? [];
    expect(await gridRows().count()).toBe(rows.length);
    for (const name of [
      'unsafe_big',
      'nan',
      'inf',
      'dec_wide',
      'ts',
      'bin',
      'huge',
      'list',
      'struct',
      'maybe',
    ]) {
      const expected = rows.map((row) => {
        const value = row[name];
        if (value === null) return 'NULL';
        return typeof value === 'object' ? JSON.stringify(value) : String(value);
      });
      expect(await columnValues(name), name).toEqual(expected);
    }
    expect(await columnValues('unsafe_big')).toEqual(['9007199254740993', '-9007199254740993']);
    await shot('03-types');

    await showExecution(numbers.execution_id);
    await textOf(page.locator('#results-meta')).toMatch(/^250 rows · 4 columns · ran in \d+ ms$/);
    expect(await gridRows().count()).toBe(100);
    expect((await columnValues('big')).slice(0, 4)).toEqual(['1', '2', BIG, '4']);
    await textOf(page.locator('.page-position')).toBe('Rows 1–100 of 250');
    await page.getByRole('button', { name: 'Next page' }).click();
    await textOf(page.locator('.page-position')).toBe('Rows 101–200 of 250');
    expect((await columnValues('n'))[0]).toBe('101');
    await page.getByRole('button', { name: 'Last page' }).click();
    await textOf(page.locator('.page-position')).toBe('Rows 201–250 of 250');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'First page' }).click();
    await textOf(page.locator('.page-position')).toBe('Rows 1–100 of 250');
    await shot('04-grid');
  });

  it('sorts by a column header and filters with the filter language, showing its errors', async () => {
    const header = page.locator('#grid-container th', { has: page.locator('button[data-column="sq"]') });
    await page.locator('button[data-column="sq"]').click();
    await expect.poll(() => header.getAttribute('aria-sort')).toBe('ascending');
    await page.locator('button[data-column="sq"]').click();
    await expect.poll(() => header.getAttribute('aria-sort')).toBe('descending');
    await expect
      .poll(async () => (await columnValues('sq')).slice(0, 3))
      .toEqual(['62500', '62001', '61504']);
    await shot('05-sorted');

    const filter = page.getByLabel('Filter rows');
    await filter.fill("label = 'item 2' AND n < 30");
    await filter.press('Enter');
    await textOf(page.locator('#results-meta')).toMatch(/^6 of 250 rows match · 4 columns/);
    // Still sorted, descending.
    await expect.poll(() => columnValues('n')).toEqual(['27', '22', '17', '12', '7', '2']);
    await shot('06-filtered');

    await filter.fill("n > 'abc'");
    await filter.press('Enter');
    await textOf(page.locator('#filter-error')).toBe(
      "filters: expected a number for column n (bigint), found 'abc' at position 4",
    );
    await expect.poll(() => filter.getAttribute('aria-invalid')).toBe('true');
    // The box's text from the position on is selected, to be retyped.
    expect(
      await filter.evaluate((input) => (input as unknown as { selectionStart: number }).selectionStart),
    ).toBe(4);
    await shot('07-filter-error');
    await page.getByRole('button', { name: 'Clear' }).click();
    await textOf(page.locator('#results-meta')).toMatch(/^250 rows/);
    await textOf(page.locator('#filter-error')).toBe('');
  });

  it('draws line, bar and scatter charts with the expected marks', async () => {
    const filter = page.getByLabel('Filter rows');
    await filter.fill('n <= 12');
    await filter.press('Enter');
    await textOf(page.locator('#results-meta')).toMatch(/^12 of 250 rows match/);
    // The chart library is a file of its own, loaded when the first chart is drawn.
    const chartFileLoaded = () =>
      page.evaluate(
        `performance.getEntriesByType('resource').some((r) => /\\/assets\\/chart-library-/.test(r.name))`,
      );
    expect(await chartFileLoaded()).toBe(false);
    await page.getByRole('tab', { name: 'Chart' }).click();
    const chart = page.locator('#chart svg.chart');
    await visibility(chart).toBe(true);
    // x: the first column (n); y: the first other numeric column (sq).
    expect(await page.getByLabel('X', { exact: true }).inputValue()).toBe('n');
    expect(await page.getByRole('checkbox', { name: 'sq' }).isChecked()).toBe(true);
    const lines = page.locator('#chart g[aria-label="line"] path');
    await expect.poll(() => lines.count()).toBe(1);
    const length = await lines
      .first()
      .evaluate((p) => (p as unknown as { getTotalLength(): number }).getTotalLength());
    expect(length).toBeGreaterThan(100);
    expect(await chartFileLoaded()).toBe(true);
    await shot('08-line');

    await page.getByRole('checkbox', { name: 'big' }).check();
    await expect.poll(() => lines.count()).toBe(2);
    // A 2^63 value flattens the other series; still two lines and a legend.
    await expect.poll(() => page.locator('#chart .chart-swatch').allTextContents()).toEqual(['sq', 'big']);
    await page.getByRole('checkbox', { name: 'big' }).uncheck();

    await page.getByLabel('Chart type').selectOption('bar');
    const bars = page.locator('#chart g[aria-label="bar"] rect');
    await expect.poll(() => bars.count()).toBe(12);
    const heights = await bars.evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('height'))));
    expect(heights.every((height) => height >= 0)).toBe(true);
    expect(Math.max(...heights)).toBeGreaterThan(200);
    await shot('09-bar');

    await page.getByLabel('Chart type').selectOption('scatter');
    await page.getByRole('checkbox', { name: 'n' }).check();
    const dots = page.locator('#chart g[aria-label="dot"] circle');
    await expect.poll(() => dots.count()).toBe(24);
    await shot('10-scatter');
    await page.getByRole('tab', { name: 'Table', exact: true }).click();
  });

  it('downloads the rows as CSV and as Parquet; DuckDB reads the Parquet file back as the result', async () => {
    await page.getByRole('tab', { name: 'Table', exact: true }).click();
    const filter = page.getByLabel('Filter rows');
    await filter.fill('n > 240');
    await filter.press('Enter');
    await textOf(page.locator('#results-meta')).toMatch(/^10 of 250 rows match/);

    const [csv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'CSV' }).click(),
    ]);
    expect(csv.suggestedFilename()).toBe(`query-1001-${numbers.execution_id.toLowerCase()}.csv`);
    const csvText = fs.readFileSync(await csv.path(), 'utf8');
    // The grid's filters and sort (sq, descending, from the header clicks above) apply.
    const expectedCsv = await (
      await service.request(
        `/v1/execution/${numbers.execution_id}/results/csv?filters=${encodeURIComponent('n > 240')}&sort_by=${encodeURIComponent('sq DESC')}`,
      )
    ).text();
    expect(expectedCsv.split('\n')[1]).toBe('250,62500,item 0,250');
    expect(csvText).toBe(expectedCsv);
    expect(csvText.split('\n')[0]).toBe('n,sq,label,big');

    const [parquet] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Parquet' }).click(),
    ]);
    expect(parquet.suggestedFilename()).toBe(`query-1001-${numbers.execution_id.toLowerCase()}.parquet`);
    const file = path.join(ARTIFACTS, 'result.parquet');
    await parquet.saveAs(file);
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      const source = `read_parquet('${file.replaceAll("'", "''")}')`;
      const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
      const columns = described
        .getRowObjectsJS()
        .map((row) => ({ name: String(row.column_name), type: String(row.column_type).toLowerCase() }));
      const lines = await connection.runAndReadAll(
        `SELECT ${csvRowExpression(columns)} AS line FROM ${source}`,
      );
      const header = columns.map((c) => c.name).join(',');
      const parquetAsCsv = `${header}\n${lines
        .getRowObjectsJS()
        .map((row) => `${row.line}\n`)
        .join('')}`;
      expect(parquetAsCsv).toBe(expectedCsv);
    } finally {
      connection.closeSync();
    }
    await textOf(status()).toBe('Downloaded the result as Parquet.');
    await page.getByRole('button', { name: 'Clear' }).click();
  });

  it('follows an execution waiting in the queue, then a running one, and cancels each', async () => {
    // Two executions run at once; the scheduler's start-up run of the slow query holds one
    // place, the first run here the other, and the next ones wait in order.
    const submit = async () =>
      (
        await service.json<{ execution_id: string }>('/v1/query/1002/execute', {
          method: 'POST',
          key: KEYS.alice,
        })
      ).body.execution_id;
    const running = await submit();
    const other = await submit();
    const queued = await submit();
    const cancel = page.getByRole('button', { name: 'Cancel' });
    const stateOf = async (id: string) =>
      (await service.json<{ state: string }>(`/v1/execution/${id}/status`)).body.state;

    const { body: waiting } = await service.json<{ queue_position?: number }>(
      `/v1/execution/${queued}/status`,
    );
    expect(waiting.queue_position).toBeGreaterThan(0);
    await setHash(`execution=${queued}`);
    await textOf(status()).toMatch(
      new RegExp(`^Queued, position ${waiting.queue_position} · [\\d.]+ (ms|s)$`),
    );
    expect(await page.locator('#run').isDisabled()).toBe(true);
    await shot('11-queued');
    await cancel.click();
    await textOf(status()).toMatch(/^Cancelled after [\d.]+ (ms|s)\.$/);
    expect(await stateOf(queued)).toBe('QUERY_STATE_CANCELLED');

    await setHash(`execution=${running}`);
    await textOf(status()).toMatch(/^Running · [\d.]+ (ms|s)$/);
    await visibility(cancel).toBe(true);
    await shot('12-running');
    await cancel.click();
    await textOf(status()).toMatch(/^Cancelled after [\d.]+ (ms|s)\.$/);
    await visibility(cancel).toBe(false);
    expect(await page.locator('#run').isDisabled()).toBe(false);
    expect(await stateOf(running)).toBe('QUERY_STATE_CANCELLED');
    await service.json(`/v1/execution/${other}/cancel`, { method: 'POST', key: KEYS.alice });
  });

  it('runs SQL written with the keyboard (Ctrl+Enter) through /v1/sql/execute and shows its rows', async () => {
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await expect.poll(editorText).toBe('');
    // Choosing a table gives the empty editor a query over it, which runs as it is.
    await page.getByRole('button', { name: /^alice\.dataset_numbers$/ }).click();
    await page.keyboard.press('Control+Enter');
    await textOf(status()).toMatch(/^Completed in [\d.]+ (ms|s)\.$/);
    await textOf(page.locator('#results-meta')).toMatch(/^100 rows · 4 columns/);
    expect(page.url()).toMatch(/#execution=[0-9A-Z]{26}$/);

    // By keyboard: from the skip link to the editor, type, run.
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.getByRole('link', { name: 'Skip to the query editor' }).focus();
    await page.keyboard.press('Enter');
    await focus(page.getByRole('heading', { name: 'New query' })).toBe(true);
    for (let i = 0; i < 10 && !(await page.locator('.cm-content').evaluate(isFocused)); i++) {
      await page.keyboard.press('Tab');
    }
    await focus(page.locator('.cm-content')).toBe(true);
    await page.keyboard.insertText(
      'SELECT n, sq, big\nFROM alice.dataset_numbers\nWHERE n % 50 = 0 OR n = 3\nORDER BY n',
    );
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Enter');
    await textOf(status()).toMatch(/^Completed in /);
    await textOf(page.locator('#results-meta')).toMatch(/^6 rows · 3 columns · ran in \d+ ms$/);
    expect(await columnValues('n')).toEqual(['3', '50', '100', '150', '200', '250']);
    expect(await columnValues('big')).toEqual([BIG, '50', '100', '150', '200', '250']);
    const executionId = /#execution=(\w+)$/.exec(page.url())?.[1] as string;
    const api = await service.json<Envelope>(`/v1/execution/${executionId}/results`);
    expect(api.body.query_id).toBe(0);
    expect(api.body.result?.rows.map((row) => row.n)).toEqual([3, 50, 100, 150, 200, 250]);
    await shot('13-sql-run');
  });

  it('shows a refusal by the sandbox at its position, and a failed execution with DuckDB’s message', async () => {
    const replaceSql = async (sql: string) => {
      await page.locator('.cm-content').click();
      await page.keyboard.press('Control+a');
      await page.keyboard.press('Backspace');
      await page.keyboard.insertText(sql);
      await page.keyboard.press('Escape');
    };
    const error = page.locator('#run-error');
    await replaceSql('SELECT n\nFORM alice.dataset_numbers');
    await page.keyboard.press('Control+Enter');
    await textOf(error).toBe('The service refused this querysyntax error at or near "alice" at position 14');
    await textOf(status()).toBe('Not run.');
    // The spot is marked in the SQL, and the cursor put there.
    await textOf(page.locator('.cm-lintRange-error')).toBe('alice.dataset_numbers');
    expect(await page.locator('.cm-lint-marker-error').count()).toBe(1);
    expect(await page.locator('#results-empty').textContent()).toBe('No result: the query did not complete.');
    await shot('14-refused');

    await replaceSql("SELECT * FROM read_csv('/etc/passwd')");
    await page.keyboard.press('Control+Enter');
    await textOf(error).toMatch(
      /^The service refused this querytable function read_csv is not available in queries; .* at position 14$/,
    );
    await textOf(page.locator('.cm-lintRange-error')).toBe('read_csv');

    await replaceSql('SELECT CAST(label AS INTEGER) AS x FROM alice.dataset_numbers');
    await page.keyboard.press('Control+Enter');
    await textOf(status()).toMatch(/^Failed after [\d.]+ (ms|s)\.$/);
    await textOf(error).toMatch(
      /^The query failedConversion Error: Could not convert string 'item \d' to INT32/,
    );
    // DuckDB's message gives no position in the user's SQL: nothing is marked.
    expect(await page.locator('.cm-lintRange-error').count()).toBe(0);
    await shot('15-failed');
  });

  it('saves a query with a {{parameter}}, runs it with another value, opens it from the list, archives it', async () => {
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.insertText(
      'SELECT n, sq FROM alice.dataset_numbers\nWHERE n <= {{max n}}\nORDER BY n DESC',
    );
    await page.keyboard.press('Escape');
    const value = page.getByLabel('max n', { exact: true });
    await visibility(value).toBe(true);
    await page.getByLabel('Type of max n').selectOption('number');
    await value.fill('3');
    await textOf(page.locator('#run-label')).toBe('Save & run');
    await value.press('Control+Enter');

    const dialog = page.getByRole('dialog', { name: 'Save as a new query' });
    await visibility(dialog).toBe(true);
    // A free key cannot make a query private.
    expect(await dialog.getByLabel('Private').isDisabled()).toBe(true);
    await textOf(dialog.locator('#save-private-hint')).toBe('Private queries need a premium key.');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await textOf(dialog.locator('#save-error')).toBe('Give the query a name.');
    await dialog.getByLabel('Name', { exact: true }).fill('Top numbers');
    await dialog.getByLabel('Description').fill('The numbers up to a bound, largest first');
    await shot('16-save-dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await visibility(dialog).toBe(false);
    await textOf(status()).toMatch(/^Completed in /);
    await expect.poll(() => columnValues('n')).toEqual(['3', '2', '1']);
    await textOf(page.locator('#editor-heading')).toBe('Top numbers');
    const queryId = Number(/#query=(\d+)$/.exec(page.url())?.[1]);
    const saved = await service.json<Record<string, unknown>>(`/v1/query/${queryId}`);
    expect(saved.body).toMatchObject({
      name: 'Top numbers',
      description: 'The numbers up to a bound, largest first',
      query_sql: 'SELECT n, sq FROM alice.dataset_numbers\nWHERE n <= {{max n}}\nORDER BY n DESC',
      parameters: [{ key: 'max n', type: 'number', value: '3' }],
      is_private: false,
      owner: 'alice',
    });
    await textOf(page.locator('#query-facts')).toBe(`#${queryId}`);

    // Another value: the saved query runs again (no new save), with the value given.
    await value.fill('5');
    await textOf(page.locator('#run-label')).toBe('Run');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => columnValues('n')).toEqual(['5', '4', '3', '2', '1']);
    const five = await service.json<Envelope>(`/v1/query/${queryId}/results?params.max%20n=5`);
    expect(five.body.result?.rows.map((row) => row.n)).toEqual([5, 4, 3, 2, 1]);
    await shot('17-saved-run');

    // From the list: the saved SQL and its default value, and its latest result for that value.
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.getByRole('tab', { name: 'Saved queries' }).click();
    const item = page.locator('#query-list').getByRole('button', { name: 'Top numbers' });
    await textOf(page.locator('#query-list')).toBe(`Top numbers#${queryId} · 1 parameter`);
    await item.click();
    await textOf(page.locator('#editor-heading')).toBe('Top numbers');
    await expect
      .poll(editorText)
      .toBe('SELECT n, sq FROM alice.dataset_numbers\nWHERE n <= {{max n}}\nORDER BY n DESC');
    expect(await value.inputValue()).toBe('3');
    await expect.poll(() => columnValues('n')).toEqual(['3', '2', '1']);
    await shot('18-saved-list');

    await page.getByRole('button', { name: 'Archive' }).click();
    await textOf(page.locator('#query-facts')).toBe(`#${queryId} · archived`);
    expect((await service.json<{ is_archived: boolean }>(`/v1/query/${queryId}`)).body.is_archived).toBe(
      true,
    );
    await textOf(page.locator('#queries-status')).toBe('0 queries, 1 archived');
    await page.getByLabel('Show archived').check();
    await textOf(page.locator('#query-list')).toBe(`Top numbers#${queryId}archived · 1 parameter`);
    await page.getByRole('tab', { name: 'Tables' }).click();
  });

  it('is readable on a narrow window and keeps the key for the tab only', async () => {
    await showExecution(numbers.execution_id);
    await page.setViewportSize({ width: 420, height: 860 });
    // One column: nothing wider than the window but the grid, which scrolls inside itself.
    const overflow = () => page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot('19-narrow');
    // A saved query shows every action beside its heading: they wrap (the row was 108 px too wide).
    const saved = await createQuery(service, { name: 'Narrow', query_sql: 'SELECT 1 AS one' });
    await setHash(`query=${saved}`);
    await visibility(page.locator('#run-pipeline')).toBe(true);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await showExecution(numbers.execution_id);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.reload();
    await textOf(page.locator('#signed-in')).toBe('alice · free');
    expect(page.url()).toBe(`${service.url}/#execution=${numbers.execution_id}`);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    await page.getByRole('button', { name: 'Forget key' }).click();
    await visibility(page.getByLabel('API key', { exact: true })).toBe(true);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('broke no rule of its content security policy and threw no uncaught error', () => {
    expect(pageProblems).toEqual([]);
  });
});
