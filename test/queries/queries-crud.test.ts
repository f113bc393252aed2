import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';
import { createQuery, post, uploadTable } from './support/queries.js';

/** DESIGN §10: users' queries as data, through every endpoint of the query API. */

interface QueryObject {
  query_id: number;
  name: string;
  description: string;
  tags: string[];
  version: number;
  parameters: { key: string; type: string; value: string; enumOptions?: string[] }[];
  query_engine: string;
  query_sql: string;
  is_private: boolean;
  is_archived: boolean;
  is_unsaved: boolean;
  owner: string;
}

let service: TestService;

const SQL = "SELECT day, price FROM dataset_prices WHERE token = '{{token}}' AND price > {{min}}";
const PARAMETERS = [
  { key: 'token', type: 'text', value: 'stETH' },
  { key: 'min', type: 'number', value: '10.50' },
  { key: 'since', type: 'date', value: '2024-01-02T03:04:05Z' },
  { key: 'side', type: 'enum', value: 'buy', enumOptions: ['buy', 'sell'] },
];

async function read(id: number, key: string = KEYS.alice) {
  return service.json<QueryObject>(`/v1/query/${id}`, { key });
}

async function patch(id: number, body: unknown, key: string = KEYS.alice) {
  return service.json<{ query_id?: number; error?: string }>(`/v1/query/${id}`, {
    ...post(body, key),
    method: 'PATCH',
  });
}

async function own(key: string = KEYS.alice) {
  return (await service.json<{ queries: QueryObject[] }>('/v1/queries?limit=1000', { key })).body.queries;
}

beforeAll(async () => {
  service = await startTestService();
  await uploadTable(service, 'prices', 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n');
  await uploadTable(service, 'prices', 'day,token,price\n2024-01-01,stETH,2301.5\n', { key: KEYS.bob });
});
afterAll(async () => {
  await service.stop();
});

describe('create and read', () => {
  it('stores a query with parameters in the list form and reads back every field', async () => {
    const id = await createQuery(service, {
      name: 'Prices',
      query_sql: SQL,
      description: 'by token',
      tags: ['prices', 'demo'],
      is_private: false,
      parameters: PARAMETERS,
    });
    expect(id).toBeGreaterThanOrEqual(1_000_000_001);
    const { status, body } = await read(id);
    expect(status).toBe(200);
    expect(body).toEqual({
      query_id: id,
      name: 'Prices',
      description: 'by token',
      tags: ['prices', 'demo'],
      version: 1,
      parameters: [
        { key: 'token', name: 'token', type: 'text', value: 'stETH' },
        { key: 'min', name: 'min', type: 'number', value: '10.5' },
        { key: 'since', name: 'since', type: 'datetime', value: '2024-01-02 03:04:05' },
        { key: 'side', name: 'side', type: 'enum', value: 'buy', enumOptions: ['buy', 'sell'] },
      ],
      query_engine: 'medium',
      query_sql: SQL,
      is_private: false,
      is_archived: false,
      is_unsaved: false,
      owner: 'alice',
    });
  });

  it('answers under /api/v1, with and without the trailing slash, and takes the map form', async () => {
    const { status, body } = await service.json<{ query_id: number }>(
      '/api/v1/query/',
      post({ name: 'Map', query_sql: "SELECT '{{color}}' AS c", query_parameters: { color: 'red' } }),
    );
    expect(status).toBe(200);
    const { body: query } = await service.json<QueryObject>(`/api/v1/query/${body.query_id}`);
    expect(query.parameters).toEqual([{ key: 'color', name: 'color', type: 'text', value: 'red' }]);
    expect(query.description).toBe('');
    expect(query.tags).toEqual([]);
  });

  it('hands out ids in increasing order, never twice', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push(await createQuery(service, { name: `n${i}`, query_sql: 'SELECT 1' }));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
  });

  it('refuses bad bodies with a 400 naming the problem, and stores nothing', async () => {
    const before = (await own()).length;
    for (const [body, message] of [
      [{ query_sql: 'SELECT 1' }, /"name" is required/],
      [{ name: 'x' }, /"query_sql" is required/],
      [{ name: '', query_sql: 'SELECT 1' }, /"name" is empty/],
      [{ name: 'x', query_sql: '   ' }, /"query_sql" is empty/],
      [{ name: 'x', query_sql: 'SELECT 1', tags: 'a' }, /"tags" must be a list/],
      [{ name: 'x', query_sql: 'SELECT 1', tags: [1] }, /tags\[0\]/],
      [{ name: 'x', query_sql: 'SELECT 1', is_private: 'yes' }, /"is_private" must be true or false/],
      [{ name: 'x', query_sql: 'SELECT 1', colour: 'red' }, /unknown field "colour"/],
      [{ name: 'x', query_sql: 'SELECT 1\u0000; DROP TABLE x' }, /the SQL contains a NUL character/],
      [{ name: 'x', query_sql: 'SELECT {{n}}' }, /\{\{n\}\}.*declares no parameter/],
      [
        { name: 'x', query_sql: 'SELECT {{n}}', parameters: [{ key: 'n', type: 'float', value: '1' }] },
        /"type" must be one of/,
      ],
      [
        { name: 'x', query_sql: 'SELECT {{n}}', parameters: [{ key: 'n', type: 'number', value: 'ten' }] },
        /parameter "n" \(number\) needs a finite number/,
      ],
      [
        { name: 'x', query_sql: 'SELECT {{n}}', parameters: [{ key: 'n', type: 'number', value: '1e400' }] },
        /parameter "n" \(number\)/,
      ],
      [
        {
          name: 'x',
          query_sql: "SELECT '{{d}}'",
          parameters: [{ key: 'd', type: 'datetime', value: '2023-02-30 00:00:00' }],
        },
        /parameter "d" \(datetime\) needs a timestamp/,
      ],
      [
        {
          name: 'x',
          query_sql: "SELECT '{{s}}'",
          parameters: [{ key: 's', type: 'enum', value: 'hold', enumOptions: ['buy', 'sell'] }],
        },
        /must be one of "buy", "sell"; got "hold"/,
      ],
      [
        {
          name: 'x',
          query_sql: "SELECT '{{s}}'",
          parameters: [
            { key: 's', type: 'text', value: 'a' },
            { key: 's', type: 'text', value: 'b' },
          ],
        },
        /declares parameter "s" twice/,
      ],
      [
        { name: 'x', query_sql: "SELECT '{{s}}'", parameters: [{ key: 's', type: 'text' }] },
        /needs a default "value"/,
      ],
      [
        {
          name: 'x',
          query_sql: "SELECT '{{s}}'",
          parameters: [{ key: 's', type: 'text', value: 'a' }],
          query_parameters: { s: 'b' },
        },
        /one form/,
      ],
      [{ name: 'x', query_sql: 'DROP TABLE alice.dataset_prices' }, /query/],
      [{ name: 'x', query_sql: 'SELECT 1; SELECT 2' }, /single query/],
      [{ name: 'x', query_sql: 'SELECT * FROM dataset_nothing' }, /does not exist/],
    ] as const) {
      const { status, body: answer } = await service.json<{ error: string }>('/v1/query', post(body));
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error, JSON.stringify(body)).toMatch(message);
    }
    for (const raw of ['{', '[]', '"x"', '42']) {
      const { status } = await service.json('/v1/query', { method: 'POST', body: raw });
      expect(status, raw).toBe(400);
    }
    expect((await own()).length).toBe(before);
  });

  it('needs a premium key for a private query', async () => {
    const free = await service.json<{ error: string }>(
      '/v1/query',
      post({ name: 'p', query_sql: 'SELECT 1', is_private: true }),
    );
    expect(free.status).toBe(403);
    const id = await createQuery(service, { name: 'p', query_sql: 'SELECT 1', is_private: true }, KEYS.bob);
    expect((await read(id, KEYS.bob)).body.is_private).toBe(true);
  });
});

describe('update', () => {
  it('changes only the fields given, and adds one to the version', async () => {
    const id = await createQuery(service, { name: 'U', query_sql: SQL, tags: ['a'], parameters: PARAMETERS });
    const { status, body } = await patch(id, { name: 'U2', description: 'now described' });
    expect(status).toBe(200);
    expect(body).toEqual({ query_id: id });
    const { body: query } = await read(id);
    expect(query).toMatchObject({
      name: 'U2',
      description: 'now described',
      tags: ['a'],
      query_sql: SQL,
      version: 2,
    });
    expect(query.parameters).toHaveLength(4);
    await patch(id, { tags: [] });
    expect((await read(id)).body).toMatchObject({ tags: [], version: 3 });
  });

  it('clears parameters with [] (once the SQL uses none) and refuses to orphan a {{name}}', async () => {
    const id = await createQuery(service, { name: 'P', query_sql: SQL, parameters: PARAMETERS });
    const orphaned = await patch(id, { parameters: [] });
    expect(orphaned.status).toBe(400);
    expect(orphaned.body.error).toMatch(/\{\{token\}\}/);
    expect((await read(id)).body.version).toBe(1);
    expect((await patch(id, { query_sql: 'SELECT 1 AS one', parameters: [] })).status).toBe(200);
    expect((await read(id)).body).toMatchObject({ query_sql: 'SELECT 1 AS one', parameters: [], version: 2 });
  });

  it('takes the map form on update, keeping the types of parameters it already declares', async () => {
    const id = await createQuery(service, { name: 'M', query_sql: SQL, parameters: PARAMETERS });
    const bad = await patch(id, {
      query_parameters: { token: 'rETH', min: 'lots', since: '2024-01-01', side: 'sell' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/parameter "min" \(number\)/);
    expect(
      (
        await patch(id, {
          query_parameters: { token: 'rETH', min: '7.0', since: '2024-01-01', side: 'sell' },
        })
      ).status,
    ).toBe(200);
    expect((await read(id)).body.parameters).toEqual([
      { key: 'token', name: 'token', type: 'text', value: 'rETH' },
      { key: 'min', name: 'min', type: 'number', value: '7' },
      { key: 'since', name: 'since', type: 'datetime', value: '2024-01-01 00:00:00' },
      { key: 'side', name: 'side', type: 'enum', value: 'sell', enumOptions: ['buy', 'sell'] },
    ]);
  });

  it('refuses non-queries and unknown fields on update, leaving the query as it was', async () => {
    const id = await createQuery(service, { name: 'R', query_sql: 'SELECT 1' });
    for (const [body, message] of [
      [{ query_sql: 'DELETE FROM alice.dataset_prices' }, /query/],
      [{ query_sql: "COPY (SELECT 1) TO '/tmp/x.csv'" }, /query/],
      [{ is_private: true }, /their own paths/],
      [{ name: 5 }, /"name" must be a string/],
    ] as const) {
      const { status, body: answer } = await patch(id, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(answer.error).toMatch(message);
    }
    expect((await read(id)).body).toMatchObject({ query_sql: 'SELECT 1', version: 1, is_private: false });
  });

  it('lets only the owner (or an admin) change a query: others get 403, or 404 when it is private', async () => {
    const open = await createQuery(service, { name: 'O', query_sql: 'SELECT 1' }, KEYS.bob);
    const hidden = await createQuery(
      service,
      { name: 'H', query_sql: 'SELECT 1', is_private: true },
      KEYS.bob,
    );
    expect((await patch(open, { name: 'mine' }, KEYS.alice)).status).toBe(403);
    expect((await patch(hidden, { name: 'mine' }, KEYS.alice)).status).toBe(404);
    for (const action of ['archive', 'unarchive', 'private', 'unprivate']) {
      expect((await service.json(`/v1/query/${open}/${action}`, post({}, KEYS.alice))).status, action).toBe(
        403,
      );
      expect((await service.json(`/v1/query/${hidden}/${action}`, post({}, KEYS.alice))).status, action).toBe(
        404,
      );
    }
    expect((await read(hidden, KEYS.alice)).status).toBe(404);
    expect((await read(hidden, KEYS.admin)).status).toBe(200);
    expect((await patch(open, { name: 'by admin' }, KEYS.admin)).status).toBe(200);
    expect((await read(open, KEYS.bob)).body).toMatchObject({ name: 'by admin', owner: 'bob', version: 2 });
  });
});

describe('archive and privacy', () => {
  it('archives and unarchives; an archived query is neither executed nor updated', async () => {
    const id = await createQuery(service, { name: 'A', query_sql: 'SELECT 1' });
    expect((await service.json(`/v1/query/${id}/archive`, post({}))).body).toEqual({ query_id: id });
    expect((await read(id)).body.is_archived).toBe(true);
    const run = await service.json<{ error: string }>(`/v1/query/${id}/execute`, post({}));
    expect(run.status).toBe(400);
    expect(run.body.error).toMatch(/archived/);
    expect((await patch(id, { name: 'x' })).status).toBe(400);
    expect((await service.json(`/v1/query/${id}/unarchive`, post({}))).body).toEqual({ query_id: id });
    expect((await read(id)).body).toMatchObject({ is_archived: false, name: 'A', version: 1 });
  });

  it('makes a query private and public again; a free key cannot make one private', async () => {
    const id = await createQuery(service, { name: 'V', query_sql: 'SELECT 1' }, KEYS.bob);
    expect((await service.json(`/v1/query/${id}/private`, post({}, KEYS.bob))).body).toEqual({
      query_id: id,
    });
    expect((await read(id, KEYS.bob)).body.is_private).toBe(true);
    expect((await read(id, KEYS.alice)).status).toBe(404);
    expect((await service.json(`/v1/query/${id}/results`, { key: KEYS.alice })).status).toBe(404);
    expect((await service.json(`/v1/query/${id}/execute`, post({}, KEYS.alice))).status).toBe(404);
    expect((await service.json(`/v1/query/${id}/unprivate`, post({}, KEYS.bob))).status).toBe(200);
    expect((await read(id, KEYS.alice)).body.is_private).toBe(false);
    const mine = await createQuery(service, { name: 'F', query_sql: 'SELECT 1' });
    expect((await service.json(`/v1/query/${mine}/private`, post({}))).status).toBe(403);
  });
});

describe('list', () => {
  it("lists the caller's own queries, newest first, in pages", async () => {
    const carol = [];
    for (let i = 0; i < 5; i++)
      carol.push(await createQuery(service, { name: `c${i}`, query_sql: 'SELECT 1' }, KEYS.carol));
    const first = await service.json<{ queries: QueryObject[]; next_offset?: number }>(
      '/v1/queries?limit=2',
      { key: KEYS.carol },
    );
    expect(first.body.queries.map((q) => q.query_id)).toEqual([carol[4], carol[3]]);
    expect(first.body.next_offset).toBe(2);
    const last = await service.json<{ queries: QueryObject[]; next_offset?: number }>(
      '/v1/queries?limit=2&offset=4',
      { key: KEYS.carol },
    );
    expect(last.body.queries.map((q) => q.query_id)).toEqual([carol[0]]);
    expect(last.body).not.toHaveProperty('next_offset');
    expect((await own(KEYS.carol)).every((q) => q.owner === 'carol')).toBe(true);
    expect((await service.json('/v1/queries?limit=0', { key: KEYS.carol })).status).toBe(400);
  });
});

describe("the operator's query files", () => {
  it('read back as public queries owned by the operator, and cannot be changed through the API', async () => {
    const { status, body } = await read(3693850);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      query_id: 3693850,
      name: 'AVS metrics',
      owner: 'operator',
      is_private: false,
      is_archived: false,
      parameters: [],
    });
    expect(body.query_sql).toMatch(/restaking\.avs/);
    for (const key of [KEYS.alice, KEYS.admin]) {
      expect((await patch(3693850, { name: 'mine' }, key)).status).toBe(403);
      for (const action of ['archive', 'private'])
        expect((await service.json(`/v1/query/3693850/${action}`, post({}, key))).status).toBe(403);
    }
    expect((await read(3693850)).body.name).toBe('AVS metrics');
  });

  it('answers 404 for ids nobody has, and 405 for methods the paths lack', async () => {
    for (const path of ['/v1/query/999999', '/v1/query/abc', '/v1/query/1000999999']) {
      expect((await service.json(path)).status, path).toBe(404);
    }
    expect((await service.json('/v1/query/3693850', { method: 'DELETE' })).status).toBe(405);
    expect((await service.json('/v1/queries', { method: 'POST' })).status).toBe(405);
  });
});

describe('queries survive a restart', () => {
  it('keeps every query, and the next id is still a new one', async () => {
    const dataDir = tempDir();
    let first = await startTestService({}, dataDir);
    const a = await createQuery(first, { name: 'a', query_sql: 'SELECT 1', tags: ['t'] });
    const b = await createQuery(first, { name: 'b', query_sql: 'SELECT 2' });
    await first.close();
    first = await startTestService({}, dataDir);
    try {
      expect((await first.json<QueryObject>(`/v1/query/${a}`)).body).toMatchObject({
        name: 'a',
        tags: ['t'],
      });
      expect((await first.json<QueryObject>(`/v1/query/${b}`)).body.name).toBe('b');
      const c = await createQuery(first, { name: 'c', query_sql: 'SELECT 3' });
      expect(c).toBeGreaterThan(b);
    } finally {
      await first.stop();
    }
  });
});
