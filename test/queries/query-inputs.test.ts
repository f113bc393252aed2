import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { createQuery, execute, post, rowsOf } from './support/queries.js';

/**
 * Nasty inputs to the query API: text that looks like SQL in every string field, huge
 * bodies, odd ids and parameter names, and concurrent updates. Each gets a clear 4xx or is
 * stored exactly as sent, and nothing else changes.
 */

let service: TestService;

interface QueryObject {
  name: string;
  description: string;
  tags: string[];
  version: number;
  query_sql: string;
  parameters: { key: string; value: string }[];
}

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

describe('text fields', () => {
  it('store SQL-looking, quoted and unicode text exactly as sent', async () => {
    const nasty = `'); DROP TABLE _service.queries; -- "x" \\ é 😀 \u2028`;
    const id = await createQuery(service, {
      name: nasty,
      description: nasty,
      tags: [nasty.slice(0, 50)],
      query_sql: `SELECT '{{a'b}}' AS v -- ${nasty}`,
      parameters: [{ key: "a'b", type: 'text', value: nasty }],
    });
    const { body } = await service.json<QueryObject>(`/v1/query/${id}`);
    expect(body).toMatchObject({ name: nasty, description: nasty, tags: [nasty.slice(0, 50)] });
    expect(body.parameters[0]).toMatchObject({ key: "a'b", value: nasty });
    expect(await rowsOf(service, await execute(service, id))).toEqual([{ v: nasty }]);
    expect((await service.json('/v1/queries')).status).toBe(200);
  });

  it('refuse parameter names with braces or control characters, and values with NUL', async () => {
    for (const parameters of [
      [{ key: 'a}b', type: 'text', value: 'x' }],
      [{ key: 'a\nb', type: 'text', value: 'x' }],
      [{ key: ' a', type: 'text', value: 'x' }],
      [{ key: '', type: 'text', value: 'x' }],
      [{ key: 'x'.repeat(101), type: 'text', value: 'x' }],
      [{ key: 'a', type: 'text', value: 'x\u0000y' }],
      [{ key: 'a', type: 'text', value: 'x', extra: true }],
      Array.from({ length: 101 }, (_, i) => ({ key: `p${i}`, type: 'text', value: 'x' })),
    ]) {
      const { status } = await service.json(
        '/v1/query',
        post({ name: 'n', query_sql: 'SELECT 1', parameters }),
      );
      expect(status, JSON.stringify(parameters).slice(0, 80)).toBe(400);
    }
  });
});

describe('sizes', () => {
  it('answers 413 for a body over the limit and 400 for SQL over its length, before storing', async () => {
    const huge = await service.request('/v1/query', {
      method: 'POST',
      body: JSON.stringify({ name: 'n', query_sql: `SELECT '${'x'.repeat(2 * 1024 * 1024)}'` }),
    });
    expect(huge.status).toBe(413);
    const long = await service.json<{ error: string }>(
      '/v1/query',
      post({ name: 'n', query_sql: `SELECT '${'é'.repeat(40_000)}'` }),
    );
    expect(long.status).toBe(400);
    expect(long.body.error).toMatch(/the SQL is 80009 bytes long; at most 65536 bytes are accepted/);
    const execute = await service.request('/v1/sql/execute', {
      method: 'POST',
      body: JSON.stringify({ sql: `SELECT '${'x'.repeat(2 * 1024 * 1024)}'` }),
    });
    expect(execute.status).toBe(413);
    expect((await service.json<{ queries: unknown[] }>('/v1/queries')).body.queries).toHaveLength(1);
  });
});

describe('ids in paths', () => {
  it.each(['0', '-1', '1e3', '00', '99999999999999999999', 'abc', '1.5', '%20'])(
    '/v1/query/%s is a 404',
    async (id) => {
      const { status, body } = await service.json<{ error: string }>(`/v1/query/${id}`);
      expect(status).toBe(404);
      expect(body.error).toMatch(/no query with id|no saved query with id/);
    },
  );

  it('an unknown execution id is a 404 for status, results and cancel', async () => {
    for (const [path, method] of [
      ['/v1/execution/NOPE/status', 'GET'],
      ['/v1/execution/NOPE/results', 'GET'],
      ['/v1/execution/NOPE/results/csv', 'GET'],
      ['/v1/execution/NOPE/cancel', 'POST'],
      [`/v1/execution/${'x'.repeat(5000)}/status`, 'GET'],
    ] as const) {
      expect((await service.json(path, { method })).status, path.slice(0, 40)).toBe(404);
    }
  });
});

describe('concurrency', () => {
  it('concurrent updates each count once: the version rises by exactly their number', async () => {
    const id = await createQuery(service, { name: 'c', query_sql: 'SELECT 1' });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        service.json(`/v1/query/${id}`, { ...post({ name: `n${i}`, tags: [`t${i}`] }), method: 'PATCH' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const { body } = await service.json<QueryObject>(`/v1/query/${id}`);
    expect(body.version).toBe(13);
    expect(body.tags).toEqual([`t${body.name.slice(1)}`]);
  });

  it('concurrent creates get distinct ids', async () => {
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createQuery(service, { name: `q${i}`, query_sql: 'SELECT 1' }, KEYS.bob),
      ),
    );
    expect(new Set(ids).size).toBe(12);
  });
});
