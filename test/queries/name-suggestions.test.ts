import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestTables } from '../../src/queries/sandbox/name-suggestions.js';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { executeSql, finished } from './support/queries.js';

/**
 * Did you mean (issue 24, part 5) in users' SQL: an unknown table is answered with the nearest
 * names the caller may see, never one it may not; an unknown column with DuckDB's own
 * candidates, which are the columns of the tables the query names.
 */

describe('suggestTables', () => {
  const visible = [
    { namespace: 'alice', table: 'dataset_trades' },
    { namespace: 'alice', table: 'dataset_prices' },
    { namespace: 'bob', table: 'dataset_trades' },
    { namespace: 'restaking', table: 'avs' },
    { namespace: 'restaking', table: 'operator_avs_registrations' },
  ];
  it.each([
    [{ table: 'trades' }, ['dataset_trades', 'bob.dataset_trades']],
    [{ table: 'dataset_price' }, ['dataset_prices']],
    [{ table: 'avs' }, ['restaking.avs']],
    [{ schema: 'restaking', table: 'avss' }, ['restaking.avs']],
    [{ schema: 'bob', table: 'trades' }, ['bob.dataset_trades']],
    [{ schema: 'alice', table: 'nothing_like_it' }, []],
    [{ table: 'volumes' }, []],
  ])('%j → %j', (name, expected) => {
    expect(suggestTables(name, visible, 'alice')).toEqual(expected);
  });
});

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
  const upload = async (key: string, fields: Record<string, unknown>) =>
    expect((await service.json('/v1/table/upload/csv', { ...uploadBody(fields), key })).status).toBe(200);
  await upload(KEYS.alice, { table_name: 'trades', data: 'trader,amount\n0xabc,1.5\n' });
  await upload(KEYS.bob, { table_name: 'hidden', data: 'secret_amount\n1\n', is_private: true });
  await upload(KEYS.bob, { table_name: 'hiddenx', data: 'a\n1\n', is_private: false });
});
afterAll(async () => {
  await service.stop();
});

async function refusal(sql: string, key: string = KEYS.alice): Promise<string> {
  const answer = await service.json<{ error?: string }>('/v1/sql/execute', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sql }),
    key,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  return answer.body.error as string;
}

describe('an unknown table in SQL', () => {
  it('names the upload a bare name most likely meant', async () => {
    expect(await refusal('SELECT sum(amount) FROM trades')).toBe(
      'table trades does not exist (did you mean dataset_trades?) at position 24',
    );
  });

  it("never names another account's private table: the answer is the same once it is gone", async () => {
    const whileHidden = await refusal('SELECT * FROM bob.dataset_hiden');
    expect(whileHidden).toBe(
      'table bob.dataset_hiden does not exist (did you mean bob.dataset_hiddenx?) at position 14',
    );
    expect(await refusal('SELECT * FROM bob.dataset_hidden')).toBe(
      'table bob.dataset_hidden does not exist (did you mean bob.dataset_hiddenx?) at position 14',
    );
    expect(
      (await service.json('/v1/table/bob/dataset_hidden', { method: 'DELETE', key: KEYS.bob })).status,
    ).toBe(200);
    expect(await refusal('SELECT * FROM bob.dataset_hiden')).toBe(whileHidden);
  });
});

describe('an unknown column in SQL', () => {
  // DuckDB's candidates name only the query's own columns (test/storage/binder-hints.test.ts);
  // the run's failure shows the first line of its message, and never another table's columns.
  it("fails the run with DuckDB's message, which names no column of a table the caller may not see", async () => {
    await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'vault', data: 'amount_secret\n1\n', is_private: true }),
      key: KEYS.bob,
    });
    const id = await executeSql(service, 'SELECT amout FROM dataset_trades');
    const status = await finished(service, id);
    expect(status.state).toBe('QUERY_STATE_FAILED');
    const message = (status.error as { message: string }).message;
    expect(message).toMatch(/Referenced column "amout" not found/);
    expect(message).not.toMatch(/secret/);
  });
});
