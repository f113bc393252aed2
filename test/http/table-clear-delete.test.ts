import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

let service: TestService;
let calls: ReturnType<typeof tableCalls>;
const schema = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'amount', type: 'uint256' },
];

async function existsInDuckDb(namespace: string, table: string): Promise<boolean> {
  const rows = await service.database.read((session) =>
    session.all('SELECT 1 FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?', [namespace, table]),
  );
  return rows.length > 0;
}

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
});
afterAll(async () => {
  await service.stop();
});

describe('POST /v1/table/{namespace}/{table_name}/clear', () => {
  it('removes every row, keeps the table and its schema, and zeroes the catalog counts', async () => {
    await calls.createTable(KEYS.alice, 'alice.ledger', schema);
    await calls.insert(KEYS.alice, 'alice.ledger', 'id,amount\n1,10\n2,20\n');
    const before = (await calls.describe(KEYS.alice, 'alice.ledger')).body as { updated_at: string };
    await new Promise((r) => setTimeout(r, 5));
    expect(await calls.clear(KEYS.alice, 'alice.ledger')).toEqual({
      status: 200,
      body: { message: 'Table alice.ledger successfully cleared' },
    });
    expect(await calls.count('alice.ledger')).toBe(0);
    const after = (await calls.describe(KEYS.alice, 'alice.ledger')).body as Record<string, unknown>;
    expect(after).toMatchObject({
      row_count: 0,
      table_size_bytes: '0',
      columns: [
        { name: 'id', type: 'bigint', nullable: false },
        { name: 'amount', type: 'uint256', nullable: true },
      ],
    });
    expect(String(after.updated_at) > before.updated_at).toBe(true);
    // The table takes inserts again, and the same create is still "the same schema".
    expect((await calls.insert(KEYS.alice, 'alice.ledger', 'id\n3\n')).body).toMatchObject({
      rows_written: 1,
    });
    expect(
      (await calls.create(KEYS.alice, { namespace: 'alice', table_name: 'ledger', schema })).status,
    ).toBe(200);
  });

  it('clears an uploaded table too, and answers under /v1/uploads with the client’s {} body', async () => {
    await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'up', data: 'x\n1\n2\n' }),
      key: KEYS.alice,
    });
    const answer = await service.json('/v1/uploads/alice/dataset_up/clear', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      key: KEYS.alice,
    });
    expect(answer).toEqual({ status: 200, body: { message: 'Table alice.dataset_up successfully cleared' } });
    expect(await calls.count('alice.dataset_up')).toBe(0);
  });

  it('answers 404 for an absent table and 405 for another method', async () => {
    expect(await calls.clear(KEYS.alice, 'alice.nothing')).toEqual({
      status: 404,
      body: { error: 'table alice.nothing does not exist' },
    });
    const get = await service.json('/v1/table/alice/ledger/clear', { key: KEYS.alice });
    expect(get).toEqual({ status: 405, body: { error: 'method GET is not allowed here; use POST' } });
    const query = await service.json('/v1/table/alice/ledger/clear?all=true', {
      method: 'POST',
      key: KEYS.alice,
    });
    expect(query.status).toBe(400);
  });
});

describe('DELETE /v1/table/{namespace}/{table_name}', () => {
  it('drops the table and its record; a second delete is 404; the name can be created again', async () => {
    await calls.createTable(KEYS.alice, 'alice.doomed', schema);
    await calls.insert(KEYS.alice, 'alice.doomed', 'id\n1\n');
    expect(await calls.remove(KEYS.alice, 'alice.doomed')).toEqual({
      status: 200,
      body: { message: 'Table alice.doomed successfully deleted' },
    });
    expect(await existsInDuckDb('alice', 'doomed')).toBe(false);
    expect((await calls.describe(KEYS.alice, 'alice.doomed')).status).toBe(404);
    const list = await service.json<{ tables: { full_name: string }[] }>('/v1/tables', { key: KEYS.alice });
    expect(list.body.tables.map((t) => t.full_name)).not.toContain('alice.doomed');
    expect(await calls.remove(KEYS.alice, 'alice.doomed')).toEqual({
      status: 404,
      body: { error: 'table alice.doomed does not exist' },
    });
    const again = await calls.create(KEYS.alice, {
      namespace: 'alice',
      table_name: 'doomed',
      schema: [{ name: 'other', type: 'varchar' }],
    });
    expect(again.status).toBe(201);
  });

  it('deletes an uploaded table, under /v1/uploads and /api/v1 too', async () => {
    await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'old', data: 'x\n1\n' }),
      key: KEYS.alice,
    });
    expect(await calls.remove(KEYS.alice, 'alice.dataset_old', '/api/v1/uploads')).toEqual({
      status: 200,
      body: { message: 'Table alice.dataset_old successfully deleted' },
    });
    expect(await existsInDuckDb('alice', 'dataset_old')).toBe(false);
  });

  it('answers 405 for other methods on a table', async () => {
    const put = await service.json('/v1/table/alice/ledger', { method: 'PUT', key: KEYS.alice });
    expect(put).toEqual({ status: 405, body: { error: 'method PUT is not allowed here; use GET, DELETE' } });
  });
});

describe('GET /v1/table/{namespace}/{table_name}', () => {
  it('describes one table in the list’s entry shape', async () => {
    const { status, body } = await calls.describe(KEYS.alice, 'alice.ledger');
    expect(status).toBe(200);
    expect(body).toEqual({
      full_name: 'alice.ledger',
      namespace: 'alice',
      table_name: 'ledger',
      description: '',
      is_private: false,
      row_count: 1,
      table_size_bytes: expect.stringMatching(/^\d+$/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      owner: { handle: 'alice', type: 'user' },
      columns: [
        { name: 'id', type: 'bigint', nullable: false },
        { name: 'amount', type: 'uint256', nullable: true },
      ],
    });
  });
});
