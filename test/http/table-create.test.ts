import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { ALL_TYPES, type SchemaColumn, tableCalls } from '../support/tables.js';

let service: TestService;
let calls: ReturnType<typeof tableCalls>;

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
});
afterAll(async () => {
  await service.stop();
});

describe('POST /v1/table/create', () => {
  it('creates an empty table (201) and answers the documented shape', async () => {
    const answer = await calls.create(KEYS.alice, {
      namespace: 'alice',
      table_name: 'all_types',
      schema: ALL_TYPES,
      description: 'every declared type',
    });
    expect(answer).toEqual({
      status: 201,
      body: {
        namespace: 'alice',
        table_name: 'all_types',
        full_name: 'alice.all_types',
        example_query: 'select * from alice.all_types limit 10',
        already_existed: false,
        message: 'Table alice.all_types created',
      },
    });
    const columns = await service.database.read((session) =>
      session.all(
        `SELECT column_name, data_type, is_nullable FROM duckdb_columns()
          WHERE schema_name = 'alice' AND table_name = 'all_types' ORDER BY column_index`,
      ),
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'BIGINT', is_nullable: false },
      { column_name: 'label', data_type: 'VARCHAR', is_nullable: true },
      { column_name: 'n', data_type: 'INTEGER', is_nullable: true },
      { column_name: 'ratio', data_type: 'DOUBLE', is_nullable: true },
      { column_name: 'flag', data_type: 'BOOLEAN', is_nullable: true },
      { column_name: 'day', data_type: 'DATE', is_nullable: true },
      { column_name: 'at', data_type: 'TIMESTAMP', is_nullable: true },
      { column_name: 'payload', data_type: 'BLOB', is_nullable: true },
      { column_name: 'delta', data_type: 'BIGNUM', is_nullable: true },
      { column_name: 'balance', data_type: 'BIGNUM', is_nullable: true },
    ]);
    expect(await calls.count('alice.all_types')).toBe(0);
  });

  it('lists the table with its declared column types', async () => {
    const { body } = await calls.describe(KEYS.alice, 'alice.all_types');
    expect(body).toMatchObject({
      full_name: 'alice.all_types',
      description: 'every declared type',
      is_private: false,
      row_count: 0,
      table_size_bytes: '0',
      owner: { handle: 'alice', type: 'user' },
      columns: ALL_TYPES.map((c) => ({ ...c, nullable: c.nullable ?? true })),
    });
    const list = await service.json<{ tables: { full_name: string; columns: unknown[] }[] }>('/v1/tables', {
      key: KEYS.alice,
    });
    expect(list.body.tables.find((t) => t.full_name === 'alice.all_types')?.columns).toHaveLength(
      ALL_TYPES.length,
    );
  });

  it('answers 200 with already_existed for the same schema, changing nothing', async () => {
    const same = ALL_TYPES.map((c) => ({ ...c, type: c.type.toUpperCase(), nullable: c.nullable ?? true }));
    const answer = await calls.create(KEYS.alice, {
      namespace: 'alice',
      table_name: 'all_types',
      schema: same,
    });
    expect(answer).toEqual({
      status: 200,
      body: {
        namespace: 'alice',
        table_name: 'all_types',
        full_name: 'alice.all_types',
        example_query: 'select * from alice.all_types limit 10',
        already_existed: true,
        message: 'Table alice.all_types already exists with this schema; nothing was changed',
      },
    });
    expect((await calls.describe(KEYS.alice, 'alice.all_types')).body.description).toBe(
      'every declared type',
    );
  });

  it('answers 409 for a different schema: a type, nullability, order or column count', async () => {
    const variants: SchemaColumn[][] = [
      ALL_TYPES.map((c, i) => (i === 2 ? { ...c, type: 'bigint' } : c)),
      ALL_TYPES.map((c, i) => (i === 0 ? { ...c, nullable: true } : c)),
      [...ALL_TYPES.slice(1), ALL_TYPES[0] as SchemaColumn],
      ALL_TYPES.slice(0, 3),
      ALL_TYPES.map((c, i) => (i === 1 ? { ...c, name: 'Label' } : c)),
    ];
    for (const schema of variants) {
      const { status, body } = await calls.create(KEYS.alice, {
        namespace: 'alice',
        table_name: 'all_types',
        schema,
      });
      expect(status).toBe(409);
      expect(body.error).toMatch(
        /^table alice.all_types already exists with a different schema \(id bigint not null, label varchar/,
      );
    }
  });

  it('answers 409 when an upload holds the name', async () => {
    const upload = await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'prices', data: 'x\n1\n' }),
      key: KEYS.alice,
    });
    expect(upload.status).toBe(200);
    const { status, body } = await calls.create(KEYS.alice, {
      namespace: 'alice',
      table_name: 'dataset_prices',
      schema: [{ name: 'x', type: 'bigint' }],
    });
    expect(status).toBe(409);
    expect(body.error).toBe(
      'table alice.dataset_prices already exists as a CSV upload; delete it first or choose another name',
    );
  });

  it('answers under /v1/uploads and /api/v1 too; other methods are 405', async () => {
    const schema = [{ name: 'x', type: 'integer' }];
    expect(
      (
        await calls.create(
          KEYS.alice,
          { namespace: 'alice', table_name: 'via_uploads', schema },
          '/v1/uploads',
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await calls.create(
          KEYS.alice,
          { namespace: 'alice', table_name: 'via_api', schema },
          '/api/v1/uploads',
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await calls.create(
          KEYS.alice,
          { namespace: 'alice', table_name: 'via_table', schema },
          '/api/v1/table/create',
        )
      ).status,
    ).toBe(201);
    const get = await service.json('/v1/table/create', { key: KEYS.alice });
    expect(get).toEqual({ status: 405, body: { error: 'method GET is not allowed here; use POST' } });
    const put = await service.json('/v1/uploads', { method: 'PUT', key: KEYS.alice });
    expect(put.status).toBe(405);
  });

  it('refuses bad bodies with 400 naming the problem', async () => {
    const good = { namespace: 'alice', table_name: 'ok_name', schema: [{ name: 'x', type: 'integer' }] };
    const cases: [unknown, RegExp][] = [
      ['{"namespace": "alice",', /^malformed JSON body$/],
      ['[1, 2]', /^the body must be a JSON object/],
      ['"text"', /^malformed JSON body$/],
      [{ ...good, namespace: undefined }, /^field "namespace" is required$/],
      [{ ...good, table_name: undefined }, /^field "table_name" is required$/],
      [{ ...good, schema: undefined }, /^field "schema" is required$/],
      [{ ...good, namespace: 7 }, /^field "namespace" must be a string$/],
      [{ ...good, namespace: 'Alice' }, /^namespace "Alice" is not a namespace/],
      [{ ...good, table_name: 'Upper' }, /^field "table_name" must start with a lowercase letter/],
      [{ ...good, table_name: '1st' }, /^field "table_name" must start with a lowercase letter/],
      [{ ...good, table_name: 'a-b' }, /^field "table_name" must start with a lowercase letter/],
      [
        { ...good, table_name: 'x'.repeat(129) },
        /^field "table_name" must be at most 128 characters, got 129$/,
      ],
      [{ ...good, table_name: '' }, /^field "table_name" must not be empty$/],
      [{ ...good, schema: [] }, /^field "schema" must be a non-empty array/],
      [{ ...good, schema: {} }, /^field "schema" must be a non-empty array/],
      [
        { ...good, schema: [{ name: 'x', type: 'hugeint' }] },
        /^schema\[0\].type must be one of varchar, integer/,
      ],
      [{ ...good, schema: [{ name: 'x' }] }, /^schema\[0\].type must be one of/],
      [
        { ...good, schema: [{ name: '1x', type: 'integer' }] },
        /^schema\[0\].name must be a string starting with a letter or _/,
      ],
      [{ ...good, schema: [{ name: '', type: 'integer' }] }, /^schema\[0\].name must be a string/],
      [{ ...good, schema: ['x'] }, /^schema\[0\] must be an object$/],
      [
        {
          ...good,
          schema: [
            { name: 'x', type: 'integer' },
            { name: 'X', type: 'integer' },
          ],
        },
        /^schema\[1\].name "X" repeats a column name \(ignoring case\)$/,
      ],
      [
        { ...good, schema: [{ name: 'x', type: 'integer', nullable: 'yes' }] },
        /^schema\[0\].nullable must be true or false$/,
      ],
      [{ ...good, description: 5 }, /^field "description" must be a string$/],
      [{ ...good, is_private: 'true' }, /^field "is_private" must be true or false$/],
    ];
    for (const [body, message] of cases) {
      const answer = await calls.create(KEYS.alice, body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.body.error).toMatch(message);
    }
    expect(
      (await service.json<{ tables: unknown[] }>('/v1/tables', { key: KEYS.alice })).body.tables,
    ).toHaveLength(5);
  });

  it('answers 415 for a body that is not JSON, and 400 for an unknown query parameter', async () => {
    const answer = await service.json('/v1/table/create', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
      key: KEYS.alice,
    });
    expect(answer).toEqual({
      status: 415,
      body: { error: 'Content-Type must be application/json, got "text/plain"' },
    });
    const query = await service.json('/v1/table/create?force=1', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      key: KEYS.alice,
    });
    expect(query.status).toBe(400);
    expect(query.body).toEqual({ error: 'unknown query parameter "force"; this operation takes none' });
  });

  it('needs a premium plan for a private table (403), and makes one for premium', async () => {
    const schema = [{ name: 'x', type: 'integer' }];
    const free = await calls.create(KEYS.alice, {
      namespace: 'alice',
      table_name: 'secret',
      schema,
      is_private: true,
    });
    expect(free).toEqual({
      status: 403,
      body: {
        error: 'private tables need a premium plan; create with "is_private": false or upgrade the key',
      },
    });
    expect((await calls.describe(KEYS.alice, 'alice.secret')).status).toBe(404);
    const premium = await calls.create(KEYS.bob, {
      namespace: 'bob',
      table_name: 'secret',
      schema,
      is_private: true,
    });
    expect(premium.status).toBe(201);
    expect((await calls.describe(KEYS.bob, 'bob.secret')).body.is_private).toBe(true);
  });

  it('refuses a missing or wrong key with 401 before anything else', async () => {
    const answer = await service.json('/v1/table/create', {
      method: 'POST',
      body: 'not json',
      key: 'wrong-key-0000000',
    });
    expect(answer).toEqual({ status: 401, body: { error: expect.stringMatching(/^invalid API Key: /) } });
  });
});
