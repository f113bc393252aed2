import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import { TestClock, transformCalls } from './support/transform.js';

/**
 * Materialized views (Dune's five endpoints) against a real server with a clock of the test's
 * own: refreshed on their schedule and when asked, read by name in SQL, atomically replaced,
 * private as their query, 404 as absent, and kept across a restart with their schedules.
 */

const START = '2030-01-01T00:00:00.000Z';
let service: TestService;
let calls: ReturnType<typeof transformCalls>;
const clock = new TestClock(Date.parse(START));
const dataDir = tempDir();

const restart = async () => {
  await service.close();
  service = await startTestService({}, dataDir, { clock, scheduleTickMs: 20 });
  calls = transformCalls(service);
};

beforeAll(async () => {
  service = await startTestService({}, dataDir, { clock, scheduleTickMs: 20 });
  calls = transformCalls(service);
  await calls.upload('prices', 'token,price\nstETH,1\nrETH,2\n');
});
afterAll(async () => {
  await service.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const refreshes = (view: Record<string, unknown>) => (view.last_execution_ids as string[]).length;

describe('materialized views', () => {
  let queryId: number;

  it('upsert answers the full name and the refresh it started; the view is then read by name', async () => {
    queryId = await calls.createQuery(
      'SELECT token, price * 10 AS tenfold FROM dataset_prices ORDER BY token',
    );
    const created = await calls.upsertView({
      name: 'result_tenfold',
      query_id: queryId,
      cron_expression: '*/15 * * * *',
    });
    expect(created.status).toBe(200);
    expect(created.body.name).toBe('dune.bob.result_tenfold');
    await calls.waitFinished(created.body.execution_id as string);
    const view = await calls.waitView('dune.bob.result_tenfold', (v) => v.last_refreshed_at !== null);
    expect(view).toMatchObject({
      id: 'dune.bob.result_tenfold',
      sql_id: 'dune.bob.result_tenfold',
      query_id: queryId,
      owner: 'bob',
      is_private: false,
      row_count: 2,
      cron_expression: '*/15 * * * *',
      next_refresh_at: '2030-01-01T00:15:00.000Z',
      last_execution_ids: [created.body.execution_id],
      last_error: null,
    });
    expect(view.table_size_bytes).toBeGreaterThan(0);
    const expected = [
      { token: 'rETH', tenfold: 20 },
      { token: 'stETH', tenfold: 10 },
    ];
    expect(await calls.sql('SELECT * FROM result_tenfold')).toEqual({ rows: expected });
    expect(await calls.sql('SELECT * FROM dune.bob.result_tenfold', KEYS.alice)).toEqual({ rows: expected });
    expect(await calls.sql('SELECT * FROM bob.result_tenfold', KEYS.alice)).toEqual({ rows: expected });
    const dataset = await service.json<Record<string, unknown>>('/v1/datasets/dune.bob.result_tenfold');
    expect(dataset.body).toMatchObject({
      type: 'transformation_view',
      metadata: { query_id: String(queryId) },
    });
    const listed = await service.json<{ materialized_views: { id: string }[]; total: number }>(
      '/v1/materialized-views',
      { key: KEYS.bob },
    );
    expect(listed.body).toMatchObject({ total: 1, materialized_views: [{ id: 'dune.bob.result_tenfold' }] });
    // Listing is the owner's own.
    const alices = await service.json<{ total: number }>('/v1/materialized-views', { key: KEYS.alice });
    expect(alices.body.total).toBe(0);
  });

  // The official clients refresh, poll the execution, then read the view: it must be new by then.
  it('has the rows of a refresh by the time its execution is seen completed', async () => {
    await calls.upload('ticks', 'tick\n1\n');
    const ticks = await calls.createQuery('SELECT count(*) AS n FROM dataset_ticks');
    const created = await calls.upsertView({ name: 'result_ticks', query_id: ticks });
    await calls.waitFinished(created.body.execution_id as string);
    for (let round = 2; round <= 4; round++) {
      await calls.upload('ticks', `tick\n${Array.from({ length: round }, (_, i) => i).join('\n')}\n`);
      const refresh = await service.json<{ execution_id: string }>(
        '/v1/materialized-views/result_ticks/refresh',
        {
          method: 'POST',
          key: KEYS.bob,
          body: '{}',
        },
      );
      const status = await calls.waitFinished(refresh.body.execution_id);
      expect(status.state).toBe('QUERY_STATE_COMPLETED');
      // At once: no waiting for the view.
      const view = (await calls.view('result_ticks')).body;
      expect(view).toMatchObject({ row_count: 1, last_error: null });
      expect(view.last_refreshed_at).toBe(status.execution_ended_at);
      expect(await calls.sql('SELECT n FROM result_ticks')).toEqual({ rows: [{ n: round }] });
    }
  });

  it('is refreshed by its schedule when the clock reaches its time, not before', async () => {
    await calls.upload('prices', 'token,price\nstETH,3\nrETH,4\nswETH,5\n');
    const before = (await calls.view('result_tenfold')).body;
    clock.set('2030-01-01T00:14:59.000Z');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(refreshes((await calls.view('result_tenfold')).body)).toBe(refreshes(before));
    expect((await calls.sql('SELECT count(*) AS n FROM result_tenfold')).rows).toEqual([{ n: 2 }]);
    clock.set('2030-01-01T00:15:00.000Z');
    const after = await calls.waitView(
      'result_tenfold',
      (v) => refreshes(v) === refreshes(before) + 1 && v.row_count === 3,
    );
    expect(after.next_refresh_at).toBe('2030-01-01T00:30:00.000Z');
    expect((await calls.sql('SELECT tenfold FROM result_tenfold ORDER BY tenfold')).rows).toEqual([
      { tenfold: 30 },
      { tenfold: 40 },
      { tenfold: 50 },
    ]);
  });

  it('keeps the old rows while a refresh runs and when a refresh fails, saying why', async () => {
    const slow = await calls.createQuery(
      'SELECT count(*) AS n FROM dataset_prices, (SELECT sum(x) AS s FROM range(2000000000) t(x)) b',
    );
    const created = await calls.upsertView({ name: 'result_slow', query_id: slow });
    const first = await calls.waitView('result_slow', (v) => v.last_refreshed_at !== null);
    expect((await calls.sql('SELECT n FROM result_slow')).rows).toEqual([{ n: 3 }]);
    await calls.upload('prices', 'token,price\nstETH,3\n');
    const refresh = await service.json<{ execution_id: string }>(
      '/v1/materialized-views/result_slow/refresh',
      {
        method: 'POST',
        key: KEYS.bob,
        body: JSON.stringify({ performance: 'large' }),
      },
    );
    expect(refresh.status).toBe(200);
    expect(refresh.body.execution_id).not.toBe(created.body.execution_id);
    // While the refresh runs, readers get the previous table whole.
    expect((await calls.sql('SELECT n FROM result_slow')).rows).toEqual([{ n: 3 }]);
    const status = await service.json<{ is_execution_finished: boolean }>(
      `/v1/execution/${refresh.body.execution_id}/status`,
      { key: KEYS.bob },
    );
    expect(status.body.is_execution_finished).toBe(false);
    await calls.waitView('result_slow', (v) => v.last_refreshed_at !== first.last_refreshed_at);
    expect((await calls.sql('SELECT n FROM result_slow')).rows).toEqual([{ n: 1 }]);
    // Its refreshes are the owner's executions.
    const history = await service.json<{ executions: { execution_id: string }[] }>('/v1/executions', {
      key: KEYS.bob,
    });
    expect(history.body.executions.map((e) => e.execution_id)).toContain(refresh.body.execution_id);
    const failing = await calls.createQuery(
      "SELECT CASE WHEN price > 4 THEN 'x'::INTEGER ELSE 1 END AS v FROM dataset_prices",
    );
    await calls.upload('prices', 'token,price\nstETH,1\n');
    const made = await calls.upsertView({ name: 'result_flaky', query_id: failing });
    await calls.waitView('result_flaky', (v) => v.row_count === 1);
    await calls.upload('prices', 'token,price\nstETH,9\n');
    const again = await service.json<{ execution_id: string }>(
      '/v1/materialized-views/result_flaky/refresh',
      {
        method: 'POST',
        key: KEYS.bob,
      },
    );
    const failed = await calls.waitView('result_flaky', (v) => v.last_error !== null);
    expect(failed.last_error).toMatch(/Could not convert string 'x' to INT32/);
    expect(failed.last_execution_ids).toEqual([again.body.execution_id, made.body.execution_id]);
    expect((await calls.sql('SELECT v FROM result_flaky')).rows).toEqual([{ v: 1 }]);
  });

  it('refuses bad bodies with a 400 naming the field, and conflicts with a 409', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [
        { name: 'result_x', query_id: queryId, cron_expression: '*/5 * * * *' },
        /cron_expression.*15 minutes/,
      ],
      [{ name: 'result_x', query_id: queryId, cron_expression: '0 0 1 * *' }, /cron_expression.*once a week/],
      [{ name: 'result_x', query_id: queryId, cron_expression: 'every hour' }, /cron_expression/],
      [{ name: 'result_x', query_id: queryId, cron_expression: '0 * * * * *' }, /five fields/],
      [{ name: 'daily', query_id: queryId }, /name.*result_/],
      [{ name: 'dune.bob.result_x', query_id: queryId }, /name/],
      [{ name: 'result_x"; DROP TABLE x; --', query_id: queryId }, /name/],
      [{ name: 'result_x' }, /query_id/],
      [{ name: 'result_x', query_id: '1' }, /query_id/],
      [{ name: 'result_x', query_id: queryId, performance: 'huge' }, /performance/],
      [{ name: 'result_x', query_id: queryId, expires_at: '2000-01-01T00:00:00Z' }, /expires_at/],
      [{ name: 'result_x', query_id: queryId, colour: 'red' }, /colour/],
    ];
    for (const [body, message] of bad) {
      const answer = await calls.upsertView(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatch(message);
    }
    expect((await calls.view('result_x')).status).toBe(404);
    const other = await calls.createQuery('SELECT 1 AS one');
    const clash = await calls.upsertView({ name: 'result_tenfold', query_id: other });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toContain(`query ${queryId}`);
    const table = await calls.upsertView({ name: 'result_taken', query_id: other }, KEYS.admin);
    expect(table.status).toBe(200);
    expect((await calls.upsertView({ name: 'result_x', query_id: 999_999_999_999 })).status).toBe(404);
    expect(
      (await calls.upsertView({ name: 'result_p', query_id: other, is_private: true }, KEYS.alice)).status,
    ).toBe(403);
  });

  it("changes only by its refreshes: the tables API refuses to write a view's table", async () => {
    const ref = 'bob/result_tenfold';
    expect((await service.json(`/v1/table/${ref}/clear`, { method: 'POST', key: KEYS.bob })).status).toBe(
      409,
    );
    expect((await service.json(`/v1/table/${ref}`, { method: 'DELETE', key: KEYS.bob })).status).toBe(409);
    const insert = await service.json(`/v1/table/${ref}/insert`, {
      method: 'POST',
      key: KEYS.bob,
      headers: { 'content-type': 'text/csv' },
      body: 'token,tenfold\nx,1\n',
    });
    expect(insert.status).toBe(409);
    const create = await service.json('/v1/table/create', {
      method: 'POST',
      key: KEYS.bob,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        namespace: 'bob',
        table_name: 'result_tenfold',
        schema: [{ name: 'a', type: 'bigint' }],
      }),
    });
    expect(create.status).toBe(409);
    // Someone else's namespace is refused for that reason first, saying nothing about the view.
    expect((await service.json(`/v1/table/${ref}/clear`, { method: 'POST', key: KEYS.alice })).status).toBe(
      403,
    );
    expect((await calls.sql('SELECT count(*) AS n FROM result_tenfold')).rows).toEqual([{ n: 3 }]);
  });

  it('is private as its query: hidden from others everywhere, 404 as if absent', async () => {
    const secret = await calls.createQuery('SELECT 42 AS answer', KEYS.bob, { is_private: true });
    await calls.upsertView({ name: 'result_secret', query_id: secret });
    const view = await calls.waitView('result_secret', (v) => v.row_count === 1);
    expect(view.is_private).toBe(true);
    const absent = await calls.view('dune.bob.result_nothing', KEYS.alice);
    const hidden = await calls.view('dune.bob.result_secret', KEYS.alice);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error).toBe(String(absent.body.error).replace('result_nothing', 'result_secret'));
    for (const [method, path] of [
      ['DELETE', '/v1/materialized-views/dune.bob.result_secret'],
      ['POST', '/v1/materialized-views/dune.bob.result_secret/refresh'],
    ] as const)
      expect((await service.json(path, { method, key: KEYS.alice })).status, path).toBe(404);
    expect((await service.json('/v1/datasets/dune.bob.result_secret', { key: KEYS.alice })).status).toBe(404);
    expect((await calls.sql('SELECT * FROM bob.result_secret', KEYS.alice)).error).toMatch(/does not exist/);
    expect((await calls.sql('SELECT * FROM result_secret')).rows).toEqual([{ answer: 42 }]);
    // Another's public view: readable, but only its owner refreshes or deletes it (403).
    expect((await calls.view('dune.bob.result_tenfold', KEYS.alice)).status).toBe(200);
    expect(
      (
        await service.json('/v1/materialized-views/dune.bob.result_tenfold/refresh', {
          method: 'POST',
          key: KEYS.alice,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await service.json('/v1/materialized-views/dune.bob.result_tenfold', {
          method: 'DELETE',
          key: KEYS.alice,
        })
      ).status,
    ).toBe(403);
    // A query made private makes its views private at once.
    await service.json(`/v1/query/${queryId}/private`, { method: 'POST', key: KEYS.bob });
    expect((await calls.view('dune.bob.result_tenfold', KEYS.alice)).status).toBe(404);
    expect((await calls.sql('SELECT * FROM bob.result_tenfold', KEYS.alice)).error).toMatch(/does not exist/);
    await service.json(`/v1/query/${queryId}/unprivate`, { method: 'POST', key: KEYS.bob });
  });

  it('keeps its views, schedules and tables across a restart, and refreshes on schedule after it', async () => {
    const before = (await calls.view('result_tenfold')).body;
    await restart();
    const after = (await calls.view('result_tenfold')).body;
    expect(after).toMatchObject({
      cron_expression: '*/15 * * * *',
      next_refresh_at: before.next_refresh_at,
      last_execution_ids: before.last_execution_ids,
      row_count: before.row_count,
    });
    expect((await calls.sql('SELECT count(*) AS n FROM result_tenfold')).rows).toEqual([{ n: 3 }]);
    clock.set('2030-01-01T00:30:00.000Z');
    const refreshed = await calls.waitView(
      'result_tenfold',
      (v) => refreshes(v) === refreshes(before) + 1 && v.row_count === 1,
    );
    expect(refreshed.next_refresh_at).toBe('2030-01-01T00:45:00.000Z');
  });

  it('deletes a view: its table is gone, its name free, and every path answers 404', async () => {
    const removed = await service.json<{ message: string }>('/v1/materialized-views/dune.bob.result_slow', {
      method: 'DELETE',
      key: KEYS.bob,
    });
    expect(removed.body.message).toBe('Materialized view dune.bob.result_slow successfully deleted');
    expect((await calls.view('result_slow')).status).toBe(404);
    expect((await calls.sql('SELECT * FROM result_slow')).error).toMatch(/does not exist/);
    expect(
      (await service.json('/v1/materialized-views/result_slow', { method: 'DELETE', key: KEYS.bob })).status,
    ).toBe(404);
    expect(
      (await service.json('/v1/materialized-views/result_slow/refresh', { method: 'POST', key: KEYS.bob }))
        .status,
    ).toBe(404);
    expect(
      (await service.json('/v1/materialized-views/result_slow', { method: 'PATCH', key: KEYS.bob })).status,
    ).toBe(405);
  });
});
