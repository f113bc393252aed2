import { DuneClient, ExecutionState, QueryEngine } from '@duneanalytics/client-sdk';
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

describe('@duneanalytics/client-sdk: pipelines', () => {
  const bob = new DuneClient(KEYS.bob);
  const alice = new DuneClient(KEYS.alice);

  it('exec.executeQueryPipeline and pipeline.getPipelineStatus: the view first, then the query', async () => {
    const base = await bob.query.createQuery({
      name: 'base',
      query_sql: 'SELECT token, price FROM dataset_prices',
    });
    // The client has no call for views: its generic post reaches Dune's endpoint.
    const upsert = { name: 'result_base', query_id: base } as unknown as Parameters<typeof bob.query.post>[1];
    const view = await bob.query.post<{ name: string }>('materialized-views', upsert);
    expect(view.name).toBe('dune.bob.result_base');
    const refresh = await bob.query.post<{ execution_id: string }>(
      'materialized-views/result_base/refresh',
      {},
    );
    for (let i = 0; i < 500; i++) {
      const status = await bob.exec.getExecutionStatus(refresh.execution_id);
      if (status.state === ExecutionState.COMPLETED) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const top = await bob.query.createQuery({
      name: 'top',
      query_sql: 'SELECT count(*) AS n FROM result_base',
    });
    const started = await bob.exec.executeQueryPipeline(top, { performance: QueryEngine.Large });
    expect(sent.at(-1)).toMatchObject({
      method: 'POST',
      path: `/api/v1/query/${top}/pipeline/execute`,
      body: { performance: 'large' },
    });
    let status = await bob.pipeline.getPipelineStatus(started.pipeline_execution_id);
    for (let i = 0; i < 500 && status.status !== 'completed' && status.status !== 'failed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await bob.pipeline.getPipelineStatus(started.pipeline_execution_id);
    }
    expect(sent.at(-1)?.path).toBe(`/api/v1/pipelines/executions/${started.pipeline_execution_id}/status`);
    expect(status.status).toBe('completed');
    expect(
      status.node_executions.map((n) => [
        n.id,
        n.query_execution_status.query_id,
        n.query_execution_status.status,
      ]),
    ).toEqual([
      [1, base, 'QUERY_STATE_COMPLETED'],
      [2, top, 'QUERY_STATE_COMPLETED'],
    ]);
    const result = await bob.exec.getExecutionResults(
      status.node_executions[1]?.query_execution_status.execution_id as string,
    );
    expect(result.result?.rows).toEqual([{ n: 1 }]);
    await expect(alice.pipeline.getPipelineStatus(started.pipeline_execution_id)).rejects.toThrow(
      /Status: 404/,
    );
  });
});
