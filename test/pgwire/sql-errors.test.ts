import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { errorFields } from '../../src/pgwire/sql-errors.js';
import { StorageError } from '../../src/storage/storage-error.js';

/** DuckDB's real message for `sql`, as the storage layer hands it on. */
async function failureOf(setup: string, sql: string): Promise<StorageError> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(setup);
    await connection.run(sql);
  } catch (error) {
    return new StorageError((error as Error).message, sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  throw new Error(`${sql} did not fail`);
}

describe("DuckDB's errors as ErrorResponses", () => {
  it("passes on the binder's candidates from the statement itself as the HINT", async () => {
    const fields = errorFields(
      await failureOf('CREATE TABLE prices (price DOUBLE, day DATE)', 'SELECT prize FROM prices'),
    );
    expect(fields.code).toBe('42703');
    expect(fields.message).toBe('Binder Error: Referenced column "prize" not found in FROM clause!');
    expect(fields.hint).toMatch(/^Did you mean .*"price".*\?$/);
  });

  it('never passes on a "Did you mean" that searched the whole catalog (another account\'s table)', async () => {
    const error = await failureOf(
      'CREATE SCHEMA bob; CREATE TABLE bob.dataset_secret_prices (price DOUBLE)',
      'SELECT * FROM dataset_secret_price',
    );
    expect(error.message).toContain('dataset_secret_prices');
    const fields = errorFields(error);
    expect(fields.hint).toBeUndefined();
    expect(JSON.stringify(fields)).not.toContain('dataset_secret_prices');
  });
});
