import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameButBackslashes } from '../../src/queries/parameter-backslashes.js';
import { startTestService, type TestService } from '../support/service.js';
import { databaseState } from './support/database-state.js';
import { createQuery, execute, post, rowsOf } from './support/queries.js';

/**
 * A text parameter inside DuckDB's `E'…'` string, where a backslash is an escape: doubling
 * `'` alone let `SELECT E'{{a}}', '{{b}}'` with a = `\` end the first string at the second's
 * opening quote and run b as SQL. Every such attempt is a 400 naming the parameter, at create,
 * update and execute, and leaves everything stored as it was; in a plain '…' string the same
 * values arrive as sent.
 */

let service: TestService;

const INJECTED = ' AS a, 42 AS injected --';
const HOSTILE_SQL = "SELECT E'{{a}}' AS a, '{{b}}' AS b";
const HOSTILE_VALUES: string[] = ['\\', 'x\\', '\\n', '\\\\', "\\'", 'é\\x41'];

/** What a refused request must leave as it was: tables, queries, and alice's executions. */
const everything = async () => {
  // Runs' records are written after they are seen (ExecutionStore.saveAfter): all landed.
  await service.executions.store.landed();
  return service.database.read(async (session) => ({
    // The scheduler's start-up run of the operator's query may end at any moment.
    state: await databaseState(session, {
      skip: (schema, table) => schema === '_results' || table === 'executions',
    }),
    executions: await session.all(
      "SELECT * FROM _service.executions WHERE owner = 'alice' ORDER BY execution_id, revision",
    ),
  }));
};

async function refused(path: string, init: RequestInit & { key?: string }, parameter: string) {
  const { status, body } = await service.json<{ error: string }>(path, init);
  expect(status, JSON.stringify(body)).toBe(400);
  expect(body.error).toContain(`parameter "${parameter}"`);
  expect(body.error).toContain('backslash');
}

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

describe("a backslash in a value inside E'…'", () => {
  it.each(HOSTILE_VALUES)(
    '%j is refused at create, naming the parameter, and nothing is stored',
    async (a) => {
      const before = await everything();
      for (const [sql, type] of [
        [HOSTILE_SQL, 'text'],
        [HOSTILE_SQL.replace("E'", "e'"), 'text'],
        [HOSTILE_SQL, 'enum'],
      ] as const) {
        await refused(
          '/v1/query',
          post({
            name: 'hostile',
            query_sql: sql,
            parameters: [
              { key: 'a', type, value: a },
              { key: 'b', type: 'text', value: INJECTED },
            ],
          }),
          'a',
        );
      }
      expect(await everything()).toEqual(before);
    },
  );

  it('is refused at update and at execute, and the query and its runs stay as they were', async () => {
    const id = await createQuery(service, {
      name: 'e-string',
      query_sql: HOSTILE_SQL,
      parameters: [
        { key: 'a', type: 'text', value: 'plain' },
        { key: 'b', type: 'text', value: 'text' },
      ],
    });
    expect(await rowsOf(service, await execute(service, id))).toEqual([{ a: 'plain', b: 'text' }]);
    const before = await everything();
    for (const a of HOSTILE_VALUES) {
      await refused(`/v1/query/${id}/execute`, post({ query_parameters: { a, b: INJECTED } }), 'a');
      await refused(
        `/v1/query/${id}`,
        {
          ...post({
            parameters: [
              { key: 'a', type: 'text', value: a },
              { key: 'b', type: 'text', value: INJECTED },
            ],
          }),
          method: 'PATCH',
        },
        'a',
      );
      // The TypeScript client's map form, and new SQL putting a safe default into E'…'.
      await refused(
        `/v1/query/${id}`,
        { ...post({ query_parameters: { a, b: INJECTED } }), method: 'PATCH' },
        'a',
      );
    }
    await refused(
      `/v1/query/${id}`,
      {
        ...post({
          query_sql: "SELECT '{{a}}' AS a, E'{{b}}' AS b",
          query_parameters: { a: 'x', b: 'y\\' },
        }),
        method: 'PATCH',
      },
      'b',
    );
    expect(await everything()).toEqual(before);
    const { body } = await service.json<{ version: number; query_sql: string }>(`/v1/query/${id}`);
    expect(body).toMatchObject({ version: 1, query_sql: HOSTILE_SQL });
  });

  it('names the parameter whose backslash breaks out, when others hold harmless ones', async () => {
    const id = await createQuery(service, {
      name: 'two',
      query_sql: "SELECT '{{p}}' AS p, E'{{a}}' AS a, '{{b}}' AS b -- {{c}}",
      parameters: [
        { key: 'p', type: 'text', value: 'C:\\dir\\' },
        { key: 'a', type: 'text', value: 'x' },
        { key: 'b', type: 'text', value: 'y' },
        { key: 'c', type: 'text', value: '\\' },
      ],
    });
    expect(await rowsOf(service, await execute(service, id))).toEqual([{ p: 'C:\\dir\\', a: 'x', b: 'y' }]);
    await refused(`/v1/query/${id}/execute`, post({ query_parameters: { a: '\\', b: INJECTED } }), 'a');
  });
});

describe("a backslash in a plain '…' string", () => {
  it('arrives as sent, with the next parameter still text', async () => {
    const id = await createQuery(service, {
      name: 'plain',
      query_sql: "SELECT '{{a}}' AS a, '{{b}}' AS b, E'{{c}}' AS c",
      parameters: [
        { key: 'a', type: 'text', value: '\\' },
        { key: 'b', type: 'text', value: INJECTED },
        { key: 'c', type: 'text', value: "it's" },
      ],
    });
    expect(await rowsOf(service, await execute(service, id))).toEqual([{ a: '\\', b: INJECTED, c: "it's" }]);
    for (const a of HOSTILE_VALUES) {
      const rows = await rowsOf(
        service,
        await execute(service, id, { query_parameters: { a, b: `'${INJECTED}` } }),
      );
      expect(rows).toEqual([{ a, b: `'${INJECTED}`, c: "it's" }]);
    }
  });
});

describe('comparing the parse trees', () => {
  it.each([
    ['{"value":"a\\\\b"}', '{"value":"a_b"}', true],
    ['{"value":"a\\\\\\\\"}', '{"value":"a__"}', true],
    ['{"value":"a\\nb"}', '{"value":"a\\nb"}', true],
    ['{"value":"a\\\\b"}', '{"value":"a\\\\b"}', true],
    ['{"value":"ab"}', '{"value":"a_b"}', false],
    ['{"value":"a\\nb"}', '{"value":"a_nb"}', false],
    ['{"value":"a","query_location":7}', '{"value":"a","query_location":8}', false],
    ['{"value":"a\\\\"}', '{"value":"a_","x":1}', false],
  ])('%s against %s: %s', (real, probe, same) => {
    expect(sameButBackslashes(real, probe)).toBe(same);
  });
});
