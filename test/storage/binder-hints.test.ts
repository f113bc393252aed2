import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureWithColumnHint } from '../../src/storage/binder-hints.js';

/**
 * DuckDB's own candidates for an unknown column, as a failed run would show them: read from a
 * real DuckDB's errors, where another schema holds a private table with near names that must
 * never appear.
 */

let instance: DuckDBInstance;
const failure = async (sql: string): Promise<string> => {
  const connection = await instance.connect();
  try {
    await connection.run(sql);
  } catch (error) {
    return failureWithColumnHint(error);
  } finally {
    connection.closeSync();
  }
  throw new Error(`${sql} ran`);
};

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(
    'CREATE SCHEMA alice; CREATE SCHEMA bob; CREATE TABLE alice.dataset_trades (trader VARCHAR, amount DOUBLE); CREATE TABLE bob.vault (amount_secret INT, amout_private INT); CREATE TABLE main.amout_tbl (amout INT)',
  );
  connection.closeSync();
});
afterAll(() => instance.closeSync());

describe('failureWithColumnHint', () => {
  it.each([
    [
      'SELECT amout FROM "alice"."dataset_trades" AS dataset_trades',
      'Binder Error: Referenced column "amout" not found in FROM clause! Did you mean "amount"?',
    ],
    [
      'SELECT dataset_trades.amout FROM "alice"."dataset_trades" AS dataset_trades',
      'Binder Error: Table "dataset_trades" does not have a column named "amout" Did you mean "amount"?',
    ],
    [
      'SELECT x.amount FROM "alice"."dataset_trades" AS dataset_trades',
      'Binder Error: Referenced table "x" not found! Did you mean "dataset_trades"?',
    ],
    [
      'SELECT amout_private FROM "alice"."dataset_trades" t JOIN "alice"."dataset_trades" u USING (trader)',
      'Binder Error: Referenced column "amout_private" not found in FROM clause! Did you mean "t.amount", "u.amount"?',
    ],
    // Catalog errors go on to name other tables: only their first line is kept.
    ['SELECT * FROM alice.vault', 'Catalog Error: Table with name vault does not exist!'],
    ['SELECT 1 + ', 'Parser Error: syntax error at end of input'],
  ])('%s', async (sql, expected) => {
    expect(await failure(sql)).toBe(expected);
  });
});
