import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { post, rowsOf, uploadTable } from './support/queries.js';

/**
 * The sandbox keeps the table records it looked up until they change (table-record-cache.ts,
 * catalog-changes.ts): every change of a table's record, made on any connection, is seen by
 * the very next execute.
 */

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

/** Runs the SQL as `key`: its rows, or the refusal's status. */
async function attempt(sql: string, key: string = KEYS.alice): Promise<unknown[] | number> {
  const { status, body } = await service.json<{ execution_id: string }>(
    '/v1/sql/execute',
    post({ sql }, key),
  );
  if (status !== 200) return status;
  return rowsOf(service, body.execution_id, key);
}

describe('table look-ups kept between changes', () => {
  it('sees a table uploaded, replaced and deleted at the next execute', async () => {
    const sql = 'SELECT * FROM dataset_fresh ORDER BY n';
    expect(await attempt(sql)).toBe(400);
    expect(await attempt(sql)).toBe(400);
    await uploadTable(service, 'fresh', 'n\n1\n');
    expect(await attempt(sql)).toEqual([{ n: 1 }]);
    expect(await attempt(sql)).toEqual([{ n: 1 }]);
    await uploadTable(service, 'fresh', 'n\n2\n3\n');
    expect(await attempt(sql)).toEqual([{ n: 2 }, { n: 3 }]);
    const deleted = await service.json('/v1/table/alice/dataset_fresh', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await attempt(sql)).toBe(400);
  });

  it("follows a table's privacy as its owner changes it", async () => {
    const sql = 'SELECT * FROM bob.dataset_shared';
    await uploadTable(service, 'shared', 'v\nsecret\n', { key: KEYS.bob, isPrivate: true });
    expect(await attempt(sql)).toBe(400);
    await uploadTable(service, 'shared', 'v\nopen\n', { key: KEYS.bob, isPrivate: false });
    expect(await attempt(sql)).toEqual([{ v: 'open' }]);
    await uploadTable(service, 'shared', 'v\nsecret again\n', { key: KEYS.bob, isPrivate: true });
    expect(await attempt(sql)).toBe(400);
    expect(await attempt(sql, KEYS.bob)).toEqual([{ v: 'secret again' }]);
  });

  it('keeps nothing it read while a change was under way', async () => {
    const sql = 'SELECT * FROM dataset_late';
    await service.database.write(async (session) => {
      await session.run('CREATE TABLE alice.dataset_late AS SELECT 7 AS n');
      await session.run(
        `INSERT INTO _service.tables (namespace, table_name, description, is_private, created_at, updated_at, row_count, size_bytes)
         VALUES ('alice', 'dataset_late', '', false, now(), now(), 1, 8)`,
      );
      // Looked up meanwhile, on another connection: not there yet, and not kept as absent.
      expect(await attempt(sql)).toBe(400);
    });
    expect(await attempt(sql)).toEqual([{ n: 7 }]);
  });

  it('trusts nothing kept while a change of the records is uncommitted, on any connection', async () => {
    const { database } = service;
    const before = database.tableRecordsEpoch;
    expect(before).toBeDefined();
    await database.read((s) => s.all('SELECT count(*) FROM _service.tables'));
    expect(database.tableRecordsEpoch).toBe(before);
    let during: number | undefined | null = null;
    await database
      .write(async (s) => {
        await s.run("UPDATE _service.tables SET description = 'x' WHERE false");
        during = database.tableRecordsEpoch;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(during).toBeUndefined();
    const afterRollback = database.tableRecordsEpoch as number;
    expect(afterRollback).toBeGreaterThan(before as number);
    await database.dedicated(async (s) => {
      await s.run('BEGIN TRANSACTION');
      await s.run("UPDATE _service.tables SET description = 'y' WHERE false");
      during = database.tableRecordsEpoch;
      await s.run('COMMIT');
    });
    expect(during).toBeUndefined();
    expect(database.tableRecordsEpoch).toBeGreaterThan(afterRollback);
  });
});
