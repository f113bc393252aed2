/**
 * Makes the README's picture of the workspace, `docs/workspace.png`:
 * `npx tsx scripts/workspace-screenshot.ts`. Starts the service on a fresh data directory
 * with the demo data, runs a query over the restaking tables in the page as a person would,
 * and takes a 1280x800 screenshot with Debian's headless Chromium.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/log.js';
import { sourceRoot } from '../src/packaging/project-files.js';
import { startService } from '../src/service.js';

const KEY = 'screenshot-key-0001';
const OUT = path.join(sourceRoot(), 'docs', 'workspace.png');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workspace-screenshot-'));
const service = await startService(
  loadConfig({ PORT: '0', DATA_DIR: dataDir, API_KEYS: `${KEY}=analyst:premium`, RATE_LIMITS: 'off' }),
  createLogger('warn'),
);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  // The demo's metrics run at start: wait for their first result.
  for (let i = 0; ; i++) {
    const response = await fetch(`${service.url}/v1/query/3693850/results?limit=1`, {
      headers: { 'x-service-api-key': KEY },
    });
    const body = (await response.json()) as { state?: string; execution_id?: string };
    if (body.state === 'QUERY_STATE_COMPLETED') break;
    if (i > 600) throw new Error(`the metrics did not complete: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${service.url}/`);
  await page.locator('#api-key').fill(KEY);
  await page.keyboard.press('Enter');
  await page.locator('#table-list .table-name').first().waitFor();
  await page.getByRole('button', { name: 'Columns of restaking.strategies' }).click();
  await page.locator('.cm-content').click();
  await page.keyboard.insertText(
    [
      'SELECT s.token, count(*) AS share_changes,',
      '  count(DISTINCT c.operator) AS operators,',
      '  sum(c.shares_delta) / 1e18 AS net_shares',
      'FROM restaking.operator_share_changes c',
      'JOIN restaking.strategies s USING (strategy)',
      'GROUP BY s.token',
    ].join('\n'),
  );
  await page.keyboard.press('Control+Enter');
  await page.locator('#results-meta').filter({ hasText: 'rows' }).waitFor();
  await page.locator('button[data-column="net_shares"]').click();
  await page.locator('button[data-column="net_shares"]').click();
  await page.locator('th[aria-sort="descending"]').waitFor();
  await page.locator('#editor-heading').focus();
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  process.stdout.write(`${OUT}\n`);
} finally {
  await browser.close();
  await service.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
