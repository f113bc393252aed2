import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * Uploading from the workspace (issue 24): drop or choose a file, see the typed columns and the
 * widened ones before confirming, confirm, find the table in the list. In Debian's headless
 * Chromium, checked against the API.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/workspace');

let service: TestService;
let browser: Browser;
let page: Page;
let dir: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it (apt-get install chromium)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  service = await startTestService();
  dir = tempDir('workspace-upload-');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) pageProblems.push(message.text());
  });
  page.on('pageerror', (error) => pageProblems.push(error.message));
  await page.goto(`${service.url}/`);
  await page.fill('#api-key', KEYS.alice);
  await page.click('#key-form button[type="submit"]');
  await page.waitForSelector('#workspace:not([hidden])');
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const textOf = (locator: Locator) => expect.poll(() => locator.textContent(), { timeout: 15_000 });
const stored = async (table: string) =>
  (
    await service.database.read((session) =>
      session.all("SELECT 1 FROM duckdb_tables() WHERE schema_name = 'alice' AND table_name = ?", [table]),
    )
  ).length > 0;

describe('upload from the workspace', () => {
  it('shows the typed columns and the widened one before storing, then stores on confirm', async () => {
    const file = path.join(dir, 'DEX Trades.csv');
    fs.writeFileSync(
      file,
      'block_time,amount,venue\n2024-01-01T00:00:12Z,1.5,curve\n2024-01-01T00:00:24Z,n/a,"uni, v3"\n2024-01-01T00:00:36Z,2.25,curve\n',
    );
    await page.click('#upload summary');
    await page.setInputFiles('#upload-file', file);
    expect(await page.inputValue('#upload-table')).toBe('dex_trades');
    await textOf(page.locator('#upload-table-shown')).toBe('dex_trades');
    await page.click('#upload-check');
    await textOf(page.locator('#upload-summary')).toBe('dataset_dex_trades: 3 rows, 3 columns.');
    expect(await page.locator('#upload-columns tbody tr').allTextContents()).toEqual([
      'block_timetimestamp with time zone',
      'amountvarchar',
      'venuevarchar',
    ]);
    expect(await page.locator('#upload-widened li').allTextContents()).toEqual([
      'amount: "n/a" on CSV line 3 made the column varchar; without it it would be double',
    ]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'upload-preview.png') });
    expect(await stored('dataset_dex_trades')).toBe(false);

    await page.click('#upload-confirm');
    await textOf(page.locator('#upload-status')).toBe('Stored dataset_dex_trades: 3 rows.');
    expect(await stored('dataset_dex_trades')).toBe(true);
    await textOf(page.locator('#table-list')).toContain('alice.dataset_dex_trades');
    expect(await page.locator('#upload-preview').isHidden()).toBe(true);
  });

  it("takes a dropped file, and shows the service's refusal (strict) without storing", async () => {
    const csv = 'amount\n1.5\nn/a\n';
    // In the page: a drag's DataTransfer holding the file, as a drop from the desktop has.
    const transfer = await page.evaluateHandle(
      `(() => { const data = new DataTransfer(); data.items.add(new File([${JSON.stringify(csv)}], 'strict_one.csv', { type: 'text/csv' })); return data; })()`,
    );
    await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer: transfer });
    expect(await page.inputValue('#upload-table')).toBe('strict_one');
    await page.check('#upload-strict');
    await page.click('#upload-check');
    await textOf(page.locator('#upload-error')).toMatch(
      /^CSV line 3, column "amount": "n\/a" is not a double like the column's other values, and "strict" refuses/,
    );
    expect(await page.locator('#upload-preview').isHidden()).toBe(true);
    expect(await stored('dataset_strict_one')).toBe(false);
    await page.uncheck('#upload-strict');
    await page.click('#upload-check');
    await textOf(page.locator('#upload-summary')).toBe('dataset_strict_one: 2 rows, 1 column.');
    await page.click('#upload-cancel');
    await textOf(page.locator('#upload-status')).toBe('Nothing was stored.');
    expect(await stored('dataset_strict_one')).toBe(false);
    expect(pageProblems).toEqual([]);
  });
});
