import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_SCHEMA } from '../../src/storage/service-schema.js';
import { namespaceStorageBytes } from '../../src/tables/table-storage.js';
import { expireAllVersions } from '../../src/tables/table-versions.js';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Undo (issue 24, part 4): every write keeps the table's previous version for
 * TABLE_VERSIONS_KEPT writes or TABLE_VERSION_HOURS; GET …/versions lists them and POST
 * …/restore brings one back whole, catalog included.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
});
afterAll(async () => {
  await service.stop();
});

type Answer = { status: number; body: Record<string, unknown> & { error?: string } };

const post = (path: string, body: unknown, key: string = KEYS.alice, type = 'application/json') =>
  service.json(path, {
    method: 'POST',
    headers: { 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    key,
  }) as Promise<Answer>;

const restore = (table: string, version: unknown, key: string = KEYS.alice) =>
  post(`/v1/table/${table.replace('.', '/')}/restore`, { version }, key);

interface VersionEntry {
  version: number;
  current: boolean;
  operation: string | null;
  created_at: string;
  row_count: number;
  bytes: number;
  expires_at?: string;
}
const versions = async (table: string, key: string = KEYS.alice) =>
  (await service.json<{ versions: VersionEntry[]; kept: unknown; error?: string }>(
    `/v1/table/${table.replace('.', '/')}/versions`,
    { key },
  )) as { status: number; body: { versions: VersionEntry[]; kept: unknown; error?: string } };

/** Everything a restore must bring back: the rows in order, the column types, the catalog's record. */
async function state(table: string) {
  const [namespace, name] = table.split('.') as [string, string];
  const { rows, columns } = await service.database.read((session) => session.query(`SELECT * FROM ${table}`));
  const listed = await calls.describe(KEYS.alice, table);
  const { updated_at: _updated, ...entry } = listed.body as Record<string, unknown>;
  return { rows, columns, entry, namespace, name };
}

/** The tables holding the kept versions of `table`. */
const versionTables = async (table: string) => {
  const [namespace, name] = table.split('.');
  const rows = await service.database.read((session) =>
    session.all<{ undo: string }>(
      `SELECT undo FROM ${SERVICE_SCHEMA}.table_versions WHERE namespace = ? AND table_name = ?`,
      [namespace as string, name as string],
    ),
  );
  return rows.flatMap((row) => {
    const undo = JSON.parse(row.undo) as { data?: string; keys?: string };
    return [undo.data, undo.keys].filter((t): t is string => t !== undefined);
  });
};

/** Tables of versions that no kept version refers to: there must never be any. */
const orphans = async () => {
  const tables = await service.database.read((session) =>
    session.all<{ table_name: string }>(
      "SELECT table_name FROM duckdb_tables() WHERE starts_with(table_name, '__version_')",
    ),
  );
  const records = await service.database.read((session) =>
    session.all<{ undo: string }>(`SELECT undo FROM ${SERVICE_SCHEMA}.table_versions`),
  );
  const referred = new Set(
    records.flatMap((row) => Object.values(JSON.parse(row.undo) as Record<string, unknown>)),
  );
  return tables.map((t) => t.table_name).filter((name) => !referred.has(name));
};

const SCHEMA = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'amount', type: 'uint256' },
  { name: 'note', type: 'varchar' },
];

let count = 0;
async function createdTable(): Promise<string> {
  const table = `alice.kept_${++count}`;
  await calls.createTable(KEYS.alice, table, SCHEMA, { key: ['id'] });
  expect(
    (await calls.insert(KEYS.alice, table, 'id,amount,note\n1,10,a\n2,20,b\n2,20,b\n3,,c\n')).status,
  ).toBe(200);
  return table;
}

describe('each write keeps the previous version, and restore brings it back whole', () => {
  const writes: [string, (table: string) => Promise<Answer>][] = [
    // A row equal to rows already there: restore removes exactly the copy the insert added.
    ['insert', (table) => calls.insert(KEYS.alice, table, 'id,amount,note\n2,20,b\n4,40,d\n')],
    [
      'upsert',
      (table) =>
        post(
          `/v1/table/${table.replace('.', '/')}/upsert?key=id`,
          'id,amount,note\n1,11,a2\n5,50,e\n',
          KEYS.alice,
          'text/csv',
        ),
    ],
    [
      'delete-rows',
      (table) =>
        post(`/v1/table/${table.replace('.', '/')}/delete-rows`, {
          filters: 'amount >= 20 OR amount IS NULL',
        }),
    ],
    ['clear', (table) => calls.clear(KEYS.alice, table)],
  ];
  for (const [operation, write] of writes) {
    it(operation, async () => {
      const table = await createdTable();
      const before = await state(table);
      const written = await write(table);
      expect(written.status, JSON.stringify(written.body)).toBe(200);
      expect(await state(table)).not.toEqual(before);
      const listed = await versions(table);
      expect(listed.body.versions.map((v) => [v.version, v.current, v.operation])).toEqual([
        [3, true, operation],
        [2, false, 'insert'],
      ]);
      expect(listed.body.versions[1]?.row_count).toBe(4);
      const answer = await restore(table, 2);
      expect(answer).toMatchObject({ status: 200, body: { version: 2, restored_from: 3, row_count: 4 } });
      const after = await state(table);
      // Deleted rows come back at the end of the table's order.
      const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => String(a).localeCompare(String(b)));
      expect(sorted(after.rows)).toEqual(sorted(before.rows));
      expect({ ...after, rows: [] }).toEqual({ ...before, rows: [] });
      // The declared schema holds again: a NULL id is still refused.
      expect((await calls.insert(KEYS.alice, table, 'id,note\n,x\n')).status).toBe(400);
      expect(await versionTables(table)).toEqual([]);
      expect(await orphans()).toEqual([]);
    });
  }

  it('replace, for an upload: the previous table whole, its types and description too', async () => {
    const upload = (data: string, description: string) =>
      service.json('/v1/table/upload/csv', {
        ...uploadBody({ table_name: 'prices', data, description }),
        key: KEYS.alice,
      });
    expect((await upload('day,price\n2024-01-01,1.5\n', 'first')).status).toBe(200);
    const first = await state('alice.dataset_prices');
    expect((await upload('token,note\nstETH,n/a\n', 'second')).status).toBe(200);
    const [current, previous] = (await versions('alice.dataset_prices')).body.versions;
    expect(current).toMatchObject({ version: 2, current: true, operation: 'replace', row_count: 1 });
    expect(previous, JSON.stringify(previous)).toMatchObject({
      version: 1,
      current: false,
      operation: 'replace',
      row_count: 1,
    });
    expect(previous?.bytes).toBeGreaterThan(0);
    expect((await restore('alice.dataset_prices', 1)).status).toBe(200);
    expect(await state('alice.dataset_prices')).toEqual(first);
  });

  it('an insert into an empty table keeps nothing but undoes to empty', async () => {
    const table = 'alice.empty_first';
    await calls.createTable(KEYS.alice, table, SCHEMA);
    expect((await calls.insert(KEYS.alice, table, 'id\n1\n2\n')).status).toBe(200);
    expect(await versionTables(table)).toEqual([]);
    expect((await restore(table, 1)).status).toBe(200);
    expect(await calls.count(table)).toBe(0);
  });
});

describe('what is kept, and for how long', () => {
  it('keeps TABLE_VERSIONS_KEPT writes (1): an older version is a 410, and so is a second restore', async () => {
    const table = await createdTable();
    expect((await calls.insert(KEYS.alice, table, 'id\n7\n')).status).toBe(200);
    expect((await calls.insert(KEYS.alice, table, 'id\n8\n')).status).toBe(200);
    const before = await state(table);
    const old = await restore(table, 2);
    expect(old.status).toBe(410);
    expect(old.body.error).toMatch(
      /^version 2 of alice\.kept_\d+ is not kept \(any more\): versions are kept for 1 write or 168 hours/,
    );
    expect((await versions(table)).body.versions.map((v) => v.version)).toEqual([4, 3]);
    expect((await restore(table, 3)).status).toBe(200);
    expect((await versions(table)).body.versions.map((v) => v.version)).toEqual([3]);
    expect((await restore(table, 4)).status).toBe(410);
    expect(await calls.count(table)).toBe(before.rows.length - 1);
  });

  it('forgets a version past TABLE_VERSION_HOURS: not listed, a 410, its rows dropped', async () => {
    const table = await createdTable();
    expect(
      (await post(`/v1/table/${table.replace('.', '/')}/delete-rows`, { filters: 'id = 1' })).status,
    ).toBe(200);
    expect(await versionTables(table)).toHaveLength(1);
    await service.database.write((session) =>
      session.run(
        `UPDATE ${SERVICE_SCHEMA}.table_versions SET superseded_at = superseded_at - INTERVAL 169 HOURS`,
      ),
    );
    const before = await state(table);
    expect((await versions(table)).body.versions.map((v) => v.version)).toEqual([3]);
    expect((await restore(table, 2)).status).toBe(410);
    expect(await state(table)).toEqual(before);
    await service.database.write((session) => expireAllVersions(session, { kept: 1, hours: 168 }));
    expect(await versionTables(table)).toEqual([]);
    expect(await orphans()).toEqual([]);
  });

  it('refuses bad restores with a 4xx and changes nothing', async () => {
    const table = await createdTable();
    expect((await calls.insert(KEYS.alice, table, 'id\n9\n')).status).toBe(200);
    const before = await state(table);
    const path = `/v1/table/${table.replace('.', '/')}/restore`;
    const cases: [unknown, number, RegExp][] = [
      [{ version: 3 }, 400, /version 3 is the current version/],
      [{ version: 99 }, 410, /version 99 of .* is not kept/],
      [{ version: '2' }, 400, /the body must be \{"version": N\}/],
      [{ version: 0 }, 400, /the body must be/],
      [{}, 400, /the body must be/],
      [{ version: 2, force: true }, 400, /unknown field "force"/],
      ['nope', 400, /malformed JSON/],
    ];
    for (const [body, status, error] of cases) {
      const answer = await post(path, body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.error, JSON.stringify(body)).toMatch(error);
    }
    expect((await restore(table, 2, KEYS.bob)).status).toBe(403);
    expect((await versions(table, KEYS.bob)).status).toBe(403);
    expect((await restore('alice.nothing_here', 1)).status).toBe(404);
    expect(await state(table)).toEqual(before);
  });

  it("keeps versions out of users' SQL, drops them with the table, and counts them in the namespace's storage", async () => {
    const table = await createdTable();
    expect((await calls.clear(KEYS.alice, table)).status).toBe(200);
    const [kept] = await versionTables(table);
    expect(kept).toMatch(/^__version_/);
    const storage = await service.database.read((session) => namespaceStorageBytes(session, 'alice'));
    expect(storage.versions).toBeGreaterThan(0);
    expect(storage.total).toBe(storage.tables + storage.versions + storage.staging);
    const run = await post('/v1/sql/execute', { sql: `SELECT * FROM alice.${kept}` });
    expect(run).toMatchObject({ status: 400, body: { error: expect.stringMatching(/does not exist/) } });
    expect((await calls.remove(KEYS.alice, table)).status).toBe(200);
    expect(await versionTables(table)).toEqual([]);
    expect(await orphans()).toEqual([]);
  });
});

describe('TABLE_VERSIONS_KEPT=0 and more than one', () => {
  it('0 keeps nothing; 3 restores three writes back, undoing each in turn', async () => {
    const off = await startTestService({ TABLE_VERSIONS_KEPT: '0' });
    try {
      const offCalls = tableCalls(off);
      await offCalls.createTable(KEYS.alice, 'alice.plain', SCHEMA);
      expect((await offCalls.insert(KEYS.alice, 'alice.plain', 'id\n1\n')).status).toBe(200);
      expect((await offCalls.clear(KEYS.alice, 'alice.plain')).status).toBe(200);
      const listed = await off.json<{ versions: VersionEntry[] }>('/v1/table/alice/plain/versions');
      expect(listed.body.versions.map((v) => [v.version, v.current])).toEqual([[3, true]]);
      expect(
        (
          await off.json('/v1/table/alice/plain/restore', {
            method: 'POST',
            body: '{"version": 2}',
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(410);
    } finally {
      await off.stop();
    }
    const three = await startTestService({ TABLE_VERSIONS_KEPT: '3' });
    try {
      const threeCalls = tableCalls(three);
      await threeCalls.createTable(KEYS.alice, 'alice.deep', SCHEMA, { key: ['id'] });
      const at = async () =>
        (
          await three.database.read((s) => s.all<{ id: bigint }>('SELECT id FROM alice.deep ORDER BY id'))
        ).map((r) => Number(r.id));
      expect((await threeCalls.insert(KEYS.alice, 'alice.deep', 'id\n1\n2\n')).status).toBe(200);
      const two = await at();
      expect((await threeCalls.insert(KEYS.alice, 'alice.deep', 'id\n3\n')).status).toBe(200);
      const send = (path: string, body: string, type: string) =>
        three.json(path, { method: 'POST', headers: { 'content-type': type }, body });
      expect((await send('/v1/table/alice/deep/upsert', 'id,note\n1,x\n9,y\n', 'text/csv')).status).toBe(200);
      expect(
        (await send('/v1/table/alice/deep/delete-rows', '{"filters": "id < 3"}', 'application/json')).status,
      ).toBe(200);
      const listed = await three.json<{ versions: VersionEntry[] }>('/v1/table/alice/deep/versions');
      expect(listed.body.versions.map((v) => [v.version, v.operation])).toEqual([
        [5, 'delete-rows'],
        [4, 'upsert'],
        [3, 'insert'],
        [2, 'insert'],
      ]);
      expect((await send('/v1/table/alice/deep/restore', '{"version": 2}', 'application/json')).status).toBe(
        200,
      );
      expect(await at()).toEqual(two);
      // A write after the restore takes a new number: version numbers are never given twice.
      expect((await threeCalls.insert(KEYS.alice, 'alice.deep', 'id\n4\n')).status).toBe(200);
      const after = await three.json<{ versions: VersionEntry[] }>('/v1/table/alice/deep/versions');
      // Kept 3: the version 1 went when the fourth write came.
      expect(after.body.versions.map((v) => v.version)).toEqual([6, 2]);
    } finally {
      await three.stop();
    }
  });
});
