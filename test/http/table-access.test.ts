import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * DESIGN §3: a key writes only into its own namespace (an admin key into any), decided
 * before the table is looked up; namespace `restaking` is written by admins only; private
 * tables are invisible to other accounts, exactly as if they did not exist.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;
const schema = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'label', type: 'varchar' },
];

async function listed(key: string): Promise<string[]> {
  const { body } = await service.json<{ tables: { full_name: string }[] }>('/v1/tables?limit=1000', { key });
  return body.tables.map((t) => t.full_name);
}

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
  await calls.createTable(KEYS.bob, 'bob.open', schema);
  await calls.createTable(KEYS.bob, 'bob.secret', schema, { is_private: true });
  for (const table of ['bob.open', 'bob.secret']) {
    expect((await calls.insert(KEYS.bob, table, 'id,label\n1,kept\n')).status).toBe(200);
  }
});
afterAll(async () => {
  await service.stop();
});

describe('writing into another account’s namespace', () => {
  it('is 403 for every write, with the same answer whether the table is public, private or absent', async () => {
    const expected = {
      status: 403,
      body: { error: 'this key writes only into its own namespace "alice", not into "bob"' },
    };
    for (const table of ['bob.open', 'bob.secret', 'bob.nothing']) {
      const [namespace, tableName] = table.split('.');
      expect(await calls.create(KEYS.alice, { namespace, table_name: tableName, schema })).toEqual(expected);
      expect(await calls.insert(KEYS.alice, table, 'id\n2\n')).toEqual(expected);
      expect(await calls.insert(KEYS.alice, table, 'id\n2\n', 'text/plain')).toEqual(expected);
      expect(
        await calls.insert(KEYS.alice, table, '{"id": 2}', 'application/x-ndjson', '/v1/uploads'),
      ).toEqual(expected);
      expect(await calls.clear(KEYS.alice, table)).toEqual(expected);
      expect(await calls.remove(KEYS.alice, table)).toEqual(expected);
      expect(await calls.remove(KEYS.alice, table, '/v1/uploads')).toEqual(expected);
    }
    expect(await calls.rows('bob.open', 'id, label')).toEqual([{ id: 1n, label: 'kept' }]);
    expect(await calls.rows('bob.secret', 'id, label')).toEqual([{ id: 1n, label: 'kept' }]);
  });

  it('is refused before the body is read', async () => {
    const answer = await calls.insert(KEYS.alice, 'bob.open', `id\n${'1\n'.repeat(500_000)}`);
    expect(answer.status).toBe(403);
  });
});

describe('private tables', () => {
  it('are 404 to other accounts on every read path, exactly like an absent table', async () => {
    for (const key of [KEYS.alice, KEYS.carol]) {
      const secret = await calls.describe(key, 'bob.secret');
      expect(secret).toEqual({ status: 404, body: { error: 'table bob.secret does not exist' } });
      expect(await calls.describe(key, 'bob.nothing')).toEqual({
        status: 404,
        body: { error: 'table bob.nothing does not exist' },
      });
      expect(await calls.describe(key, 'bob.secret', '/api/v1/uploads')).toEqual(secret);
      expect(await listed(key)).not.toContain('bob.secret');
      expect(await listed(key)).toContain('bob.open');
      expect((await calls.describe(key, 'bob.open')).status).toBe(200);
    }
    const uploads = await service.json<{ tables: { full_name: string }[] }>('/v1/uploads', {
      key: KEYS.alice,
    });
    expect(uploads.body.tables.map((t) => t.full_name)).not.toContain('bob.secret');
  });

  it('are visible to their owner and to an admin', async () => {
    expect((await calls.describe(KEYS.bob, 'bob.secret')).body).toMatchObject({
      is_private: true,
      row_count: 1,
    });
    expect(await listed(KEYS.bob)).toContain('bob.secret');
    expect((await calls.describe(KEYS.admin, 'bob.secret')).status).toBe(200);
    expect(await listed(KEYS.admin)).toContain('bob.secret');
  });
});

describe('admin keys', () => {
  it('create, insert, clear and delete in any namespace, private tables included', async () => {
    expect(
      (await calls.create(KEYS.admin, { namespace: 'bob', table_name: 'by_admin', schema })).status,
    ).toBe(201);
    expect((await calls.create(KEYS.admin, { namespace: 'dave', table_name: 'fresh', schema })).status).toBe(
      201,
    );
    expect((await calls.insert(KEYS.admin, 'bob.secret', 'id,label\n2,admin\n')).body).toMatchObject({
      rows_written: 1,
      name: 'bob.secret',
    });
    expect(await calls.count('bob.secret')).toBe(2);
    expect(await calls.clear(KEYS.admin, 'bob.by_admin')).toEqual({
      status: 200,
      body: { message: 'Table bob.by_admin successfully cleared' },
    });
    expect(await calls.remove(KEYS.admin, 'dave.fresh')).toEqual({
      status: 200,
      body: { message: 'Table dave.fresh successfully deleted' },
    });
    // The table made by the admin in bob's namespace is bob's.
    expect(await listed(KEYS.bob)).toContain('bob.by_admin');
    expect((await calls.remove(KEYS.bob, 'bob.by_admin')).status).toBe(200);
  });
});

describe('namespace restaking', () => {
  it('is written by admin keys only; everyone reads it', async () => {
    const expected = {
      status: 403,
      body: { error: 'namespace "restaking" is shared data: only admin keys write into it' },
    };
    for (const key of [KEYS.alice, KEYS.bob]) {
      expect(await calls.create(key, { namespace: 'restaking', table_name: 'avs', schema })).toEqual(
        expected,
      );
    }
    expect(
      (await calls.create(KEYS.admin, { namespace: 'restaking', table_name: 'avs', schema })).status,
    ).toBe(201);
    expect((await calls.insert(KEYS.admin, 'restaking.avs', 'id,label\n1,EigenDA\n')).status).toBe(200);
    for (const key of [KEYS.alice, KEYS.bob]) {
      expect(await calls.insert(key, 'restaking.avs', 'id\n2\n')).toEqual(expected);
      expect(await calls.clear(key, 'restaking.avs')).toEqual(expected);
      expect(await calls.remove(key, 'restaking.avs')).toEqual(expected);
      expect((await calls.describe(key, 'restaking.avs')).body).toMatchObject({
        full_name: 'restaking.avs',
        row_count: 1,
      });
    }
    expect(await calls.rows('restaking.avs', 'id, label')).toEqual([{ id: 1n, label: 'EigenDA' }]);
  });

  it('other reserved schemas are not namespaces, even for an admin', async () => {
    for (const namespace of ['main', 'information_schema', 'temp', 'system', '_service']) {
      const answer = await calls.create(KEYS.admin, { namespace, table_name: 'x', schema });
      expect(answer.status, namespace).toBe(400);
      expect(answer.body.error).toMatch(/is not a namespace/);
    }
  });
});
