import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { MAX_SQL_BYTES, sandboxSql } from '../../src/queries/sandbox/sandbox-sql.js';
import type { WrittenTableName } from '../../src/queries/sandbox/table-names.js';
import type { Database } from '../../src/storage/database.js';
import { ADMIN, ALICE, BOB, openFixture, sandboxFor, sqlChecker } from './support/sandbox-fixture.js';
import { VALID_SQL } from './support/valid-sql.js';

/**
 * sandboxSql against a real DuckDB holding real schemas: alice's own tables, bob's public and
 * private ones, `restaking`, the service's `_service` and `_results`, and tables in DuckDB's
 * default schema that an unresolved name would reach.
 */

let database: Database;

beforeAll(async () => {
  database = await openFixture();
});

afterAll(() => database.close());

const run = (sql: string) => database.read(async (session) => (await session.query(sql)).rows);

/** The 400 sandboxSql answers, or a failure saying what it accepted instead. */
async function refusal(sql: string, account = ALICE): Promise<string> {
  const error = await sandboxFor(database, account, sql).then(
    (checked) => new Error(`accepted as ${checked.sql}`),
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw error;
  expect(error.status).toBe(400);
  return error.message;
}

/** Which fixture tables a query read: each fixture row's `who` names its table. */
async function whoIsRead(sql: string, account = ALICE): Promise<string[]> {
  const checked = await sandboxFor(database, account, sql);
  const rows = await database.read((session) => session.all<{ who: string }>(checked.sql));
  return rows.map((row) => row.who).sort();
}

describe('queries the sandbox accepts', () => {
  it.each(VALID_SQL)('%s: same result as run directly', async (sql) => {
    const checked = await sandboxFor(database, ALICE, sql);
    const result = (text: string) => database.read((session) => session.query(text));
    expect(await result(checked.sql)).toEqual(await result(sql));
  });
});

describe('what a table name means', () => {
  it.each([
    ['an unqualified name: the caller’s namespace', 'SELECT who FROM dataset_prices', 'alice.dataset_prices'],
    ['own table, qualified', 'SELECT who FROM alice.dataset_prices', 'alice.dataset_prices'],
    ['own private table', 'SELECT who FROM notes', 'alice.notes'],
    ['another account’s public table', 'SELECT who FROM bob.public_t', 'bob.public_t'],
    ['restaking', 'SELECT who FROM restaking.avs', 'restaking.avs'],
    ['dune. three-part name', 'SELECT who FROM dune.carol.dataset_x', 'carol.dataset_x'],
    ['DUNE. in capitals', 'SELECT who FROM DUNE.restaking.avs', 'restaking.avs'],
    ['quoted and in other case', 'SELECT who FROM "ALICE"."Dataset_Prices"', 'alice.dataset_prices'],
    ['query_<id>, through the composed resolver', 'SELECT who FROM query_42', 'query_42'],
    ['a public table named like a private one elsewhere', 'SELECT who FROM secret', 'alice.secret'],
  ])('%s', async (_name, sql, who) => {
    expect(await whoIsRead(sql)).toEqual([who]);
  });

  it.each([
    [
      'another account’s private table',
      'SELECT * FROM bob.secret',
      'table bob.secret does not exist at position 14',
    ],
    [
      'a table that does not exist',
      'SELECT * FROM bob.nothing',
      'table bob.nothing does not exist at position 14',
    ],
    [
      'a namespace that does not exist',
      'SELECT * FROM nobody.t',
      'table nobody.t does not exist at position 14',
    ],
    [
      'an unqualified name not in the own namespace',
      'SELECT * FROM public_t',
      'table public_t does not exist at position 14',
    ],
    ['DuckDB’s default schema', 'SELECT * FROM main.a', 'table main.a does not exist at position 14'],
    [
      'the service’s bookkeeping',
      'SELECT * FROM _service.tables',
      'table _service.tables does not exist at position 14',
    ],
    [
      'a result table by its own name',
      'SELECT * FROM _results.e_01fixture',
      'table _results.e_01fixture does not exist at position 14',
    ],
    [
      'a query result the caller may not read',
      'SELECT * FROM query_7',
      'table query_7 does not exist at position 14',
    ],
    [
      'a catalog other than dune',
      'SELECT * FROM memory.bob.public_t',
      'table memory.bob.public_t does not exist at position 14',
    ],
  ])('%s is refused as absent', async (_name, sql, message) => {
    expect(await refusal(sql)).toBe(message);
  });

  it('words a private table exactly as an absent one, position included', async () => {
    const privateOne = await refusal('SELECT * FROM bob.secret');
    const absentOne = await refusal('SELECT * FROM bob.secres');
    expect(privateOne.replace('secret', 'X')).toBe(absentOne.replace('secres', 'X'));
  });

  it('lets the owner and an admin read a private table, and says it was private', async () => {
    expect(await whoIsRead('SELECT who FROM bob.secret', BOB)).toEqual(['bob.secret']);
    expect(await whoIsRead('SELECT who FROM bob.secret', ADMIN)).toEqual(['bob.secret']);
    expect((await sandboxFor(database, BOB, 'SELECT * FROM secret')).readsPrivate).toBe(true);
    expect((await sandboxFor(database, ALICE, 'SELECT * FROM notes')).readsPrivate).toBe(true);
    expect((await sandboxFor(database, ALICE, 'SELECT * FROM bob.public_t')).readsPrivate).toBe(false);
    expect(
      (await sandboxFor(database, ALICE, 'SELECT * FROM bob.public_t WHERE n IN (SELECT n FROM notes)'))
        .readsPrivate,
    ).toBe(true);
  });

  it('keeps the written name as the alias, so columns qualified by it still work', async () => {
    const checked = await sandboxFor(
      database,
      ALICE,
      'SELECT query_42.n, q.n AS m FROM query_42, query_42 AS q',
    );
    expect(checked.sql).toBe(
      'SELECT query_42.n, q.n AS m FROM _results.e_01fixture AS query_42 , _results.e_01fixture AS q',
    );
    expect(await run(checked.sql)).toEqual([[42n, 42n]]);
  });

  it('asks the resolver once, each name once, lowercased, with dune. removed and unqualified names left so', async () => {
    const asked: (readonly WrittenTableName[])[] = [];
    await sandboxSql(
      sqlChecker,
      'SELECT * FROM "Query_42", dune.Bob.t, bob.T, query_42, x.y.z CROSS JOIN t',
      async (names) => {
        asked.push(names);
        return names.map(() => ({ schema: 'bob', table: 'public_t', isPrivate: false }));
      },
    ).catch(() => undefined);
    expect(asked).toEqual([[{ table: 'query_42' }, { schema: 'bob', table: 't' }]]);
  });

  it('writes the names a resolver answers as names, never as SQL text', async () => {
    const checked = await sandboxSql(sqlChecker, 'SELECT * FROM t', async () => [
      { schema: 'bob', table: 'public_t"; DROP TABLE x; --', isPrivate: false },
    ]);
    expect(checked.sql).toBe('SELECT * FROM bob."public_t""; DROP TABLE x; --" AS t');
    await expect(run(checked.sql)).rejects.toThrow(/public_t"; DROP TABLE x; -- does not exist/);
  });

  it('refuses a resolver answer holding a NUL, as a bug rather than a 400', async () => {
    const answer = sandboxSql(sqlChecker, 'SELECT * FROM t', async () => [
      { schema: 'bob', table: '\u000012', isPrivate: false },
    ]);
    await expect(answer).rejects.toThrow(/a name holding a NUL/);
    await expect(answer).rejects.not.toBeInstanceOf(ApiError);
  });
});

/**
 * Which names mean a CTE, compared with DuckDB itself: each query runs directly (where a name
 * that is not a CTE reads the table of that name in DuckDB's default schema, `main.a`) and
 * through the sandbox (where it reads the caller's table, `alice.a`). Both must read a CTE or
 * a table at the same places.
 */
describe('CTE scoping, as DuckDB scopes it', () => {
  const cte = (name: string) => `SELECT 'cte ${name}' AS who, 0::BIGINT AS n`;
  it.each([
    `WITH a AS (${cte('a')}) SELECT who FROM a`,
    `WITH A AS (${cte('a')}) SELECT who FROM "a"`,
    `WITH a AS (SELECT * FROM b), b AS (${cte('b')}) SELECT who FROM a`,
    `WITH a AS (SELECT * FROM a) SELECT who FROM a`,
    `WITH RECURSIVE a AS (SELECT * FROM a) SELECT who FROM a`,
    `WITH RECURSIVE b AS (${cte('b')}), a AS (SELECT * FROM b) SELECT who FROM a`,
    'WITH RECURSIVE a(who, n) AS (SELECT who, n FROM a UNION ALL SELECT who, n + 1 FROM a WHERE n < 3) SELECT who FROM a',
    `WITH RECURSIVE b(who, n) AS (${cte('b')} UNION ALL SELECT who, n + 1 FROM (SELECT * FROM b) WHERE n < 2) SELECT who FROM b`,
    `(WITH b AS (${cte('b')}) SELECT who FROM b) UNION ALL SELECT who FROM b`,
    `WITH b AS (${cte('b')}) (SELECT who FROM b) UNION ALL (SELECT who FROM b)`,
    `WITH b AS (${cte('b')}) SELECT (SELECT who FROM b) AS who FROM a`,
    `WITH a AS (${cte('outer a')}) SELECT who FROM (WITH a AS (SELECT * FROM a) SELECT * FROM a)`,
    `WITH x AS (SELECT (SELECT who FROM b) AS who), b AS (${cte('b')}) SELECT who FROM x`,
    `WITH a AS (WITH b AS (${cte('inner b')}) SELECT * FROM b) SELECT a.who FROM a UNION ALL SELECT who FROM b`,
    `WITH a AS (${cte('a')}) SELECT l.who FROM b, LATERAL (SELECT * FROM a) l`,
    `WITH a AS (${cte('a')}) SELECT who FROM b WHERE who NOT IN (SELECT who FROM a)`,
    `WITH a AS (${cte('a')}) SELECT who FROM a ORDER BY (SELECT count(*) FROM b)`,
    `SELECT who FROM (WITH b AS (${cte('b')}) SELECT * FROM b) UNION ALL SELECT who FROM a`,
  ])('%s', async (sql) => {
    const direct = (await run(sql)).map(([who]) => String(who).replace(/^main\./, 'alice.')).sort();
    expect(await whoIsRead(sql)).toEqual(direct);
  });

  it('renames CTEs, so that no unqualified name in the SQL that runs is anything else', async () => {
    const checked = await sandboxFor(
      database,
      ALICE,
      'WITH secret AS (SELECT 1 AS n) SELECT secret.n FROM secret, b',
    );
    expect(checked.sql).toBe(
      'WITH cte_1 AS (SELECT 1 AS n)SELECT "secret".n FROM cte_1 AS "secret" , alice.b',
    );
  });
});

describe('column names', () => {
  const names = async (sql: string) => {
    const checked = await sandboxFor(database, ALICE, sql);
    return (await database.read((session) => session.query(checked.sql))).columns.map(
      (column) => column.name,
    );
  };

  it('stay those of the SQL as written where the rewrite changes an expression', async () => {
    expect(await names('SELECT (SELECT max(n) FROM notes), n * 1e18, n + 5., * FROM notes')).toEqual([
      '(SELECT max(n) FROM notes)',
      '(n * 1e+18)',
      '(n + 5)',
      'who',
      'n',
    ]);
  });

  it('follow DuckDB’s SQL writer where it is not faithful: lambda x: is written x ->', async () => {
    const sql = 'SELECT list_filter([1], lambda x: x > 0)';
    const direct = (await database.read((session) => session.query(sql))).columns[0]?.name;
    expect(direct).toBe('list_filter(main.list_value(1), (lambda x: (x > 0)))');
    expect(await names(sql)).toEqual(['list_filter(main.list_value(1), (x -> (x > 0)))']);
  });
});

describe('numbers beyond 2^53', () => {
  it('keeps 9007199254740993 exact', async () => {
    const checked = await sandboxFor(database, ALICE, 'SELECT 9007199254740993 AS big');
    expect(await run(checked.sql)).toEqual([[9007199254740993n]]);
  });

  it('keeps the extremes of BIGINT and HUGEINT exact', async () => {
    const sql = 'SELECT -9223372036854775808, 18446744073709551615, 170141183460469231731687303715884105727';
    const checked = await sandboxFor(database, ALICE, sql);
    expect(await run(checked.sql)).toEqual([
      [-9223372036854775808n, 18446744073709551615n, 170141183460469231731687303715884105727n],
    ]);
  });

  it('refuses 1e400, which DuckDB writes into the tree as an Infinity it cannot read back', async () => {
    expect(await refusal('SELECT 1.5e300, -1e400')).toBe(
      "a number beyond DOUBLE's range is not supported: write 'infinity'::DOUBLE at position 16",
    );
    const checked = await sandboxFor(database, ALICE, "SELECT 1.5e300, 'infinity'::DOUBLE");
    expect(await run(checked.sql)).toEqual([[1.5e300, Number.POSITIVE_INFINITY]]);
  });

  it('lets select 9223372036854775807 + 1 fail with DuckDB’s overflow', async () => {
    const checked = await sandboxFor(database, ALICE, 'select 9223372036854775807 + 1');
    await expect(run(checked.sql)).rejects.toThrow(/Overflow in addition of INT64/);
  });
});

describe('messages', () => {
  it('give positions in characters of the SQL as written', async () => {
    for (const sql of [
      "SELECT 'é', who FROM bob.secret",
      "SELECT '😀', /* ü */ who FROM bob.secret",
      'SELECT who\nFROM\n  bob.secret',
    ]) {
      expect(await refusal(sql)).toBe(
        `table bob.secret does not exist at position ${sql.indexOf('bob.secret')}`,
      );
    }
    const syntax = "SELECT 'é' + FROM bob.secret";
    expect(await refusal(syntax)).toBe(
      `syntax error at or near "FROM" at position ${syntax.indexOf('FROM')}`,
    );
  });

  it('say how large SQL may be', async () => {
    expect(await refusal(`SELECT 1${' '.repeat(MAX_SQL_BYTES)}`)).toBe(
      `the SQL is ${MAX_SQL_BYTES + 8} bytes long; at most ${MAX_SQL_BYTES} bytes are accepted`,
    );
    const justFits = `SELECT 1${' '.repeat(MAX_SQL_BYTES - 8)}`;
    expect((await sandboxFor(database, ALICE, justFits)).sql).toBe('SELECT 1');
  });

  it('check the costliest shape measured, an AND chain as long as allowed, through every step', async () => {
    const chain = (terms: number) =>
      `SELECT count(*) FROM notes WHERE ${Array(terms).fill('n = 1').join(' AND ')}`;
    const checked = await sandboxFor(database, ALICE, chain(2_800));
    expect(await run(checked.sql)).toEqual([[1n]]);
    // As long as the SQL may be, it is refused before DuckDB's parser, whose work grows with
    // the square of the chain's length (sandbox/parse-cost.ts).
    const terms = Math.floor((MAX_SQL_BYTES - 40) / ' AND n = 1'.length);
    expect(Buffer.byteLength(chain(terms))).toBeLessThanOrEqual(MAX_SQL_BYTES);
    expect(await refusal(chain(terms))).toMatch(
      /^this SQL joins too many conditions with AND or OR in one expression: .* \(at most about 2,800 conditions in a row\); write a long OR of equalities as col IN \(…\), or split the conditions between queries at position \d+$/,
    );
  });
});
