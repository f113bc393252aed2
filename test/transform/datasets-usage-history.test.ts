import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * Datasets (GET /v1/datasets[/{name}]), usage (POST /v1/usage), Dune's query list and the
 * execution history (GET /v1/executions) over HTTP: shapes, filters, privacy, 404 as absent,
 * and every bad input a 400 naming it.
 */

let service: TestService;

interface DatasetAnswer {
  full_name: string;
  type: string;
  owner: { handle: string; type: string };
  columns: { name: string; type: string; nullable: boolean }[];
  metadata: Record<string, string>;
  is_private: boolean;
  created_at: string;
  updated_at: string;
}

async function waitFinished(executionId: string, key: string = KEYS.alice): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await service.json<Record<string, unknown>>(`/v1/execution/${executionId}/status`, {
      key,
    });
    if (body.is_execution_finished) return body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  service = await startTestService();
  const upload = (key: string, fields: Record<string, unknown>) =>
    service.json('/v1/table/upload/csv', { ...uploadBody(fields), key });
  expect(
    (await upload(KEYS.alice, { table_name: 'prices', data: 'day,price\n2024-01-01,1.5\n' })).status,
  ).toBe(200);
  expect((await upload(KEYS.bob, { table_name: 'secret', data: 'x\n1\n', is_private: true })).status).toBe(
    200,
  );
  expect((await upload(KEYS.bob, { table_name: 'open', data: 'y,z\n1,2\n' })).status).toBe(200);
  const created = await service.json('/v1/table/create', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    key: KEYS.admin,
    body: JSON.stringify({
      namespace: 'restaking',
      table_name: 'avs',
      schema: [{ name: 'id', type: 'bigint', nullable: false }],
    }),
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await service.stop();
});

describe('GET /v1/datasets', () => {
  it("lists every table the key may read, in Dune's shape, never another's private one", async () => {
    const { status, body } = await service.json<{ datasets: DatasetAnswer[]; total: number }>('/v1/datasets');
    expect(status).toBe(200);
    expect(body.datasets.map((d) => d.full_name)).toEqual([
      'dune.alice.dataset_prices',
      'dune.bob.dataset_open',
      'dune.restaking.avs',
    ]);
    expect(body.total).toBe(3);
    const prices = body.datasets[0] as DatasetAnswer;
    expect(prices).toMatchObject({
      type: 'uploaded_table',
      owner: { handle: 'alice', type: 'user' },
      columns: [
        { name: 'day', type: 'date', nullable: true },
        { name: 'price', type: 'double', nullable: true },
      ],
      metadata: { description: '', row_count: '1' },
      is_private: false,
    });
    expect(Number.isNaN(Date.parse(prices.created_at))).toBe(false);
    expect(body.datasets[2]).toMatchObject({
      type: 'dune_table',
      owner: { handle: 'restaking', type: 'team' },
      columns: [{ name: 'id', type: 'bigint', nullable: false }],
    });
    const bobs = await service.json<{ datasets: DatasetAnswer[]; total: number }>('/v1/datasets', {
      key: KEYS.bob,
    });
    expect(bobs.body.datasets.map((d) => d.full_name)).toContain('dune.bob.dataset_secret');
    const admins = await service.json<{ total: number }>('/v1/datasets', { key: KEYS.admin });
    expect(admins.body.total).toBe(4);
  });

  it('filters by owner_handle and type, pages with limit and offset, and counts the whole', async () => {
    const bob = await service.json<{ datasets: DatasetAnswer[]; total: number }>(
      '/v1/datasets?owner_handle=bob',
    );
    expect(bob.body).toMatchObject({ total: 1, datasets: [{ full_name: 'dune.bob.dataset_open' }] });
    const typed = await service.json<{ datasets: DatasetAnswer[]; total: number }>(
      '/v1/datasets?type=dune_table,spell',
    );
    expect(typed.body.datasets.map((d) => d.full_name)).toEqual(['dune.restaking.avs']);
    const page = await service.json<{ datasets: DatasetAnswer[]; total: number }>(
      '/v1/datasets?limit=1&offset=1',
    );
    expect(page.body).toMatchObject({ total: 3, datasets: [{ full_name: 'dune.bob.dataset_open' }] });
    const past = await service.json<{ datasets: DatasetAnswer[]; total: number }>('/v1/datasets?offset=10');
    expect(past.body).toEqual({ datasets: [], total: 3 });
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    for (const [query, word] of [
      ['limit=251', 'limit'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['type=view', 'type'],
      ['sort=x', 'sort'],
      ['limit=1&limit=2', 'limit'],
    ] as const) {
      const { status, body } = await service.json<{ error: string }>(`/v1/datasets?${query}`);
      expect(status, query).toBe(400);
      expect(body.error).toContain(word);
    }
  });
});

describe('GET /v1/datasets/{full_name}', () => {
  it('answers one dataset by its Dune name or namespace.table', async () => {
    const full = await service.json<DatasetAnswer>('/v1/datasets/dune.alice.dataset_prices');
    expect(full.status).toBe(200);
    expect(full.body.full_name).toBe('dune.alice.dataset_prices');
    const short = await service.json<DatasetAnswer>('/v1/datasets/bob.dataset_open');
    expect(short.body).toMatchObject({ full_name: 'dune.bob.dataset_open', type: 'uploaded_table' });
  });

  it("answers 404 for another's private table exactly as for one that does not exist", async () => {
    const hidden = await service.json<{ error: string }>('/v1/datasets/dune.bob.dataset_secret');
    const absent = await service.json<{ error: string }>('/v1/datasets/dune.bob.dataset_nothing');
    expect(hidden.status).toBe(404);
    expect(absent.status).toBe(404);
    expect(hidden.body.error).toBe(absent.body.error.replace('dataset_nothing', 'dataset_secret'));
    expect((await service.json('/v1/datasets/dune.bob.dataset_secret', { key: KEYS.bob })).status).toBe(200);
    for (const name of ['x', 'a.b.c.d', 'dune..x', "alice.x';drop table x;--", '_service.tables', 'main.x'])
      expect((await service.json(`/v1/datasets/${encodeURIComponent(name)}`)).status, name).toBe(404);
    expect((await service.json('/v1/datasets/dune.alice.dataset_prices', { method: 'DELETE' })).status).toBe(
      405,
    );
  });
});

describe('POST /v1/usage', () => {
  it("counts the key's tables and kept results, its private queries, and the current month", async () => {
    const before = await service.json<Record<string, unknown>>('/v1/usage', {
      method: 'POST',
      key: KEYS.bob,
    });
    expect(before.status).toBe(200);
    const tables = await service.json<{ tables: { table_size_bytes: string }[] }>('/v1/tables?limit=100', {
      key: KEYS.bob,
    });
    const tableBytes = tables.body.tables
      .filter((t) => (t as unknown as { namespace: string }).namespace === 'bob')
      .reduce((sum, t) => sum + Number(t.table_size_bytes), 0);
    expect(before.body).toMatchObject({
      private_queries: 0,
      private_dashboards: 0,
      bytes_used: tableBytes,
      bytes_allowed: 10 * 1000 ** 3,
    });
    const month = new Date().toISOString().slice(0, 7);
    expect(before.body.billing_periods).toEqual([
      expect.objectContaining({ start_date: `${month}-01`, credits_used: 0, credits_included: 0 }),
    ]);
    const created = await service.json<{ query_id: number }>('/v1/query', {
      method: 'POST',
      key: KEYS.bob,
      body: JSON.stringify({ name: 'mine', query_sql: 'SELECT 42 AS n', is_private: true }),
    });
    const run = await service.json<{ execution_id: string }>(`/v1/query/${created.body.query_id}/execute`, {
      method: 'POST',
      key: KEYS.bob,
    });
    const finished = await waitFinished(run.body.execution_id, KEYS.bob);
    const resultBytes = (finished.result_metadata as { total_result_set_bytes: number })
      .total_result_set_bytes;
    const after = await service.json<Record<string, number>>('/v1/usage', { method: 'POST', key: KEYS.bob });
    expect(after.body.private_queries).toBe(1);
    expect(after.body.bytes_used).toBe(tableBytes + resultBytes + 16 * 1024);
    // Nobody else's usage moved.
    const alice = await service.json<Record<string, number>>('/v1/usage', { method: 'POST' });
    expect(alice.body.private_queries).toBe(0);
  });

  it('lists the months of a range, and refuses bad dates with a 400 naming the field', async () => {
    const range = await service.json<{ billing_periods: { start_date: string; end_date: string }[] }>(
      '/v1/usage',
      { method: 'POST', body: JSON.stringify({ start_date: '2024-01-15', end_date: '2024-03-02' }) },
    );
    expect(range.body.billing_periods.map((p) => [p.start_date, p.end_date])).toEqual([
      ['2024-01-01', '2024-01-31'],
      ['2024-02-01', '2024-02-29'],
      ['2024-03-01', '2024-03-31'],
    ]);
    for (const [body, word] of [
      [{ start_date: '2024-02-30' }, 'start_date'],
      [{ end_date: 20240101 }, 'end_date'],
      [{ start_date: '2024-03-01', end_date: '2024-01-01' }, 'start_date'],
      [{ start_date: '1900-01-01', end_date: '2024-01-01' }, 'months'],
      [{ since: '2024-01-01' }, 'since'],
      [[1], 'object'],
    ] as const) {
      const { status, body: answer } = await service.json<{ error: string }>('/v1/usage', {
        method: 'POST',
        body: JSON.stringify(body),
      });
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error).toContain(word);
    }
    expect((await service.json('/v1/usage', { method: 'POST', body: '{' })).status).toBe(400);
    expect((await service.json('/v1/usage')).status).toBe(405);
    expect((await service.json('/v1/usage', { method: 'POST', key: null })).status).toBe(401);
  });
});

describe('GET /v1/queries', () => {
  it("answers Dune's overview fields and the total beside the query object", async () => {
    const created = await service.json<{ query_id: number }>('/v1/query', {
      method: 'POST',
      key: KEYS.carol,
      body: JSON.stringify({ name: 'listed', description: 'd', tags: ['t'], query_sql: 'SELECT 1 AS one' }),
    });
    const { body } = await service.json<{ queries: Record<string, unknown>[]; total: number }>(
      '/v1/queries',
      {
        key: KEYS.carol,
      },
    );
    expect(body.total).toBe(1);
    expect(body.queries[0]).toMatchObject({
      id: created.body.query_id,
      query_id: created.body.query_id,
      name: 'listed',
      description: 'd',
      owner: 'carol',
      tags: ['t'],
      query_sql: 'SELECT 1 AS one',
    });
    expect(Number.isNaN(Date.parse(String(body.queries[0]?.created_at)))).toBe(false);
    expect(Number.isNaN(Date.parse(String(body.queries[0]?.updated_at)))).toBe(false);
  });
});

describe('GET /v1/executions', () => {
  it("lists the key's own executions newest first, with an ad-hoc run's SQL, filtered and paged", async () => {
    const sql = 'SELECT 7 AS seven -- mine';
    const adHoc = await service.json<{ execution_id: string }>('/v1/sql/execute', {
      method: 'POST',
      key: KEYS.carol,
      body: JSON.stringify({ sql }),
    });
    await waitFinished(adHoc.body.execution_id, KEYS.carol);
    const failing = await service.json<{ execution_id: string }>('/v1/sql/execute', {
      method: 'POST',
      key: KEYS.carol,
      body: JSON.stringify({ sql: "SELECT 'x'::INTEGER AS bad" }),
    });
    await waitFinished(failing.body.execution_id, KEYS.carol);
    const { status, body } = await service.json<{
      executions: Record<string, unknown>[];
      total: number;
      next_offset?: number;
    }>('/v1/executions', { key: KEYS.carol });
    expect(status).toBe(200);
    expect(body.total).toBe(2);
    expect(body.executions.map((e) => e.execution_id)).toEqual([
      failing.body.execution_id,
      adHoc.body.execution_id,
    ]);
    expect(body.executions[0]).toMatchObject({ state: 'QUERY_STATE_FAILED', query_id: 0 });
    expect(body.executions[1]).toMatchObject({
      state: 'QUERY_STATE_COMPLETED',
      query_sql: sql,
      result_metadata: { total_row_count: 1 },
    });
    const completed = await service.json<{ executions: { execution_id: string }[]; total: number }>(
      '/v1/executions?state=QUERY_STATE_COMPLETED',
      { key: KEYS.carol },
    );
    expect(completed.body.executions.map((e) => e.execution_id)).toEqual([adHoc.body.execution_id]);
    const paged = await service.json<{ executions: unknown[]; next_offset?: number }>(
      '/v1/executions?limit=1',
      {
        key: KEYS.carol,
      },
    );
    expect(paged.body.executions).toHaveLength(1);
    expect(paged.body.next_offset).toBe(1);
    const ofQuery = await service.json<{ total: number }>('/v1/executions?query_id=0', { key: KEYS.carol });
    expect(ofQuery.body.total).toBe(2);
    // Another key sees none of them.
    const bobs = await service.json<{ executions: { execution_id: string }[] }>('/v1/executions', {
      key: KEYS.alice,
    });
    expect(bobs.body.executions.map((e) => e.execution_id)).not.toContain(adHoc.body.execution_id);
  });

  it('names the query of a saved run, and refuses bad parameters with a 400', async () => {
    const created = await service.json<{ query_id: number }>('/v1/query', {
      method: 'POST',
      body: JSON.stringify({ name: 'Prices', query_sql: 'SELECT * FROM dataset_prices' }),
    });
    const run = await service.json<{ execution_id: string }>(`/v1/query/${created.body.query_id}/execute`, {
      method: 'POST',
    });
    await waitFinished(run.body.execution_id);
    const { body } = await service.json<{ executions: Record<string, unknown>[] }>(
      `/v1/executions?query_id=${created.body.query_id}`,
    );
    expect(body.executions).toEqual([
      expect.objectContaining({ execution_id: run.body.execution_id, query_name: 'Prices' }),
    ]);
    expect(body.executions[0]).not.toHaveProperty('query_sql');
    for (const query of ['state=DONE', 'limit=0', 'limit=1001', 'query_id=x', 'owner=bob'])
      expect((await service.json(`/v1/executions?${query}`)).status, query).toBe(400);
  });
});
