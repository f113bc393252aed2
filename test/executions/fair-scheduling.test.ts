import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/executions/execution.js';
import { executeSql, executing, finished, post, RUNAWAY_SQL } from '../queries/support/queries.js';
import type { Envelope } from '../support/results.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * DESIGN §12, issue 22: executions shared fairly between keys. One key cannot hold every
 * running slot nor the head of the queue, its waiting runs are bounded, and the operator's
 * refreshes never wait behind users.
 */

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
let service: TestService | undefined;

afterEach(async () => {
  await service?.stop();
  service = undefined;
});

async function start(env: Record<string, string>): Promise<TestService> {
  service = await startTestService(env);
  return service;
}

const status = async (s: TestService, id: string, key: string = KEYS.alice) =>
  (await s.json<Envelope>(`/v1/execution/${id}/status`, { key })).body;

async function cancelAll(s: TestService, ids: readonly string[], key: string = KEYS.alice): Promise<void> {
  for (const id of ids) await s.json(`/v1/execution/${id}/cancel`, post({}, key));
  for (const id of ids) await finished(s, id, key);
}

describe('fair scheduling of users’ executions', () => {
  it("runs another key's SELECT 1 at once while one key's long queries hold all it may", async () => {
    const s = await start({ MAX_RUNNING_QUERIES: '8', MAX_RUNNING_QUERIES_PER_KEY: '2' });
    const long = [];
    for (let i = 0; i < 3; i++) long.push(await executeSql(s, RUNAWAY_SQL, KEYS.alice));
    await executing(s, long[0] as string);
    await executing(s, long[1] as string);
    // The third waits for alice's own slots, though the lane has six free.
    expect(await status(s, long[2] as string)).toMatchObject({
      state: 'QUERY_STATE_PENDING',
      queue_position: 1,
    });
    const quick = await executeSql(s, 'SELECT 1 AS one', KEYS.bob);
    expect((await finished(s, quick, KEYS.bob)).state).toBe('QUERY_STATE_COMPLETED');
    // Not behind them: alice's are still running, and her third still waits.
    expect((await status(s, long[0] as string)).state).toBe('QUERY_STATE_EXECUTING');
    expect((await status(s, long[2] as string)).state).toBe('QUERY_STATE_PENDING');
    await cancelAll(s, long);
  });

  it('shows each waiting run its place in the order runs really start, keys taking turns', async () => {
    const s = await start({ MAX_RUNNING_QUERIES: '1', MAX_RUNNING_QUERIES_PER_KEY: '1' });
    const first = await executeSql(s, RUNAWAY_SQL, KEYS.alice);
    await executing(s, first);
    const a2 = await executeSql(s, RUNAWAY_SQL, KEYS.alice);
    const a3 = await executeSql(s, RUNAWAY_SQL, KEYS.alice);
    const b1 = await executeSql(s, RUNAWAY_SQL, KEYS.bob);
    // bob came last but has not had a turn: he goes next, then alice's in order.
    expect((await status(s, b1, KEYS.bob)).queue_position).toBe(1);
    expect((await status(s, a2)).queue_position).toBe(2);
    expect((await status(s, a3)).queue_position).toBe(3);
    await s.json(`/v1/execution/${first}/cancel`, post({}));
    await executing(s, b1, KEYS.bob);
    expect((await status(s, a2)).queue_position).toBe(1);
    expect((await status(s, a3)).queue_position).toBe(2);
    await cancelAll(s, [a2, a3]);
    await cancelAll(s, [b1], KEYS.bob);
    expect((await status(s, first)).state).toBe('QUERY_STATE_CANCELLED');
  });

  it("refuses a key's runs past MAX_QUEUED_QUERIES_PER_KEY with a 429, records nothing, and serves other keys", async () => {
    const s = await start({
      MAX_RUNNING_QUERIES: '4',
      MAX_RUNNING_QUERIES_PER_KEY: '1',
      MAX_QUEUED_QUERIES_PER_KEY: '2',
    });
    const accepted = [];
    for (let i = 0; i < 3; i++) accepted.push(await executeSql(s, RUNAWAY_SQL, KEYS.alice));
    const before = s.executions.store.all().length;
    const refused = await s.request('/v1/sql/execute', post({ sql: 'SELECT 1' }, KEYS.alice));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: string }).error).toMatch(
      /this key has 2 executions waiting to run already \(MAX_QUEUED_QUERIES_PER_KEY\)/,
    );
    expect(s.executions.store.all().length).toBe(before);
    const other = await executeSql(s, 'SELECT 42 AS n', KEYS.bob);
    expect((await finished(s, other, KEYS.bob)).state).toBe('QUERY_STATE_COMPLETED');
    await cancelAll(s, accepted);
    // Its queue has room again.
    const again = await executeSql(s, 'SELECT 1 AS n', KEYS.alice);
    expect((await finished(s, again)).state).toBe('QUERY_STATE_COMPLETED');
  });
});

describe("the operator's query files", () => {
  it("run for a user in the users' lane, and a run waiting to start is reused", async () => {
    const s = await start({ QUERIES_DIR, MAX_RUNNING_QUERIES: '1', MAX_RUNNING_QUERIES_PER_KEY: '1' });
    // The scheduler's own run of 1005 at start, in the operator's lane, done first: a waiting
    // one would be reused too.
    for (let i = 0; i < 500; i++) {
      const latest = (await s.json<Envelope>('/v1/query/1005/results?limit=1')).body;
      if (latest.state === 'QUERY_STATE_COMPLETED') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const blocker = await executeSql(s, RUNAWAY_SQL, KEYS.carol);
    await executing(s, blocker, KEYS.carol);
    const answer = async () =>
      (await s.json<{ execution_id: string }>('/v1/query/1005/execute', post({}, KEYS.bob))).body
        .execution_id;
    const first = await answer();
    const second = await answer();
    expect(second).toBe(first);
    const run = s.executions.get(first);
    expect(run?.owner).toBe('bob');
    expect((await status(s, first, KEYS.bob)).queue_position).toBe(1);
    await cancelAll(s, [blocker], KEYS.carol);
    expect((await finished(s, first, KEYS.bob)).state).toBe('QUERY_STATE_COMPLETED');
  });

  it("refresh while every users' slot is taken", async () => {
    const s = await start({ QUERIES_DIR, MAX_RUNNING_QUERIES: '2', MAX_RUNNING_QUERIES_PER_KEY: '1' });
    const held = [await executeSql(s, RUNAWAY_SQL, KEYS.alice), await executeSql(s, RUNAWAY_SQL, KEYS.bob)];
    await executing(s, held[0] as string);
    await executing(s, held[1] as string, KEYS.bob);
    const refresh = await s.executions.submit({
      queryId: 1005,
      sql: 'SELECT range AS i FROM range(10)',
      owner: OPERATOR,
      lane: 'operator',
    });
    expect((await finished(s, refresh.id, KEYS.admin)).state).toBe('QUERY_STATE_COMPLETED');
    await cancelAll(s, [held[0] as string]);
    await cancelAll(s, [held[1] as string], KEYS.bob);
  });
});

describe("other doors' statements (the Postgres wire)", () => {
  it("wait for the key's own slots, not for other keys'", async () => {
    const s = await start({ MAX_RUNNING_QUERIES: '8', MAX_RUNNING_QUERIES_PER_KEY: '2' });
    const long = [await executeSql(s, RUNAWAY_SQL, KEYS.alice), await executeSql(s, RUNAWAY_SQL, KEYS.alice)];
    for (const id of long) await executing(s, id);
    const ran: string[] = [];
    const alices = s.executions.inUsersLane('alice', async () => ran.push('alice'));
    await s.executions.inUsersLane('bob', async () => ran.push('bob'));
    expect(ran).toEqual(['bob']);
    await cancelAll(s, long);
    await alices;
    expect(ran).toEqual(['bob', 'alice']);
  });

  it('are refused, not left waiting, when the service stops', async () => {
    const s = await start({ MAX_RUNNING_QUERIES: '8', MAX_RUNNING_QUERIES_PER_KEY: '1' });
    await executing(s, await executeSql(s, RUNAWAY_SQL, KEYS.alice));
    const waiting = s.executions.inUsersLane('alice', async () => 'ran').catch((e: unknown) => String(e));
    s.executions.close();
    expect(await waiting).toMatch(/shutting down/);
    // A run asked for after that (a check that ends during shutdown) is told the same: a 503.
    await expect(
      s.executions.submit({ queryId: 0, sql: 'SELECT 1', owner: 'bob', lane: 'users' }),
    ).rejects.toThrow(/shutting down/);
  });
});
