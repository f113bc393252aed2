import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import { transformCalls } from './support/transform.js';

/**
 * Query pipelines against a real server: three levels refreshed in dependency order, a failing
 * middle node failing its dependents and not its siblings, cycles refused naming them, privacy
 * and 404 as absent, and records that survive a restart.
 */

interface NodeAnswer {
  id: number;
  dependencies: number[];
  query_execution_status: { status: string; query_id: number; execution_id?: string; error?: string };
  materialized_view_refresh_status?: { name: string; status: string; execution_id?: string; error?: string };
}
interface StatusAnswer {
  status: string;
  error?: string;
  node_executions: NodeAnswer[];
}

let service: TestService;
let calls: ReturnType<typeof transformCalls>;
const dataDir = tempDir();
const ids: Record<string, number> = {};

const execute = (queryId: number, key: string = KEYS.bob, body: unknown = { performance: 'medium' }) =>
  service.json<{ pipeline_execution_id?: string; error?: string }>(`/v1/query/${queryId}/pipeline/execute`, {
    method: 'POST',
    key,
    body: JSON.stringify(body),
  });

const status = (id: string, key: string = KEYS.bob) =>
  service.json<StatusAnswer>(`/v1/pipelines/executions/${id}/status`, { key });

async function finished(id: string): Promise<StatusAnswer> {
  for (let i = 0; i < 3000; i++) {
    const { body } = await status(id);
    if (body.status === 'completed' || body.status === 'failed') return body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`pipeline ${id} never finished`);
}

const executionOf = async (id: string) =>
  (await service.json<Record<string, string>>(`/v1/execution/${id}/status`, { key: KEYS.bob })).body;

/** The node refreshing or running `what` (a view's full name or a query id). */
const nodeOf = (answer: StatusAnswer, what: string | number) =>
  answer.node_executions.find((n) =>
    typeof what === 'string'
      ? n.materialized_view_refresh_status?.name === what
      : !n.materialized_view_refresh_status && n.query_execution_status.query_id === what,
  ) as NodeAnswer;

beforeAll(async () => {
  service = await startTestService({}, dataDir);
  calls = transformCalls(service);
  await calls.upload('events', 'day,amount\n2024-01-01,1\n2024-01-01,2\n2024-01-02,3\n');
  // Level 1: a view of the raw table.
  ids.base = await calls.createQuery(
    'SELECT day, sum(amount) AS total FROM dataset_events GROUP BY day ORDER BY day',
  );
  await calls.upsertView({ name: 'result_base', query_id: ids.base });
  await calls.waitView('result_base', (v) => v.last_refreshed_at !== null);
  // Level 2: a view of the first (failing once a total passes 100), and a sibling query's result.
  ids.mid = await calls.createQuery(
    "SELECT day, CASE WHEN total > 100 THEN 'too much'::INTEGER ELSE total * 2 END AS doubled FROM result_base",
  );
  await calls.upsertView({ name: 'result_mid', query_id: ids.mid });
  await calls.waitView('result_mid', (v) => v.last_refreshed_at !== null);
  ids.sibling = await calls.createQuery('SELECT count(*) AS days FROM result_base');
  await calls.waitFinished(
    (
      await service.json<{ execution_id: string }>(`/v1/query/${ids.sibling}/execute`, {
        method: 'POST',
        key: KEYS.bob,
      })
    ).body.execution_id,
  );
  // Level 3: the query the pipeline is asked for.
  ids.top = await calls.createQuery(
    `SELECT m.day, m.doubled, s.days FROM result_mid m, query_${ids.sibling} s ORDER BY m.day`,
  );
});
afterAll(async () => {
  await service.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('query pipelines', () => {
  let completedId = '';

  it('plans the lineage from the SQL: views and query_<id> results, dependencies first', async () => {
    const { status: code, body } = await service.json<{ pipeline: { nodes: Record<string, unknown>[] } }>(
      `/v1/query/${ids.top}/pipeline`,
      { key: KEYS.bob },
    );
    expect(code).toBe(200);
    expect(body.pipeline.nodes).toEqual([
      {
        id: 1,
        dependencies: [],
        materialized_view_refresh: { name: 'dune.bob.result_base', performance: 'medium' },
      },
      {
        id: 2,
        dependencies: [1],
        materialized_view_refresh: { name: 'dune.bob.result_mid', performance: 'medium' },
      },
      { id: 3, dependencies: [1], query_execution: { query_id: ids.sibling, performance: 'medium' } },
      { id: 4, dependencies: [2, 3], query_execution: { query_id: ids.top, performance: 'medium' } },
    ]);
  });

  it('refreshes three levels in dependency order, then runs the query', async () => {
    await calls.upload('events', 'day,amount\n2024-01-01,10\n2024-01-02,20\n2024-01-03,30\n');
    const started = await execute(ids.top as number);
    expect(started.status).toBe(200);
    completedId = started.body.pipeline_execution_id as string;
    const answer = await finished(completedId);
    expect(answer.status).toBe('completed');
    expect(answer.node_executions).toHaveLength(4);
    for (const node of answer.node_executions) {
      expect(node.query_execution_status.status, JSON.stringify(answer)).toBe('QUERY_STATE_COMPLETED');
      expect(node.query_execution_status.execution_id).toEqual(expect.any(String));
    }
    // Each node started after every node it depends on had ended.
    const ends = new Map<number, string>();
    for (const node of answer.node_executions) {
      const run = await executionOf(node.query_execution_status.execution_id as string);
      for (const dependency of node.dependencies)
        expect(Date.parse(run.execution_started_at as string)).toBeGreaterThanOrEqual(
          Date.parse(ends.get(dependency) as string),
        );
      ends.set(node.id, run.execution_ended_at as string);
    }
    const top = nodeOf(answer, ids.top as number);
    const rows = await service.json<{ result: { rows: unknown[] } }>(
      `/v1/execution/${top.query_execution_status.execution_id}/results`,
      { key: KEYS.bob },
    );
    expect(rows.body.result.rows).toEqual([
      { day: '2024-01-01', doubled: 20, days: 3 },
      { day: '2024-01-02', doubled: 40, days: 3 },
      { day: '2024-01-03', doubled: 60, days: 3 },
    ]);
  });

  it('fails the dependents of a failed node, not its siblings', async () => {
    await calls.upload('events', 'day,amount\n2024-01-01,500\n2024-01-02,1\n');
    const started = await execute(ids.top as number);
    const answer = await finished(started.body.pipeline_execution_id as string);
    expect(answer.status).toBe('failed');
    const base = nodeOf(answer, 'dune.bob.result_base');
    const mid = nodeOf(answer, 'dune.bob.result_mid');
    const sibling = nodeOf(answer, ids.sibling as number);
    const top = nodeOf(answer, ids.top as number);
    expect(base.query_execution_status.status).toBe('QUERY_STATE_COMPLETED');
    expect(mid.query_execution_status.status).toBe('QUERY_STATE_FAILED');
    expect(mid.materialized_view_refresh_status?.error).toMatch(/Could not convert string 'too much'/);
    expect(sibling.query_execution_status.status).toBe('QUERY_STATE_COMPLETED');
    expect(top.query_execution_status).toEqual({
      status: 'QUERY_STATE_FAILED',
      query_id: ids.top,
      error: `not run: node ${mid.id} (materialized view dune.bob.result_mid), which it depends on, failed`,
    });
    expect(answer.error).toContain(`node ${mid.id}`);
    // The first level took the new rows; the failed one kept its old table.
    expect((await calls.sql('SELECT total FROM result_base ORDER BY day')).rows).toEqual([
      { total: 500 },
      { total: 1 },
    ]);
    expect((await calls.sql('SELECT doubled FROM result_mid ORDER BY day')).rows).toEqual([
      { doubled: 20 },
      { doubled: 40 },
      { doubled: 60 },
    ]);
  });

  it('refuses a cycle with a 400 naming it', async () => {
    const a = await calls.createQuery('SELECT 1 AS one');
    await calls.upsertView({ name: 'result_a', query_id: a });
    await calls.waitView('result_a', (v) => v.last_refreshed_at !== null);
    const b = await calls.createQuery('SELECT one FROM result_a');
    await calls.upsertView({ name: 'result_b', query_id: b });
    await calls.waitView('result_b', (v) => v.last_refreshed_at !== null);
    const patched = await service.json(`/v1/query/${a}`, {
      method: 'PATCH',
      key: KEYS.bob,
      body: JSON.stringify({ query_sql: 'SELECT one FROM result_b' }),
    });
    expect(patched.status).toBe(200);
    const answer = await execute(a);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      `the pipeline has a cycle: dune.bob.result_b (query ${b}) → dune.bob.result_a (query ${a}) → dune.bob.result_b (query ${b}) (a query may not read, through views and results, itself)`,
    );
    expect((await service.json(`/v1/query/${a}/pipeline`, { key: KEYS.bob })).status).toBe(400);
  });

  it("is its runner's alone: others get the 404 of what does not exist", async () => {
    const hidden = await status(completedId, KEYS.alice);
    const absent = await status('01ZZZZZZZZZZZZZZZZZZZZZZZZ', KEYS.alice);
    expect(hidden.status).toBe(404);
    expect(absent.status).toBe(404);
    expect((hidden.body as unknown as { error: string }).error).toBe(
      (absent.body as unknown as { error: string }).error.replace('01ZZZZZZZZZZZZZZZZZZZZZZZZ', completedId),
    );
    expect((await status(completedId, KEYS.admin)).status).toBe(200);
    const secret = await calls.createQuery('SELECT 1 AS x', KEYS.bob, { is_private: true });
    expect((await execute(secret, KEYS.alice)).status).toBe(404);
    expect((await execute(999_999_999_999, KEYS.alice)).status).toBe(404);
    expect((await service.json(`/v1/query/${secret}/pipeline`, { key: KEYS.alice })).status).toBe(404);
    // Another's public query runs as the caller's own pipeline; bob's views are read as they are.
    const others = await execute(ids.top as number, KEYS.alice);
    expect(others.status).toBe(200);
    expect((await status(others.body.pipeline_execution_id as string, KEYS.bob)).status).toBe(404);
    const alices = await status(others.body.pipeline_execution_id as string, KEYS.alice);
    expect(alices.body.node_executions.map((n) => n.query_execution_status.query_id)).toEqual([
      ids.sibling,
      ids.top,
    ]);
    for (const body of [{ performance: 'huge' }, { query_parameters: 3 }, { colour: 1 }, [1]])
      expect((await execute(ids.top as number, KEYS.bob, body)).status, JSON.stringify(body)).toBe(400);
    expect(
      (await service.json('/v1/pipelines/executions/x/status', { method: 'POST', key: KEYS.bob })).status,
    ).toBe(405);
  });

  it('keeps its records across a restart; one cut short by it reads as failed', async () => {
    const slow = await calls.createQuery('SELECT sum(x) AS s FROM range(2000000000) t(x)');
    const cut = await execute(slow);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = (await status(completedId)).body;
    await service.close();
    service = await startTestService({}, dataDir);
    calls = transformCalls(service);
    expect((await status(completedId)).body).toEqual(before);
    const after = (await status(cut.body.pipeline_execution_id as string)).body;
    expect(after.status).toBe('failed');
    expect(after.error).toBe('the service stopped before this pipeline finished');
    expect(after.node_executions[0]?.query_execution_status.status).toBe('QUERY_STATE_FAILED');
  });
});
