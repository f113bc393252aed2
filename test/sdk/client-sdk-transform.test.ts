import { DuneClient } from '@duneanalytics/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The official TypeScript client's calls for a transform layer, unmodified (its base address
 * redirected by wrapping fetch): datasets, usage, query pipelines and their status.
 */

const DUNE_BASE = 'https://api.dune.com/api';

let service: TestService;
const realFetch = globalThis.fetch;
const sent: { method: string; path: string; body?: unknown }[] = [];

beforeAll(async () => {
  service = await startTestService();
  const upload = await service.json('/v1/table/upload/csv', {
    ...uploadBody({ table_name: 'prices', data: 'day,token,price\n2024-01-01,stETH,2301.5\n' }),
    key: KEYS.bob,
  });
  expect(upload.status).toBe(200);
  const hidden = await service.json('/v1/table/upload/csv', {
    ...uploadBody({ table_name: 'hidden', data: 'x\n1\n', is_private: true }),
    key: KEYS.bob,
  });
  expect(hidden.status).toBe(200);
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const target = url.startsWith(DUNE_BASE) ? `${service.url}/api${url.slice(DUNE_BASE.length)}` : url;
    if (!target.startsWith(service.url)) throw new Error(`unexpected address ${url}`);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method: init?.method ?? 'GET', path: target.slice(service.url.length), body });
    return realFetch(target, init);
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await service.stop();
});

describe('@duneanalytics/client-sdk: datasets and usage', () => {
  const alice = new DuneClient(KEYS.alice);
  const bob = new DuneClient(KEYS.bob);

  it('dataset.list and dataset.getBySlug', async () => {
    const listed = await alice.dataset.list({
      limit: 10,
      offset: 0,
      owner_handle: 'bob',
      type: 'uploaded_table',
    });
    expect(sent.at(-1)).toMatchObject({
      method: 'GET',
      path: '/api/v1/datasets?limit=10&offset=0&owner_handle=bob&type=uploaded_table',
    });
    expect(listed.total).toBe(1);
    expect(listed.datasets[0]).toMatchObject({
      full_name: 'dune.bob.dataset_prices',
      type: 'uploaded_table',
      owner: { handle: 'bob', type: 'user' },
      is_private: false,
    });
    expect((await bob.dataset.list({ owner_handle: 'bob' })).total).toBe(2);
    const one = await alice.dataset.getBySlug('dune.bob.dataset_prices');
    expect(one.columns.map((c) => c.name)).toEqual(['day', 'token', 'price']);
    await expect(alice.dataset.getBySlug('dune.bob.dataset_hidden')).rejects.toThrow(/Status: 404/);
    expect((await bob.dataset.getBySlug('dune.bob.dataset_hidden')).is_private).toBe(true);
  });

  it('usage.getUsage', async () => {
    const usage = await bob.usage.getUsage();
    expect(sent.at(-1)).toMatchObject({ method: 'POST', path: '/api/v1/usage', body: {} });
    expect(usage).toMatchObject({ private_queries: 0, private_dashboards: 0, bytes_allowed: 10_000_000_000 });
    expect(usage.bytes_used).toBeGreaterThan(0);
    expect(usage.billing_periods).toHaveLength(1);
  });
});
