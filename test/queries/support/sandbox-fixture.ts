import type { Account } from '../../../src/auth/account.js';
import { SqlChecker } from '../../../src/queries/sandbox/checker-pool.js';
import { type SandboxedSql, sandboxSql } from '../../../src/queries/sandbox/sandbox-sql.js';
import type { WrittenTableName } from '../../../src/queries/sandbox/table-names.js';
import { type TableResolver, tableResolver } from '../../../src/queries/sandbox/table-resolver.js';
import { Database } from '../../../src/storage/database.js';
import { migrate } from '../../../src/storage/service-schema.js';
import { qualifiedName } from '../../../src/storage/sql.js';
import { saveTable } from '../../../src/tables/table-catalog.js';

/**
 * A real database laid out as the service lays it out: accounts' namespaces with public
 * and private tables recorded in `_service.tables`, the shared `restaking` namespace, the
 * service's bookkeeping (`_service`) and an execution's result table (`_results`). Every
 * table's one row says which table it is, so a test can tell what a query really read.
 */

export const ALICE: Account = { handle: 'alice', plan: 'premium', admin: false };
export const BOB: Account = { handle: 'bob', plan: 'premium', admin: false };
export const ADMIN: Account = { handle: 'root', plan: 'premium', admin: true };

interface FixtureTable {
  namespace: string;
  table: string;
  isPrivate: boolean;
}

/** Each table holds one row: `(who, n)` with `who` naming the table. */
export const FIXTURE_TABLES: readonly FixtureTable[] = [
  { namespace: 'alice', table: 'dataset_prices', isPrivate: false },
  { namespace: 'alice', table: 'notes', isPrivate: true },
  // Named like tables of other namespaces and like CTEs the tests define.
  { namespace: 'alice', table: 'secret', isPrivate: false },
  { namespace: 'alice', table: 'a', isPrivate: false },
  { namespace: 'alice', table: 'b', isPrivate: false },
  { namespace: 'bob', table: 'public_t', isPrivate: false },
  { namespace: 'bob', table: 'secret', isPrivate: true },
  { namespace: 'carol', table: 'dataset_x', isPrivate: false },
  { namespace: 'restaking', table: 'avs', isPrivate: false },
];

/** A result table as the executions layer keeps one, and what the other resolver maps to it. */
export const RESULT_TABLE = { schema: '_results', table: 'e_01fixture' };

/** Opened behind the second wall, as the service opens its database, with no folder allowed. */
export async function openFixture(): Promise<Database> {
  const database = await Database.open({
    path: ':memory:',
    catalogReaders: 2,
    resultReaders: 1,
    allowedDirectories: [],
  });
  await migrate(database);
  await database.write(async (session) => {
    for (const { namespace, table, isPrivate } of FIXTURE_TABLES) {
      await session.run(`CREATE SCHEMA IF NOT EXISTS ${namespace}`);
      await session.run(
        `CREATE TABLE ${qualifiedName(namespace, table)} AS SELECT '${namespace}.${table}' AS who, 1::BIGINT AS n`,
      );
      await saveTable(session, {
        namespace,
        tableName: table,
        description: '',
        isPrivate,
        updatedAt: new Date(),
        rowCount: 1,
        sizeBytes: 10,
      });
    }
    await session.run(
      `CREATE TABLE ${qualifiedName(RESULT_TABLE.schema, RESULT_TABLE.table)} AS SELECT 'query_42' AS who, 42::BIGINT AS n`,
    );
    // Tables DuckDB's default schema would find for an unqualified name nobody resolved.
    await session.run(`CREATE TABLE main.a AS SELECT 'main.a' AS who, 1::BIGINT AS n`);
    await session.run(`CREATE TABLE main.b AS SELECT 'main.b' AS who, 1::BIGINT AS n`);
  });
  return database;
}

/**
 * The tables resolver composed with one for `query_<id>` names, the way the query layer
 * composes them: `query_42` is a readable result, every other `query_<n>` is not.
 */
export function composedResolver(
  session: Parameters<typeof tableResolver>[0],
  account: Account,
): TableResolver {
  const tables = tableResolver(session, account);
  const resultOf = (name: WrittenTableName) =>
    name.schema === undefined && /^query_\d+$/.test(name.table) ? name.table : undefined;
  return async (names) => {
    const found = await tables(names.filter((name) => resultOf(name) === undefined));
    return names.map((name) => {
      const result = resultOf(name);
      if (result === undefined) return found.shift();
      return result === 'query_42' ? { ...RESULT_TABLE, isPrivate: false } : undefined;
    });
  };
}

/**
 * One checker for every test file of a test process, as a service has one: its worker starts
 * once (about half a second), and it keeps no process alive while idle.
 */
export const sqlChecker = new SqlChecker({ workers: 1, maxWaiting: 1_000, maxWaitMs: 60_000 });

/** sandboxSql for `account`, its tables resolved on a reader of `database`. */
export function sandboxFor(database: Database, account: Account, sql: string): Promise<SandboxedSql> {
  return database.read((session) => sandboxSql(sqlChecker, sql, composedResolver(session, account)));
}
