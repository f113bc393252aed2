import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../support/results.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import {
  createQuery,
  execute,
  executeSql,
  executing,
  finished,
  post,
  RUNAWAY_SQL,
  rowsOf,
  uploadTable,
} from './support/queries.js';

/**
 * DESIGN §10: users' SQL through the executions — parameters, latest result per parameter
 * set, ad-hoc SQL, the queue, cancel rights, privacy of results, `query_<id>`, failures.
 */

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
let service: TestService;

const PRICES = 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n2024-01-03,stETH,2400\n';

async function cancel(executionId: string, key: string) {
  return service.json<{ success?: boolean; error?: string }>(
    `/v1/execution/${executionId}/cancel`,
    post({}, key),
  );
}

beforeAll(async () => {
  service = await startTestService({ QUERIES_DIR, MAX_RUNNING_QUERIES: '1' });
  await uploadTable(service, 'prices', PRICES);
  await uploadTable(service, 'secret', 'k,v\n1,classified\n', { key: KEYS.bob, isPrivate: true });
  await uploadTable(service, 'open', 'k,v\n1,public\n', { key: KEYS.bob });
});
afterAll(async () => {
  await service.stop();
});

describe("the operator's scheduled runs", () => {
  it('are cancelled by an admin only; other keys get 403', async () => {
    // The scheduler starts every query file at start; "Slow" runs until it is cancelled.
    let slow: Envelope | undefined;
    for (let i = 0; i < 500 && !slow; i++) {
      const { body } = await service.json<Envelope>('/v1/query/1002/results');
      if (body.execution_id) slow = body;
      else await new Promise((r) => setTimeout(r, 20));
    }
    if (!slow) throw new Error('the scheduler did not start query 1002');
    for (const key of [KEYS.alice, KEYS.bob]) {
      const refused = await cancel(slow.execution_id, key);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/only they, the query's owner or an admin/);
    }
    expect((await cancel(slow.execution_id, KEYS.admin)).body).toEqual({ success: true });
    expect((await finished(service, slow.execution_id)).state).toBe('QUERY_STATE_CANCELLED');
  });
});

describe('a saved query with parameters', () => {
  let id: number;
  beforeAll(async () => {
    id = await createQuery(service, {
      name: 'Prices above',
      query_sql:
        "SELECT day, token, price FROM dataset_prices WHERE token = '{{token}}' AND price >= {{min}} AND day >= date '{{since}}' ORDER BY day",
      parameters: [
        { key: 'token', type: 'text', value: 'stETH' },
        { key: 'min', type: 'number', value: '0' },
        { key: 'since', type: 'datetime', value: '2024-01-01 00:00:00' },
      ],
    });
  });

  it('answers execute at once with PENDING, runs with the defaults, and serves every result parameter', async () => {
    const executionId = await execute(service, id);
    const status = await finished(service, executionId);
    expect(status).toMatchObject({ query_id: id, state: 'QUERY_STATE_COMPLETED' });
    expect(status.result_metadata).toMatchObject({
      total_row_count: 2,
      column_names: ['day', 'token', 'price'],
    });
    const { body } = await service.json<Envelope>(
      `/v1/execution/${executionId}/results?limit=1&columns=price`,
    );
    expect(body.result?.rows).toEqual([{ price: 2301.5 }]);
    expect(body.next_uri).toContain(`/v1/execution/${executionId}/results?`);
    const sorted = await service.json<Envelope>(
      `/v1/query/${id}/results?sort_by=price%20desc&filters=price%20%3E%202000`,
    );
    expect(sorted.body.result?.rows.map((r) => r.price)).toEqual([2400, 2301.5]);
    const sample = await service.json<Envelope>(`/v1/query/${id}/results?sample_count=1`);
    expect(sample.body.result?.rows).toHaveLength(1);
    const csv = await service.request(`/v1/query/${id}/results/csv`);
    expect(await csv.text()).toBe('day,token,price\n2024-01-01,stETH,2301.5\n2024-01-03,stETH,2400.0\n');
  });

  it('takes values at execute time, and keeps the latest result of each parameter set apart', async () => {
    const reth = await execute(service, id, { query_parameters: { token: 'rETH' }, performance: 'large' });
    expect((await rowsOf(service, reth)).map((r) => r.token)).toEqual(['rETH']);
    const late = await execute(service, id, { query_parameters: { since: '2024-01-03', min: 2000 } });
    expect((await rowsOf(service, late)).map((r) => r.day)).toEqual(['2024-01-03']);
    const latest = async (query: string) =>
      (await service.json<Envelope>(`/v1/query/${id}/results${query}`)).body.execution_id;
    expect(await latest('?params.token=rETH')).toBe(reth);
    // Canonical forms compare equal: 2000 and 2000.0, a date and its midnight.
    expect(await latest('?params.min=2000.0&params.since=2024-01-03%2000:00:00')).toBe(late);
    expect(await latest('?params.since=2024-01-03&params.min=2e3&params.token=stETH')).toBe(late);
    expect(await latest('')).not.toBe(late);
    const never = await service.json<{ error: string }>(`/v1/query/${id}/results?params.token=ETHx`);
    expect(never.status).toBe(404);
    expect(never.body.error).toMatch(/no result for these parameter values/);
    // On an execution's results, params.NAME is accepted and changes nothing.
    const pinned = await service.json<Envelope>(`/v1/execution/${reth}/results?params.token=stETH`);
    expect(pinned.body.result?.rows.map((r) => r.token)).toEqual(['rETH']);
  });

  it('refuses unknown names and bad values with a 400 naming them, at execute and on results', async () => {
    for (const [body, message] of [
      [
        { query_parameters: { colour: 'red' } },
        /unknown parameter "colour"; this query takes "token", "min", "since"/,
      ],
      [{ query_parameters: { min: 'lots' } }, /parameter "min" \(number\) needs a finite number/],
      [{ query_parameters: { since: '2024-02-30' } }, /parameter "since" \(datetime\)/],
      [{ query_parameters: { token: 7 } }, /parameter "token" \(text\) value must be a string/],
      [{ query_parameters: 'token=x' }, /"query_parameters" must be an object/],
      [{ performance: 'turbo' }, /"performance" must be "medium" or "large"/],
      [{ wat: 1 }, /unknown field "wat"/],
    ] as const) {
      const { status, body: answer } = await service.json<{ error: string }>(
        `/v1/query/${id}/execute`,
        post(body),
      );
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error).toMatch(message);
    }
    for (const [query, message] of [
      ['params.colour=red', /unknown parameter "colour"/],
      ['params.min=lots', /parameter "min" \(number\)/],
      ['params.min=1&params.min=2', /more than once/],
    ] as const) {
      const { status, body } = await service.json<{ error: string }>(`/v1/query/${id}/results?${query}`);
      expect(status, query).toBe(400);
      expect(body.error).toMatch(message);
    }
  });

  it("cannot break out of a text value's quotes", async () => {
    const attempt = await execute(service, id, {
      query_parameters: { token: "x' OR '1'='1" },
    });
    expect(await rowsOf(service, attempt)).toEqual([]);
  });
});

describe('ad-hoc SQL', () => {
  it('runs as an execution of query 0 that only its executor reads or cancels', async () => {
    const executionId = await executeSql(service, 'SELECT 42 AS answer, 1/0 AS quotient');
    const rows = await rowsOf(service, executionId);
    expect(rows).toEqual([{ answer: 42, quotient: 'Infinity' }]); // 1/0 is a double division
    const { body } = await service.json<Envelope>(`/v1/execution/${executionId}/results`);
    expect(body.query_id).toBe(0);
    for (const key of [KEYS.bob, KEYS.admin]) {
      expect((await service.json(`/v1/execution/${executionId}/status`, { key })).status).toBe(404);
      expect((await service.json(`/v1/execution/${executionId}/results/csv`, { key })).status).toBe(404);
    }
    expect((await cancel(executionId, KEYS.bob)).status).toBe(404);
    expect((await cancel(executionId, KEYS.alice)).body).toEqual({ success: false });
  });

  it('refuses bodies without SQL, other statements and tables nobody may read', async () => {
    for (const [body, message] of [
      [{}, /"sql" is required/],
      [{ sql: 42 }, /"sql" must be a string/],
      [{ sql: 'SELECT 1', query_parameters: {} }, /unknown field "query_parameters"/],
      [{ sql: 'CREATE TABLE alice.x AS SELECT 1' }, /query/],
      [{ sql: 'SELECT * FROM bob.dataset_secret' }, /does not exist/],
    ] as const) {
      const { status, body: answer } = await service.json<{ error: string }>('/v1/sql/execute', post(body));
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error).toMatch(message);
    }
  });

  it('ends FAILED with DuckDB’s message on an overflow, a bad cast, a misspelt column', async () => {
    for (const [sql, message] of [
      ['SELECT 9223372036854775807::BIGINT + 1 AS x', /Overflow in addition of INT64/],
      ["SELECT 'abc'::INTEGER AS x", /Conversion Error: Could not convert string 'abc' to INT32/],
      // A misspelt column: the binder's candidates, from the tables the query itself reads.
      [
        'SELECT prise FROM dataset_prices',
        /Referenced column "prise" not found.* Did you mean "(dataset_prices\.)?price"/,
      ],
    ] as const) {
      const status = await finished(service, await executeSql(service, sql));
      expect(status.state).toBe('QUERY_STATE_FAILED');
      expect(status.error?.type).toBe('FAILED_TYPE_EXECUTION_FAILED');
      expect(status.error?.message).toMatch(message);
    }
  });
});

describe('the queue, cancel and a runaway query', () => {
  it('runs MAX_RUNNING_QUERIES at once, queues the rest with their place, and cancels both kinds', async () => {
    const running = await executeSql(service, RUNAWAY_SQL);
    await executing(service, running);
    const second = await executeSql(service, 'SELECT 2');
    const third = await executeSql(service, 'SELECT 3');
    const positions = [];
    for (const id of [second, third]) {
      const { body } = await service.json<Envelope>(`/v1/execution/${id}/status`);
      expect(body.state).toBe('QUERY_STATE_PENDING');
      positions.push(body.queue_position);
    }
    expect(positions).toEqual([1, 2]);
    expect((await cancel(second, KEYS.alice)).body).toEqual({ success: true });
    expect((await service.json<Envelope>(`/v1/execution/${third}/status`)).body.queue_position).toBe(1);
    expect((await cancel(running, KEYS.alice)).body).toEqual({ success: true });
    const stopped = await finished(service, running);
    expect(stopped.state).toBe('QUERY_STATE_CANCELLED');
    expect(stopped.cancelled_at).toBeDefined();
    expect((await finished(service, second)).state).toBe('QUERY_STATE_CANCELLED');
    expect(await rowsOf(service, third)).toEqual([{ 3: 3 }]);
  });

  it('keeps answering /health and cached results pages while a query runs away', async () => {
    const id = await createQuery(service, { name: 'cached', query_sql: 'SELECT * FROM dataset_prices' });
    await rowsOf(service, await execute(service, id));
    const page = await service.request(`/v1/query/${id}/results?limit=2`);
    const before = await page.text();
    const runaway = await executeSql(service, RUNAWAY_SQL);
    await executing(service, runaway);
    for (let i = 0; i < 20; i++) {
      const health = await service.json('/health', { key: null });
      expect(health).toEqual({ status: 200, body: { status: 'ok' } });
      const again = await service.request(`/v1/query/${id}/results?limit=2`);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(before);
    }
    expect((await service.json<Envelope>(`/v1/execution/${runaway}/status`)).body.state).toBe(
      'QUERY_STATE_EXECUTING',
    );
    await cancel(runaway, KEYS.alice);
    expect((await finished(service, runaway)).state).toBe('QUERY_STATE_CANCELLED');
  });

  it("lets the executor, the query's owner and admins cancel; others get 403", async () => {
    const id = await createQuery(service, { name: 'shared', query_sql: RUNAWAY_SQL });
    const byBob = await execute(service, id, {}, KEYS.bob);
    expect((await cancel(byBob, KEYS.carol)).status).toBe(403);
    expect((await cancel(byBob, KEYS.alice)).body).toEqual({ success: true });
    const byCarol = await execute(service, id, {}, KEYS.carol);
    expect((await cancel(byCarol, KEYS.bob)).status).toBe(403);
    expect((await cancel(byCarol, KEYS.admin)).body).toEqual({ success: true });
    for (const executionId of [byBob, byCarol])
      expect((await finished(service, executionId)).state).toBe('QUERY_STATE_CANCELLED');
  });
});

describe('privacy of results', () => {
  it('an execution that read a private table is readable by its executor only', async () => {
    const id = await createQuery(
      service,
      {
        name: 'mixed',
        query_sql:
          'SELECT s.v AS secret, o.v AS open FROM bob.dataset_secret s JOIN dataset_open o USING (k)',
      },
      KEYS.bob,
    );
    const run = await execute(service, id, {}, KEYS.bob);
    expect(await rowsOf(service, run, KEYS.bob)).toEqual([{ secret: 'classified', open: 'public' }]);
    for (const key of [KEYS.alice, KEYS.admin]) {
      expect((await service.json(`/v1/execution/${run}/status`, { key })).status).toBe(404);
      expect((await service.json(`/v1/execution/${run}/results`, { key })).status).toBe(404);
      expect((await service.json(`/v1/query/${id}/results`, { key })).status).toBe(404);
    }
    expect(
      (await service.json<Envelope>(`/v1/query/${id}/results`, { key: KEYS.bob })).body.execution_id,
    ).toBe(run);
    // Alice may see the query, but not the table: for her it does not exist.
    const refused = await service.json<{ error: string }>(`/v1/query/${id}/execute`, post({}, KEYS.alice));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/bob\.dataset_secret does not exist/);
    // An admin sees every table; their run is theirs alone too.
    const byAdmin = await execute(service, id, {}, KEYS.admin);
    await rowsOf(service, byAdmin, KEYS.admin);
    expect((await service.json(`/v1/execution/${byAdmin}/results`, { key: KEYS.bob })).status).toBe(404);
  });

  it('an execution of public tables is readable by everyone who may see the query', async () => {
    const id = await createQuery(
      service,
      { name: 'open', query_sql: 'SELECT v FROM bob.dataset_open' },
      KEYS.bob,
    );
    const run = await execute(service, id, {}, KEYS.bob);
    await rowsOf(service, run, KEYS.bob);
    const { body } = await service.json<Envelope>(`/v1/query/${id}/results`, { key: KEYS.carol });
    expect(body.result?.rows).toEqual([{ v: 'public' }]);
    // An unqualified name is the query owner's table, whoever runs the query.
    await uploadTable(service, 'open', 'k,v\n1,alice own\n');
    const unqualified = await createQuery(
      service,
      { name: 'u', query_sql: 'SELECT v FROM dataset_open' },
      KEYS.bob,
    );
    expect(await rowsOf(service, await execute(service, unqualified, {}, KEYS.alice))).toEqual([
      { v: 'public' },
    ]);
    expect(await rowsOf(service, await executeSql(service, 'SELECT v FROM dataset_open'))).toEqual([
      { v: 'alice own' },
    ]);
    await service.json(`/v1/query/${id}/private`, post({}, KEYS.bob));
    expect((await service.json(`/v1/execution/${run}/results`, { key: KEYS.carol })).status).toBe(404);
  });
});

describe('query_<id>', () => {
  it('reads the latest result of a query the caller may see, as private as its source', async () => {
    const prices = await createQuery(service, {
      name: 'p',
      query_sql: 'SELECT token, price FROM dataset_prices',
    });
    await rowsOf(service, await execute(service, prices));
    const derived = await executeSql(
      service,
      `SELECT token, max(price) AS top FROM query_${prices} GROUP BY token ORDER BY token`,
      KEYS.carol,
    );
    expect(await rowsOf(service, derived, KEYS.carol)).toEqual([
      { token: 'rETH', top: 2512.25 },
      { token: 'stETH', top: 2400 },
    ]);
    const secret = await createQuery(
      service,
      { name: 's', query_sql: 'SELECT v FROM dataset_secret' },
      KEYS.bob,
    );
    await rowsOf(service, await execute(service, secret, {}, KEYS.bob), KEYS.bob);
    const refused = await service.json<{ error: string }>(
      '/v1/sql/execute',
      post({ sql: `SELECT * FROM query_${secret}` }, KEYS.carol),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(new RegExp(`query_${secret} does not exist`));
    // Bob's own read of it is his alone, as the secret table's would be.
    const own = await executeSql(service, `SELECT * FROM query_${secret}`, KEYS.bob);
    expect(await rowsOf(service, own, KEYS.bob)).toEqual([{ v: 'classified' }]);
    const view = await createQuery(
      service,
      { name: 'view', query_sql: `SELECT * FROM query_${secret}` },
      KEYS.bob,
    );
    const viewRun = await execute(service, view, {}, KEYS.bob);
    await rowsOf(service, viewRun, KEYS.bob);
    expect((await service.json(`/v1/execution/${viewRun}/results`, { key: KEYS.carol })).status).toBe(404);
  });
});

describe('limits', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({
      QUERY_TIMEOUT_SECONDS: '1',
      MAX_RESULT_ROWS: '100',
      DUCKDB_MEMORY_LIMIT: '64MB',
    });
  });
  afterAll(async () => {
    await limited.stop();
  });

  it('stops a query at QUERY_TIMEOUT_SECONDS: FAILED, saying the time limit was reached', async () => {
    const status = await finished(limited, await executeSql(limited, RUNAWAY_SQL));
    expect(status.state).toBe('QUERY_STATE_FAILED');
    expect(status.error).toEqual({
      type: 'FAILED_TYPE_EXECUTION_FAILED',
      message:
        'the query ran longer than the time limit of 1 seconds (QUERY_TIMEOUT_SECONDS) and was stopped',
    });
  });

  it('ends FAILED with DuckDB’s message when the query runs out of memory', async () => {
    const status = await finished(
      limited,
      await executeSql(limited, "SELECT string_agg(repeat('x', 1000), ',') AS s FROM range(1000000)"),
    );
    expect(status.state).toBe('QUERY_STATE_FAILED');
    expect(status.error?.message).toMatch(/Out of Memory/);
  });

  it('keeps a result over MAX_RESULT_ROWS truncated, as a partial result', async () => {
    const executionId = await executeSql(limited, 'SELECT range AS i FROM range(1000)');
    expect((await finished(limited, executionId)).state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
    const refused = await limited.json<Envelope>(`/v1/execution/${executionId}/results`);
    expect(refused.body).toMatchObject({
      state: 'QUERY_STATE_FAILED',
      error: { type: 'FAILED_TYPE_RESULT_TOO_LARGE' },
    });
    const partial = await limited.json<Envelope>(
      `/v1/execution/${executionId}/results?allow_partial_results=true`,
    );
    expect(partial.body.result?.rows).toHaveLength(100);
  });

  it('stops a runaway result at the cap, keeping its first rows in order; exactly the cap is whole', async () => {
    // Ten trillion rows: stored only because the run stops at row 101.
    const runaway = await executeSql(limited, 'SELECT range AS i FROM range(10000000000000)');
    expect((await finished(limited, runaway)).state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
    const page = await limited.json<Envelope>(`/v1/execution/${runaway}/results?allow_partial_results=true`);
    expect(page.body.result?.rows).toEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
    const sorted = await executeSql(limited, 'SELECT range AS i FROM range(150) ORDER BY i DESC');
    expect((await finished(limited, sorted)).state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
    const cut = await limited.json<Envelope>(`/v1/execution/${sorted}/results?allow_partial_results=true`);
    expect(cut.body.result?.rows).toEqual(Array.from({ length: 100 }, (_, i) => ({ i: 149 - i })));
    const whole = await executeSql(limited, 'SELECT range AS i FROM range(100) ORDER BY i DESC');
    expect((await finished(limited, whole)).state).toBe('QUERY_STATE_COMPLETED');
    const all = await limited.json<Envelope>(`/v1/execution/${whole}/results`);
    expect(all.body.result?.rows).toEqual(Array.from({ length: 100 }, (_, i) => ({ i: 99 - i })));
  });

  // A run starts its row counter where the previous clean run on the same counter ended,
  // without reading it (run-results.ts): a wrong start would cut a result early or late.
  it('counts every run from where the last ended: runs of 100 rows stay whole, of 101 are cut', async () => {
    const states = async (sqls: string[]) =>
      Promise.all(sqls.map(async (sql) => (await finished(limited, await executeSql(limited, sql))).state));
    const whole = 'SELECT range AS i FROM range(100)';
    const over = 'SELECT range AS i FROM range(101)';
    for (let round = 0; round < 3; round++) {
      expect(await states([whole, whole])).toEqual(['QUERY_STATE_COMPLETED', 'QUERY_STATE_COMPLETED']);
      expect(await states([over])).toEqual(['QUERY_STATE_COMPLETED_PARTIAL']);
      expect(await states(['SELECT 1 WHERE false', whole, over, 'SELECT 42'])).toEqual([
        'QUERY_STATE_COMPLETED',
        'QUERY_STATE_COMPLETED',
        'QUERY_STATE_COMPLETED_PARTIAL',
        'QUERY_STATE_COMPLETED',
      ]);
    }
  });
});

describe('execution records', () => {
  it("a run's COMPLETED record is written once it is seen; one that waits is recorded pending first", async () => {
    const rows = (id: string) =>
      service.database.read((session) =>
        session.all<{ state: string; revision: number }>(
          'SELECT state, revision FROM _service.executions WHERE execution_id = ? ORDER BY revision',
          [id],
        ),
      );
    // A quick run is recorded once, just after it completes, unless it took longer than the
    // PENDING record's delay: either way its record is the COMPLETED one.
    const quick = await executeSql(service, 'SELECT 1');
    await rowsOf(service, quick);
    await service.executions.store.landed();
    const quickRows = await rows(quick);
    expect(quickRows.at(-1)).toEqual({ state: 'QUERY_STATE_COMPLETED', revision: 1 });
    expect(quickRows.slice(0, -1)).toEqual(
      quickRows.length === 2 ? [{ state: 'QUERY_STATE_PENDING', revision: 0 }] : [],
    );
    const running = await executeSql(service, RUNAWAY_SQL);
    await executing(service, running);
    const waiting = await executeSql(service, 'SELECT 2');
    for (let i = 0; i < 500 && (await rows(waiting)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await rows(waiting)).toEqual([{ state: 'QUERY_STATE_PENDING', revision: 0 }]);
    await cancel(running, KEYS.alice);
    await rowsOf(service, waiting);
    await service.executions.store.landed();
    expect(await rows(waiting)).toEqual([
      { state: 'QUERY_STATE_PENDING', revision: 0 },
      { state: 'QUERY_STATE_COMPLETED', revision: 1 },
    ]);
  });
});

describe('executions survive a restart', () => {
  it('keeps owners, parameter sets and privacy; a run cut short by the shutdown reads FAILED', async () => {
    const dataDir = tempDir();
    let first = await startTestService({ MAX_RUNNING_QUERIES: '1' }, dataDir);
    await uploadTable(first, 'secret', 'k,v\n1,classified\n', { key: KEYS.bob, isPrivate: true });
    const id = await createQuery(
      first,
      {
        name: 'p',
        query_sql: "SELECT v, '{{tag}}' AS tag FROM dataset_secret",
        parameters: [{ key: 'tag', type: 'text', value: 'a' }],
      },
      KEYS.bob,
    );
    const done = await execute(first, id, { query_parameters: { tag: 'b' } }, KEYS.bob);
    await rowsOf(first, done, KEYS.bob);
    const cut = await executeSql(first, RUNAWAY_SQL);
    await executing(first, cut);
    // Queued, and closed before its PENDING record would have been written on its own.
    const queued = await executeSql(first, 'SELECT 2');
    await first.close();
    first = await startTestService({}, dataDir);
    try {
      const latest = await first.json<Envelope>(`/v1/query/${id}/results?params.tag=b`, { key: KEYS.bob });
      expect(latest.body.execution_id).toBe(done);
      expect(latest.body.result?.rows).toEqual([{ v: 'classified', tag: 'b' }]);
      expect((await first.json(`/v1/query/${id}/results`, { key: KEYS.bob })).status).toBe(404);
      expect((await first.json(`/v1/execution/${done}/results`, { key: KEYS.admin })).status).toBe(404);
      for (const id of [cut, queued]) {
        const status = await finished(first, id);
        expect(status.state).toBe('QUERY_STATE_FAILED');
        expect(status.error?.type).toBe('FAILED_TYPE_SERVICE_RESTARTED');
      }
      expect((await first.json(`/v1/execution/${cut}/status`, { key: KEYS.bob })).status).toBe(404);
    } finally {
      await first.stop();
    }
  });

  it("drops result tables that no finished record with a result names (a crash after a result's commit)", async () => {
    const dataDir = tempDir();
    let first = await startTestService({}, dataDir);
    // Over the rows rendered in the run: its rows commit before its record.
    const large = await executeSql(first, 'SELECT range AS i FROM range(5000)');
    expect((await finished(first, large)).state).toBe('QUERY_STATE_COMPLETED');
    const resultTables = () =>
      first.database.read((session) =>
        session.all<{ name: string }>(
          "SELECT table_name AS name FROM duckdb_tables() WHERE schema_name = '_results' ORDER BY 1",
        ),
      );
    // What a crash after the rows' commit leaves: a table, and no finished record.
    await first.database.write((session) =>
      session.run('CREATE TABLE _results.e_01jz0000000000000000000000 AS SELECT 1 AS i'),
    );
    // A failed run whose table's drop failed: a finished record, but no result to keep.
    const failed = await executeSql(first, "SELECT error('no') AS y");
    expect((await finished(first, failed)).state).toBe('QUERY_STATE_FAILED');
    await first.database.write((session) =>
      session.run(`CREATE TABLE _results.e_${failed.toLowerCase()} AS SELECT 1 AS i`),
    );
    expect((await resultTables()).map((t) => t.name)).toEqual(
      ['e_01jz0000000000000000000000', `e_${large.toLowerCase()}`, `e_${failed.toLowerCase()}`].sort(),
    );
    await first.close();
    first = await startTestService({}, dataDir);
    try {
      expect((await resultTables()).map((t) => t.name)).toEqual([`e_${large.toLowerCase()}`]);
      const page = await first.json<Envelope>(`/v1/execution/${large}/results?limit=2&offset=4998`);
      expect(page.body.result?.rows).toEqual([{ i: 4998 }, { i: 4999 }]);
    } finally {
      await first.stop();
    }
  });
});
