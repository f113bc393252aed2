import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

let service: TestService;

interface ListEntry {
  full_name: string;
  namespace: string;
  table_name: string;
  description: string;
  is_private: boolean;
  row_count: number;
  table_size_bytes: string;
  created_at: string;
  updated_at: string;
  owner: { handle: string; type: string };
  columns: { name: string; type: string; nullable: boolean }[];
}

async function upload(key: string, fields: Record<string, unknown>) {
  const { status } = await service.json('/v1/table/upload/csv', { ...uploadBody(fields), key });
  expect(status).toBe(200);
}

async function list(key: string, query = '') {
  return service.json<{ tables: ListEntry[]; next_offset?: number; error?: string }>(`/v1/tables${query}`, {
    key,
  });
}

beforeAll(async () => {
  service = await startTestService();
  await upload(KEYS.alice, { table_name: 'a_public', description: 'public one', data: 'x,y\n1,a\n2,b\n' });
  await upload(KEYS.bob, { table_name: 'b_public', data: 'x\n1\n' });
  await upload(KEYS.bob, { table_name: 'b_private', data: 'x\n1\n', is_private: true });
  await upload(KEYS.carol, { table_name: 'c_public', data: 'x\n1\n' });
});
afterAll(async () => {
  await service.stop();
});

describe('GET /v1/tables', () => {
  it('lists the caller’s tables and other accounts’ public ones, never others’ private ones', async () => {
    const { status, body } = await list(KEYS.alice);
    expect(status).toBe(200);
    expect(body.tables.map((t) => t.full_name)).toEqual([
      'alice.dataset_a_public',
      'bob.dataset_b_public',
      'carol.dataset_c_public',
    ]);
    expect(body.next_offset).toBeUndefined();
    expect((await list(KEYS.bob)).body.tables.map((t) => t.full_name)).toContain('bob.dataset_b_private');
  });

  it('an admin sees every table', async () => {
    expect((await list(KEYS.admin)).body.tables).toHaveLength(4);
  });

  it('answers the documented entry shape', async () => {
    const entry = (await list(KEYS.alice)).body.tables[0];
    expect(entry).toEqual({
      full_name: 'alice.dataset_a_public',
      namespace: 'alice',
      table_name: 'dataset_a_public',
      description: 'public one',
      is_private: false,
      row_count: 2,
      table_size_bytes: '11',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      owner: { handle: 'alice', type: 'user' },
      columns: [
        { name: 'x', type: 'bigint', nullable: true },
        { name: 'y', type: 'varchar', nullable: true },
      ],
    });
  });

  it('keeps created_at and moves updated_at when a table is replaced', async () => {
    const before = (await list(KEYS.carol)).body.tables.find((t) => t.table_name === 'dataset_c_public');
    await new Promise((r) => setTimeout(r, 5));
    await upload(KEYS.carol, { table_name: 'c_public', data: 'x\n1\n2\n' });
    const after = (await list(KEYS.carol)).body.tables.find((t) => t.table_name === 'dataset_c_public');
    expect(after?.created_at).toBe(before?.created_at);
    expect(after && before && after.updated_at > before.updated_at).toBe(true);
    expect(after?.row_count).toBe(2);
  });

  it('pages with limit and offset, with next_offset until the last page', async () => {
    const first = await list(KEYS.admin, '?limit=3');
    expect(first.body.tables).toHaveLength(3);
    expect(first.body.next_offset).toBe(3);
    const second = await list(KEYS.admin, '?limit=3&offset=3');
    expect(second.body.tables.map((t) => t.full_name)).toEqual(['carol.dataset_c_public']);
    expect(second.body.next_offset).toBeUndefined();
    const past = await list(KEYS.admin, '?offset=100');
    expect(past).toEqual({ status: 200, body: { tables: [] } });
  });

  it('checks limit and offset', async () => {
    for (const [query, message] of [
      ['?limit=0', /"limit" must be at least 1/],
      ['?limit=10001', /"limit" must be at most 10000/],
      ['?limit=abc', /"limit" must be a whole number/],
      ['?offset=-1', /"offset" must be at least 0/],
      ['?limit=1&limit=2', /"limit" is given more than once/],
      ['?sort=x', /unknown query parameter "sort"/],
    ] as const) {
      const { status, body } = await list(KEYS.alice, query);
      expect(status).toBe(400);
      expect(body.error).toMatch(message);
    }
  });
});
