import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { executeSql, finished, post } from './support/queries.js';

/**
 * The sandbox keeps its answer for SQL that comes again (src/queries/sandbox/checked-sql-cache.ts),
 * and the kept answer is taken only while every table the SQL names means what it meant: a
 * table made private, or replaced by another account's, is seen at the next run of the same text.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

async function upload(key: string, fields: Record<string, unknown>): Promise<void> {
  expect((await service.json('/v1/table/upload/csv', { ...uploadBody(fields), key })).status).toBe(200);
}

async function run(sql: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return service.json<Record<string, unknown>>('/v1/sql/execute', post({ sql }, key));
}

describe('the same SQL run again', () => {
  it('is refused once the table it reads was made private by its owner', async () => {
    await upload(KEYS.bob, { table_name: 'shared', data: 'n\n1\n', is_private: false });
    const sql = 'SELECT sum(n) AS total FROM bob.dataset_shared';
    for (let i = 0; i < 2; i++) {
      const answer = await run(sql, KEYS.alice);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect((await finished(service, answer.body.execution_id as string)).state).toBe(
        'QUERY_STATE_COMPLETED',
      );
    }
    await upload(KEYS.bob, { table_name: 'shared', data: 'n\n2\n', is_private: true });
    const refused = await run(sql, KEYS.alice);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^table bob\.dataset_shared does not exist/);
    // Its owner reads it, through the same text.
    const own = await executeSql(service, sql, KEYS.bob);
    expect((await finished(service, own, KEYS.bob)).state).toBe('QUERY_STATE_COMPLETED');
  });

  it('reads each caller’s own table when an unqualified name means another one for each', async () => {
    await upload(KEYS.alice, { table_name: 'mine', data: 'who\nalice\n' });
    await upload(KEYS.bob, { table_name: 'mine', data: 'who\nbob\n' });
    const sql = 'SELECT who FROM dataset_mine';
    for (const [key, who] of [
      [KEYS.alice, 'alice'],
      [KEYS.bob, 'bob'],
      [KEYS.alice, 'alice'],
    ] as const) {
      const id = await executeSql(service, sql, key);
      expect((await finished(service, id, key)).state).toBe('QUERY_STATE_COMPLETED');
      const page = await service.json<{ result: { rows: { who: string }[] } }>(
        `/v1/execution/${id}/results`,
        {
          key,
        },
      );
      expect(page.body.result.rows).toEqual([{ who }]);
    }
  });
});
