import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALLOWED_FUNCTIONS,
  ALLOWED_TABLE_FUNCTIONS,
  BINDER_FUNCTIONS,
  BUILT_IN_TYPE_NAMES,
  DENIED_FUNCTIONS,
} from '../../src/queries/sandbox/allowed-functions.js';
import type { Database } from '../../src/storage/database.js';
import { quoteIdentifier } from '../../src/storage/sql.js';
import { ALICE, openFixture, sandboxFor } from './support/sandbox-fixture.js';

/**
 * The function lists hold the rule of src/queries/sandbox/allowed-functions.ts for the DuckDB in use:
 * when a DuckDB upgrade adds, drops or renames a function or a type, this test fails and
 * lists it, so the new function is decided on before anyone can call it.
 */

let database: Database;

beforeAll(async () => {
  database = await openFixture();
});

afterAll(() => database.close());

const names = (sql: string) =>
  database.read(async (session) => (await session.all<{ name: string }>(sql)).map((row) => row.name).sort());

describe('the allowed functions', () => {
  it('are every function of schema main except the denied ones and the internals', async () => {
    const duckdb = await names(
      `SELECT DISTINCT lower(function_name) AS name FROM duckdb_functions()
        WHERE function_type IN ('scalar', 'aggregate', 'macro') AND schema_name = 'main'`,
    );
    const expected = duckdb.filter((name) => !DENIED_FUNCTIONS.has(name) && !name.startsWith('__internal'));
    const listed = [...ALLOWED_FUNCTIONS].filter((name) => !BINDER_FUNCTIONS.includes(name)).sort();
    expect(listed).toEqual(expected);
    expect([...DENIED_FUNCTIONS.keys()].filter((name) => !duckdb.includes(name))).toEqual([]);
  });

  it('lists table functions DuckDB has', async () => {
    const duckdb = await names(
      "SELECT DISTINCT function_name AS name FROM duckdb_functions() WHERE function_type = 'table'",
    );
    expect([...ALLOWED_TABLE_FUNCTIONS].filter((name) => !duckdb.includes(name))).toEqual([]);
  });

  it('lists the type names of the system catalog', async () => {
    const duckdb = await names(
      "SELECT DISTINCT lower(type_name) AS name FROM duckdb_types() WHERE database_name = 'system'",
    );
    expect([...BUILT_IN_TYPE_NAMES].sort()).toEqual(duckdb);
  });

  it('are each accepted by the sandbox, and each denied one refused with its reason', async () => {
    for (const name of ALLOWED_FUNCTIONS) {
      await expect(sandboxFor(database, ALICE, `SELECT ${quoteIdentifier(name)}()`)).resolves.toBeDefined();
    }
    for (const [name, reason] of DENIED_FUNCTIONS) {
      await expect(sandboxFor(database, ALICE, `SELECT ${name.toUpperCase()}()`)).rejects.toThrow(
        `function ${name} is not available in queries: it ${reason} at position 7`,
      );
    }
  });
});
