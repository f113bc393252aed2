import { DuneClient, ExecutionState, QueryParameter } from '@duneanalytics/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * The official TypeScript client's query calls (DESIGN §10), unmodified; only its base
 * address is redirected (a constant in the client, so fetch is wrapped). Polling is kept
 * fast through the client's own `pingFrequency` option (seconds).
 */

const DUNE_BASE = 'https://api.dune.com/api';
const POLL = { pingFrequency: 0.02 };

let service: TestService;
const realFetch = globalThis.fetch;
const sent: { method: string; path: string; body?: unknown }[] = [];

beforeAll(async () => {
  service = await startTestService();
  const upload = await service.json('/v1/table/upload/csv', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      table_name: 'prices',
      data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n2024-01-03,stETH,2400\n',
    }),
  });
  expect(upload.status).toBe(200);
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

describe('@duneanalytics/client-sdk query calls', () => {
  const alice = new DuneClient(KEYS.alice);
  const bob = new DuneClient(KEYS.bob);

  it('createQuery, readQuery, updateQuery, archiveQuery: parameters travel as a map (text)', async () => {
    const queryId = await alice.query.createQuery({
      name: 'By token',
      query_sql: "SELECT day, price FROM dataset_prices WHERE token = '{{token}}' ORDER BY day",
      query_parameters: [QueryParameter.text('token', 'stETH')],
    });
    expect(sent.at(-1)).toEqual({
      method: 'POST',
      path: '/api/v1/query/',
      body: {
        name: 'By token',
        query_sql: "SELECT day, price FROM dataset_prices WHERE token = '{{token}}' ORDER BY day",
        query_parameters: { token: 'stETH' },
        is_private: false,
      },
    });
    const query = await alice.query.readQuery(queryId);
    expect(query).toMatchObject({
      query_id: queryId,
      name: 'By token',
      owner: 'alice',
      version: 1,
      is_private: false,
      is_archived: false,
      parameters: [{ key: 'token', name: 'token', type: 'text', value: 'stETH' }],
    });
    expect(
      await alice.query.updateQuery(queryId, {
        name: 'By token, renamed',
        query_sql: query.query_sql,
        tags: ['prices'],
        query_parameters: [QueryParameter.text('token', 'rETH')],
      }),
    ).toBe(queryId);
    expect(await alice.query.readQuery(queryId)).toMatchObject({
      name: 'By token, renamed',
      tags: ['prices'],
      version: 2,
      parameters: [{ key: 'token', type: 'text', value: 'rETH' }],
    });
    expect(await alice.query.archiveQuery(queryId)).toBe(true);
    expect(await alice.query.unarchiveQuery(queryId)).toBe(false);
  });

  it('makePrivate and makePublic (a premium key); a free key is refused', async () => {
    const queryId = await bob.query.createQuery({
      name: 'Mine',
      query_sql: 'SELECT 1 AS one',
      is_private: false,
    });
    expect(await bob.query.makePrivate(queryId)).toBe(queryId);
    await expect(alice.query.readQuery(queryId)).rejects.toThrow(/Status: 404/);
    expect(await bob.query.makePublic(queryId)).toBe(queryId);
    expect((await alice.query.readQuery(queryId)).is_private).toBe(false);
    const own = await alice.query.createQuery({ name: 'Free', query_sql: 'SELECT 1 AS one' });
    await expect(alice.query.makePrivate(own)).rejects.toThrow(/Status: 403/);
  });

  it('runQuery with parameters, then getLatestResult for the same parameter set', async () => {
    const queryId = await alice.query.createQuery({
      name: 'Prices',
      query_sql: "SELECT day, price FROM dataset_prices WHERE token = '{{token}}' ORDER BY day",
      query_parameters: [QueryParameter.text('token', 'stETH')],
    });
    const reth = [QueryParameter.text('token', 'rETH')];
    const ran = await alice.runQuery({ queryId, query_parameters: reth, opts: POLL });
    expect(ran.state).toBe(ExecutionState.COMPLETED);
    expect(ran.result?.rows).toEqual([{ day: '2024-01-02', price: 2512.25 }]);
    // runQuery sends the values along to the execution's results, which takes and ignores them.
    expect(sent.at(-1)?.path).toMatch(
      new RegExp(`/api/v1/execution/${ran.execution_id}/results\\?.*params\\.token=rETH`),
    );
    const defaults = await alice.runQuery({ queryId, opts: POLL });
    expect(defaults.result?.rows.map((r) => r.price)).toEqual([2301.5, 2400]);
    const latest = await alice.getLatestResult({ queryId, query_parameters: reth });
    expect(latest.execution_id).toBe(ran.execution_id);
    expect(latest.result?.rows).toEqual([{ day: '2024-01-02', price: 2512.25 }]);
    expect((await alice.getLatestResult({ queryId })).execution_id).toBe(defaults.execution_id);
  });

  it('reads a large result to the end: getLatestResult through next_uri, getLastResultCSV through X-Dune-Next-Uri', async () => {
    // 120,000 rows of 4 columns: more than the service pages in memory, so every page of
    // 50,000 rows (5 MB) is written by DuckDB into files and sent from there.
    const rows = 120_000;
    const queryId = await alice.query.createQuery({
      name: 'Many rows',
      query_sql: `SELECT i AS id, '0x' || lpad(lower(to_hex(i * 7919)), 40, '0') AS address, CAST(i AS DOUBLE) / 4 AS amount,
        TIMESTAMP '2024-01-01' + to_seconds(i) AS at FROM range(${rows}) r(i)`,
    });
    const ran = await alice.runQuery({ queryId, opts: { ...POLL, batchSize: 50_000 } });
    expect(ran.result?.rows).toHaveLength(50_000);
    sent.length = 0;
    const latest = await alice.getLatestResult({ queryId, opts: { batchSize: 50_000 } });
    expect(latest.execution_id).toBe(ran.execution_id);
    const all = latest.result?.rows ?? [];
    expect(all.map((row) => row.id)).toEqual(Array.from({ length: rows }, (_, i) => i));
    expect(all[rows - 1]).toEqual({
      id: 119_999,
      address: `0x${(119_999 * 7919).toString(16).padStart(40, '0')}`,
      amount: 29_999.75,
      at: '2024-01-02 09:19:59.000 UTC',
    });
    expect(
      sent.filter((request) => request.path.includes(`/execution/${ran.execution_id}/results?`)),
    ).toHaveLength(2);

    sent.length = 0;
    const csv = await alice.exec.getLastResultCSV(queryId, { limit: 50_000 });
    expect(
      sent.filter((request) => request.path.includes(`/execution/${ran.execution_id}/results/csv?`)),
    ).toHaveLength(2);
    // The client keeps the first page's header line only.
    const [header, ...data] = csv.data.trimEnd().split('\n');
    expect(header).toBe('id,address,amount,at');
    expect(data.map((line) => Number(line.split(',')[0]))).toEqual(Array.from({ length: rows }, (_, i) => i));
    expect(data[rows - 1]).toBe(
      `119999,0x${(119_999 * 7919).toString(16).padStart(40, '0')},29999.75,2024-01-02 09:19:59.000 UTC`,
    );
  });

  it('runSql creates, runs and archives a query', async () => {
    const results = await bob.runSql({
      query_sql: 'SELECT token, max(price) AS top FROM alice.dataset_prices GROUP BY token ORDER BY token',
      isPrivate: true,
      archiveAfter: true,
      opts: POLL,
    });
    expect(results.state).toBe(ExecutionState.COMPLETED);
    expect(results.result?.rows).toEqual([
      { token: 'rETH', top: 2512.25 },
      { token: 'stETH', top: 2400 },
    ]);
    const query = await bob.query.readQuery(results.query_id);
    expect(query).toMatchObject({ name: 'API Query', is_private: true, is_archived: true });
  });

  it('exec.executeSql answers a pending execution of query 0 that runs to its result', async () => {
    const { execution_id, state } = await alice.exec.executeSql({ sql: 'SELECT 40 + 2 AS answer' });
    expect(state).toBe(ExecutionState.PENDING);
    let status = await alice.exec.getExecutionStatus(execution_id);
    while (status.state !== ExecutionState.COMPLETED && status.state !== ExecutionState.FAILED) {
      await new Promise((r) => setTimeout(r, 20));
      status = await alice.exec.getExecutionStatus(execution_id);
    }
    expect(status.query_id).toBe(0);
    const results = await alice.exec.getExecutionResults(execution_id);
    expect(results.result?.rows).toEqual([{ answer: 42 }]);
  });
});
