import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * How a result is laid out in the workspace, in Debian's headless Chromium: what the person
 * sees of the grid and the chart, measured from the boxes the browser lays out.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/workspace');

let service: TestService;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it (apt-get install chromium)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  service = await startTestService();
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
});

const textOf = (locator: Locator) => expect.poll(() => locator.textContent(), { timeout: 15_000 });

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const boxOf = (locator: Locator): Promise<Box> =>
  locator.evaluate((element) => {
    const { left, right, top, bottom } = element.getBoundingClientRect();
    return { left, right, top, bottom };
  });

const inside = (inner: Box, outer: Box) =>
  inner.left >= outer.left &&
  inner.right <= outer.right &&
  inner.top >= outer.top &&
  inner.bottom <= outer.bottom;

/** Replaces the editor's SQL, runs it and waits for the result's summary line. */
async function run(sql: string, meta: RegExp): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Backspace');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Enter');
  await textOf(page.locator('#results-meta')).toMatch(meta);
}

/** `count` text columns named `prefix_0`… with long values, 200 rows: wider and taller than the grid. */
const wideQuery = (prefix: string, count: number) =>
  `SELECT ${Array.from({ length: count }, (_, i) => `'a rather long value ' || range AS ${prefix}_${i}`).join(', ')} FROM range(200)`;

describe('a result in the workspace', () => {
  it('draws every y-axis label whole, inside the chart, however wide the numbers', async () => {
    /** The chart described by `ariaLabel` is drawn, shows `widest`, and every y label fits in it. */
    const labelsInside = async (ariaLabel: string, widest: string) => {
      const chart = page.locator('#chart svg.chart');
      await expect.poll(() => chart.getAttribute('aria-label')).toBe(ariaLabel);
      const labels = chart.locator('g[aria-label="y-axis tick label"] text');
      await expect.poll(() => labels.count()).toBeGreaterThan(3);
      const texts = await labels.allTextContents();
      expect(texts).toContain(widest);
      const box = await boxOf(chart);
      for (const [i, label] of (await labels.all()).entries()) {
        expect(inside(await boxOf(label), box), `${ariaLabel}: ${texts[i]}`).toBe(true);
      }
    };
    // 180,000,000 and −180,000,000: wider than the chart's fixed left margin once was.
    for (const [sql, meta, widest] of [
      ['SELECT range AS n, range * 20000000 AS amount FROM range(10)', /^10 rows · 2 columns/, '180,000,000'],
      [
        'SELECT range AS n, -range * 20000000 AS amount FROM range(1, 10)',
        /^9 rows · 2 columns/,
        '−180,000,000',
      ],
    ] as const) {
      await run(sql, meta);
      await page.getByRole('tab', { name: 'Chart' }).click();
      for (const kind of ['line', 'bar', 'scatter']) {
        await page.getByLabel('Chart type').selectOption(kind);
        await labelsInside(`${kind} chart of amount by n`, widest);
      }
      // Two series: the chart comes with its legend, in a figure around it.
      const second = page.getByRole('checkbox', { name: 'n', exact: true });
      await second.check();
      await labelsInside('scatter chart of n, amount by n', widest);
      await page.screenshot({ path: path.join(ARTIFACTS, 'chart-wide-labels.png') });
      await second.uncheck();
      await page.getByRole('tab', { name: 'Table', exact: true }).click();
    }
  });

  it('shows a new result from its first row and column, wherever the last one was scrolled to', async () => {
    const container = page.locator('#grid-container');
    const scroll = () => container.evaluate((element) => [element.scrollLeft, element.scrollTop]);
    await page.getByRole('tab', { name: 'Table', exact: true }).click();
    await run(wideQuery('first', 30), /^200 rows · 30 columns/);
    await container.evaluate((element) => element.scrollTo(element.scrollWidth, element.scrollHeight));
    await expect.poll(async () => (await scroll()).every((offset) => offset > 500)).toBe(true);

    await run(wideQuery('second', 31), /^200 rows · 31 columns/);
    expect(await scroll()).toEqual([0, 0]);
    const firstColumn = page.locator('#grid-container thead button[data-column="second_0"]');
    expect(inside(await boxOf(firstColumn), await boxOf(container))).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'grid-new-result.png') });
  });

  it('broke no rule of its content security policy and threw no uncaught error', () => {
    expect(pageProblems).toEqual([]);
  });
});
