import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectPg, pgError, startPgService } from '../support/pg-wire.js';
import { KEYS, type TestService, uploadBody } from '../support/service.js';

/**
 * The catalog clients inspect, served per caller: what each account may see, and not a name
 * more. Queries shaped as the clients write them (psql's and SQLAlchemy's were taken from a
 * PostgreSQL 15 server's statement log while those clients ran; pgjdbc's, which DBeaver and
 * Metabase use, follow its DatabaseMetaData).
 */

let service: TestService & { pgPort: number };
let alice: pg.Client;
let bob: pg.Client;
let admin: pg.Client;

async function upload(key: string, fields: Record<string, unknown>): Promise<void> {
  const response = await service.request('/v1/table/upload/csv', { ...uploadBody(fields), key });
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  service = await startPgService();
  await upload(KEYS.alice, {
    table_name: 'prices',
    description: 'daily prices',
    data: 'day,token,price\n2024-01-01,stETH,2301.5\n',
  });
  await upload(KEYS.bob, { table_name: 'hidden', is_private: true, data: 'secret_column\n1\n' });
  await upload(KEYS.bob, { table_name: 'shared', data: 'n,label\n1,a\n' });
  alice = await connectPg(service.pgPort, KEYS.alice);
  bob = await connectPg(service.pgPort, KEYS.bob);
  admin = await connectPg(service.pgPort, KEYS.admin);
});

const values = async (client: pg.Client, sql: string, params: unknown[] = []) =>
  (await client.query({ text: sql, values: params, rowMode: 'array' })).rows.map((row) => row.join('|'));

describe('what each caller sees', () => {
  it("lists its own tables and other accounts' public ones, one schema per namespace", async () => {
    const sql = `SELECT n.nspname, c.relname FROM pg_catalog.pg_class c
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' ORDER BY 1, 2`;
    expect(await values(alice, sql)).toEqual(['alice|dataset_prices', 'bob|dataset_shared']);
    expect(await values(bob, sql)).toEqual([
      'alice|dataset_prices',
      'bob|dataset_hidden',
      'bob|dataset_shared',
    ]);
    expect(await values(admin, sql)).toEqual([
      'alice|dataset_prices',
      'bob|dataset_hidden',
      'bob|dataset_shared',
    ]);
    expect(
      await values(alice, "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' ORDER BY 1"),
    ).toEqual(['alice', 'bob', 'information_schema']);
  });

  it("never shows another account's private table, not even its name, by any catalog path", async () => {
    const probes = [
      'SELECT relname FROM pg_class',
      'SELECT tablename FROM pg_tables',
      'SELECT attname FROM pg_attribute',
      'SELECT table_name FROM information_schema.tables',
      'SELECT column_name FROM information_schema.columns',
      "SELECT to_regclass('bob.dataset_hidden')",
      "SELECT 'bob.dataset_hidden'::regclass",
      "SELECT count(*) FROM pg_class WHERE relname LIKE '%hidden%'",
      "SELECT string_agg(relname, ',') FROM pg_catalog.pg_class",
    ];
    for (const sql of probes) {
      const text = JSON.stringify((await alice.query({ text: sql, rowMode: 'array' })).rows);
      expect(text).not.toContain('hidden');
      expect(text).not.toContain('secret_column');
    }
    expect(await values(alice, "SELECT count(*) FROM pg_class WHERE relname LIKE '%hidden%'")).toEqual(['0']);
  });

  it('drops a table from the catalog as soon as it turns private', async () => {
    await upload(KEYS.bob, { table_name: 'soon_private', data: 'x\n1\n' });
    const sql = "SELECT relname FROM pg_class WHERE relname = 'dataset_soon_private'";
    expect(await values(alice, sql)).toEqual(['dataset_soon_private']);
    await upload(KEYS.bob, { table_name: 'soon_private', is_private: true, data: 'x\n1\n' });
    expect(await values(alice, sql)).toEqual([]);
  });

  it('answers version(), current_schema() and current_database() for the session', async () => {
    const { rows } = await alice.query(
      'SELECT version(), current_schema(), current_database(), current_user',
    );
    expect(rows[0].version).toMatch(/^PostgreSQL 15\.0 \(restaking-data-service [^)]+\)/);
    expect(rows[0]).toMatchObject({
      current_schema: 'alice',
      current_database: 'dune',
      current_user: 'alice',
    });
  });

  it('refuses a query over both the catalog and tables with 0A000', async () => {
    const error = await pgError(alice.query('SELECT * FROM pg_class, dataset_prices'));
    expect(error.code).toBe('0A000');
  });

  it('refuses a catalog relation PostgreSQL does not have with 42P01', async () => {
    const error = await pgError(alice.query('SELECT * FROM pg_catalog.duckdb_tables'));
    expect(error.code).toBe('42P01');
  });

  it("never reaches DuckDB's own catalog or files from a catalog query", async () => {
    for (const sql of [
      "SELECT * FROM pg_class, read_csv('/etc/passwd')",
      'SELECT * FROM pg_class, duckdb_tables()',
      "SELECT relname FROM pg_class UNION ALL SELECT table_name FROM query_table('main.x')",
    ]) {
      const error = await pgError(alice.query(sql));
      expect(['0A000', '42501']).toContain(error.code);
    }
  });
});

describe('client queries', () => {
  it("psql \\d: a table's columns with format_type", async () => {
    const [table] = (
      await alice.query(`SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c
        LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname OPERATOR(pg_catalog.~) '^(dataset_prices)$' COLLATE pg_catalog.default
          AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3`)
    ).rows;
    expect(table).toMatchObject({ nspname: 'alice', relname: 'dataset_prices' });
    const columns = await values(
      alice,
      `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull
       FROM pg_catalog.pg_attribute a WHERE a.attrelid = '${table.oid}' AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY a.attnum`,
    );
    expect(columns).toEqual(['day|date|false', 'token|text|false', 'price|double precision|false']);
  });

  it('pgjdbc getTables, with its LIKE parameters and regclass', async () => {
    const rows = await values(
      alice,
      `SELECT current_database() AS "TABLE_CAT", n.nspname AS "TABLE_SCHEM", c.relname AS "TABLE_NAME",
        CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema' WHEN true THEN 'SYSTEM TABLE'
          WHEN false THEN CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'v' THEN 'VIEW' ELSE NULL END ELSE NULL END AS "TABLE_TYPE",
        d.description AS "REMARKS"
       FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
       LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0 AND d.classoid = 'pg_class'::regclass)
       WHERE c.relnamespace = n.oid AND n.nspname LIKE $1 AND c.relname LIKE $2
       ORDER BY "TABLE_TYPE", "TABLE_SCHEM", "TABLE_NAME"`,
      ['%', 'dataset%'],
    );
    expect(rows).toEqual(['dune|alice|dataset_prices|TABLE|daily prices', 'dune|bob|dataset_shared|TABLE|']);
  });

  it('pgjdbc getSchemas, with current_schemas()', async () => {
    const rows = await values(
      alice,
      `SELECT nspname AS "TABLE_SCHEM", current_database() AS "TABLE_CATALOG" FROM pg_catalog.pg_namespace
       WHERE nspname <> 'pg_toast' AND (nspname !~ '^pg_temp_' OR nspname = (pg_catalog.current_schemas(true))[1])
       ORDER BY "TABLE_SCHEM"`,
    );
    expect(rows).toEqual(['alice|dune', 'bob|dune', 'information_schema|dune', 'pg_catalog|dune']);
  });

  it('information_schema.columns, as Grafana and Metabase read it', async () => {
    const rows = await values(
      alice,
      `SELECT table_schema, table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
      ['alice'],
    );
    expect(rows).toEqual([
      'alice|dataset_prices|day|date|date|YES',
      'alice|dataset_prices|token|text|text|YES',
      'alice|dataset_prices|price|double precision|float8|YES',
    ]);
  });

  it("SQLAlchemy's connect-time queries", async () => {
    expect(await values(alice, 'select current_schema()')).toEqual(['alice']);
    expect(await values(alice, 'show transaction isolation level')).toEqual(['read committed']);
    expect(await values(alice, 'show standard_conforming_strings')).toEqual(['on']);
    const hstore = await values(
      alice,
      "SELECT t.oid, typarray FROM pg_type t JOIN pg_namespace ns ON typnamespace = ns.oid WHERE typname = 'hstore'",
    );
    expect(hstore).toEqual([]);
  });
});

describe('what the wire keeps between statements', () => {
  it('never answers one account with what the sandbox resolved for another', async () => {
    for (const sql of ['DESCRIBE dataset_prices', 'SUMMARIZE dataset_prices', 'SHOW TABLES']) {
      await alice.query({ text: sql, rowMode: 'array' }).catch(() => undefined);
      // Bob has no table of that name: whatever alice's statement resolved to, his is refused.
      const second = await bob.query({ text: sql, rowMode: 'array' }).catch((error: Error) => error);
      if (sql !== 'SHOW TABLES') expect(second).toBeInstanceOf(Error);
      expect(JSON.stringify(second)).not.toContain('dataset_prices');
    }
    const constant = await alice.query('SELECT 6 * 7 AS answer');
    const again = await bob.query('SELECT 6 * 7 AS answer');
    expect(again.rows).toEqual(constant.rows);
    expect(again.rows).toEqual([{ answer: 42 }]);
  });

  it('keeps no answer of a function that changes: random() and now() run every time', async () => {
    const a = await alice.query('SELECT random() AS r');
    const b = await alice.query('SELECT random() AS r');
    expect(a.rows[0].r).not.toBe(b.rows[0].r);
  });
});
