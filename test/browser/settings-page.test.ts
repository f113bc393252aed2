import fs from 'node:fs';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The data settings page in a real headless Chromium (Debian's, driven by playwright-core):
 * what a person does with it, by mouse and by keyboard, checked against the API.
 */

const CHROMIUM = '/usr/bin/chromium';

let service: TestService;
let browser: Browser;

const post = (path: string, body: unknown, key: string) =>
  service.json(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    key,
  });

async function ownTables(key: string): Promise<string[]> {
  const { body } = await service.json<{ tables: { full_name: string; namespace: string }[] }>('/v1/tables', {
    key,
  });
  return body.tables.map((t) => t.full_name);
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it (apt-get install chromium)`);
  }
  service = await startTestService();
  const schema = [
    { name: 'id', type: 'bigint', nullable: false },
    { name: 'label', type: 'varchar' },
  ];
  expect(
    (await post('/v1/table/create', { namespace: 'bob', table_name: 'events', schema }, KEYS.bob)).status,
  ).toBe(201);
  const insert = await service.json('/v1/table/bob/events/insert', {
    method: 'POST',
    headers: { 'content-type': 'text/csv' },
    body: 'id,label\n1,a\n2,b\n3,c\n',
    key: KEYS.bob,
  });
  expect(insert.status).toBe(200);
  expect(
    (
      await post(
        '/v1/table/create',
        { namespace: 'bob', table_name: 'secret_plans', schema, is_private: true },
        KEYS.bob,
      )
    ).status,
  ).toBe(201);
  expect(
    (
      await service.json('/v1/table/upload/csv', {
        ...uploadBody({ table_name: 'prices', data: 'x\n1\n2\n' }),
        key: KEYS.bob,
      })
    ).status,
  ).toBe(200);
  // Another account's public table: in bob's API list, never on bob's page.
  expect(
    (
      await service.json('/v1/table/upload/csv', {
        ...uploadBody({ table_name: 'alices', data: 'x\n1\n' }),
        key: KEYS.alice,
      })
    ).status,
  ).toBe(200);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

async function openPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const response = await page.goto(`${service.url}/settings/data`);
  expect(response?.status()).toBe(200);
  return page;
}

async function signIn(page: Page, key: string): Promise<void> {
  await keyField(page).fill(key);
  await page.getByRole('button', { name: 'Show my tables' }).click();
}

const rowNames = (page: Page) => page.locator('#tables tbody th').allTextContents();
const keyField = (page: Page) => page.getByLabel('API key', { exact: true });

/** playwright-core has no assertions of its own: vitest polls until the page settles. */
const textOf = (locator: Locator) => expect.poll(() => locator.textContent(), { timeout: 10_000 });
const visibility = (locator: Locator) => expect.poll(() => locator.isVisible(), { timeout: 10_000 });
const focus = (locator: Locator) =>
  expect.poll(() => locator.evaluate((element) => element === element.ownerDocument.activeElement), {
    timeout: 10_000,
  });

describe('the data settings page', () => {
  it('is served with a strict content security policy; its files are the web bundle’s', async () => {
    const response = await fetch(`${service.url}/settings/data`);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const html = await response.text();
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);
    // Its own script and style sheet, and the script it shares with the workspace, all with
    // hashed names under /assets/.
    const files = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((m) => m[1] as string);
    expect(files).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^settings-[A-Z0-9]{8}\.js$/),
        expect.stringMatching(/^settings-[A-Z0-9]{8}\.css$/),
        expect.stringMatching(/^chunk-[A-Z0-9]{8}\.js$/),
      ]),
    );
    for (const file of files) {
      const answer = await fetch(`${service.url}/assets/${file}`);
      expect(answer.status, file).toBe(200);
      expect(answer.headers.get('content-type'), file).toMatch(/^text\/(javascript|css)/);
    }
    const workspace = await (await fetch(`${service.url}/`)).text();
    const shared = files.find((file) => file.startsWith('chunk-')) as string;
    expect(workspace).toContain(`/assets/${shared}`);
    expect((await fetch(`${service.url}/settings/settings.js`)).status).toBe(404);
    const section = await fetch(`${service.url}/settings`, { redirect: 'manual' });
    expect(section.status).toBe(302);
    expect(section.headers.get('location')).toBe('/settings/data');
    expect((await fetch(`${service.url}/settings/nothing.js`)).status).toBe(404);
  });

  it('says clearly when the key is wrong, and shows nothing', async () => {
    const page = await openPage();
    await signIn(page, 'not-a-real-key-000');
    await textOf(page.getByRole('alert')).toMatch(/This API key was not accepted/);
    await expect.poll(() => keyField(page).getAttribute('aria-invalid')).toBe('true');
    await visibility(page.getByRole('heading', { name: 'Your tables' })).toBe(false);
    await signIn(page, '');
    await textOf(page.getByRole('alert')).toBe('Enter your API key.');
    await page.context().close();
  });

  it('shows the account’s own tables with rows, size, privacy and last update', async () => {
    const page = await openPage();
    await signIn(page, KEYS.bob);
    await visibility(page.getByText('Signed in as bob (premium plan).')).toBe(true);
    await textOf(page.getByRole('status')).toBe('3 tables.');
    expect(await rowNames(page)).toEqual(['dataset_prices', 'events', 'secret_plans']);
    const events = page.getByRole('row', { name: /^events/ });
    await textOf(events.getByRole('cell').nth(0)).toBe('3');
    await textOf(events.getByRole('cell').nth(2)).toBe('No');
    await expect.poll(() => events.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    const secret = page.getByRole('row', { name: /^secret_plans/ });
    await textOf(secret.getByRole('cell').nth(2)).toBe('Yes');
    const prices = page.getByRole('row', { name: /^dataset_prices/ });
    await textOf(prices.getByRole('cell').nth(1)).toBe('5 bytes');
    await page.context().close();
  });

  it('deletes a table after confirmation; it is gone from the page and from the API', async () => {
    const page = await openPage();
    await signIn(page, KEYS.bob);
    await page.getByRole('button', { name: 'Delete table bob.events' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this table?' });
    await visibility(dialog).toBe(true);
    await textOf(dialog).toContain('bob.events and its 3 rows will be removed for good');
    // Cancelling keeps the table.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await visibility(dialog).toBe(false);
    expect(await ownTables(KEYS.bob)).toContain('bob.events');

    await page.getByRole('button', { name: 'Delete table bob.events' }).click();
    await dialog.getByRole('button', { name: 'Delete table' }).click();
    await textOf(page.getByRole('status')).toBe('Table bob.events deleted.');
    expect(await rowNames(page)).toEqual(['dataset_prices', 'secret_plans']);
    expect(await ownTables(KEYS.bob)).not.toContain('bob.events');
    const gone = await service.json('/v1/table/bob/events', { key: KEYS.bob });
    expect(gone.status).toBe(404);
    await page.context().close();
  });

  it('works by keyboard alone, and keeps the key for the browser session only', async () => {
    const page = await openPage();
    await page.keyboard.press('Tab'); // skip link
    await page.keyboard.press('Tab'); // navigation: the workspace
    await page.keyboard.press('Tab'); // navigation: this page
    await page.keyboard.press('Tab'); // the key field
    await focus(keyField(page)).toBe(true);
    await page.keyboard.type(KEYS.bob);
    await page.keyboard.press('Enter');
    await textOf(page.getByRole('status')).toBe('2 tables.');

    const remove = page.getByRole('button', { name: 'Delete table bob.dataset_prices' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await focus(dialog.getByRole('button', { name: 'Cancel' })).toBe(true);
    await page.keyboard.press('Escape');
    await visibility(dialog).toBe(false);
    await focus(remove).toBe(true);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await focus(dialog.getByRole('button', { name: 'Delete table' })).toBe(true);
    await page.keyboard.press('Enter');
    await textOf(page.getByRole('status')).toBe('Table bob.dataset_prices deleted.');
    await focus(page.getByRole('heading', { name: 'Your tables' })).toBe(true);

    // A reload in the same tab needs no key again; the key never appears in the address.
    await page.reload();
    await textOf(page.getByRole('status')).toBe('1 table.');
    expect(page.url()).toBe(`${service.url}/settings/data`);
    await page.getByRole('button', { name: 'Forget key' }).click();
    await visibility(keyField(page)).toBe(true);
    await page.reload();
    await visibility(keyField(page)).toBe(true);
    await visibility(page.getByRole('heading', { name: 'Your tables' })).toBe(false);
    await page.context().close();
  });
});
