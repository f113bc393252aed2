import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { executeSql, post, rowsOf } from './support/queries.js';

/**
 * Function calls qualified by a schema or catalog in users' SQL, through `/v1/sql/execute` on a
 * real service. DuckDB's parser writes schema `main` itself into the functions of its own
 * syntax (`[1, 2]` is `main.list_value`), and DuckDB resolves `main.f` as it resolves `f`
 * (docs/library-notes.md), so `main.` is accepted for exactly the functions callable bare, and
 * refused with the same words for the others; every other schema or catalog is refused.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service.stop();
});

async function refusal(sql: string): Promise<string> {
  const { status, body } = await service.json<{ error?: string }>('/v1/sql/execute', post({ sql }));
  expect(status, JSON.stringify(body)).toBe(400);
  return body.error as string;
}

describe('a function qualified by schema main', () => {
  it('runs as the unqualified call does, in any spelling of main', async () => {
    const sql = `SELECT main.abs(-2) AS a, MAIN.lower('X') AS b, "main".upper('y') AS c, main.list_value(1, 2) AS d`;
    expect(await rowsOf(service, await executeSql(service, sql))).toEqual([
      { a: 2, b: 'x', c: 'Y', d: [1, 2] },
    ]);
  });

  it('runs as a table function', async () => {
    const sql = 'SELECT range AS n FROM main.range(3)';
    expect(await rowsOf(service, await executeSql(service, sql))).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it.each([
    [
      "SELECT main.current_setting('threads')",
      'function current_setting is not available in queries: it reads the database settings at position 7',
    ],
    [
      "SELECT main.nextval('s')",
      'function nextval is not available in queries: it advances a sequence at position 7',
    ],
    [
      "SELECT main.pg_get_viewdef('x')",
      'function pg_get_viewdef does not exist or is not available in queries at position 7',
    ],
    [
      "SELECT * FROM main.read_csv('/etc/passwd')",
      'table function read_csv is not available in queries; the ones that are: range, generate_series, unnest, repeat, repeat_row, json_each, json_tree at position 14',
    ],
  ])('is refused when the bare name is: %s', async (sql, message) => {
    expect(await refusal(sql)).toBe(message);
  });
});

describe('a function qualified by another schema or a catalog', () => {
  it.each([
    ['SELECT pg_catalog.abs(-1)', 'pg_catalog.abs'],
    ['SELECT information_schema.abs(-1)', 'information_schema.abs'],
    ['SELECT alice.abs(-1)', 'alice.abs'],
    ['SELECT _service.abs(-1)', '_service.abs'],
    ['SELECT system.main.abs(-1)', 'system.main.abs'],
    ['SELECT temp.main.abs(-1)', 'temp.main.abs'],
    ['SELECT dune.main.abs(-1)', 'dune.main.abs'],
    ['SELECT * FROM system.main.range(3)', 'system.main.range'],
    ['SELECT * FROM pg_catalog.range(3)', 'pg_catalog.range'],
  ])('is refused: %s', async (sql, shown) => {
    expect(await refusal(sql)).toMatch(
      new RegExp(
        `^function ${shown.replaceAll('.', '\\.')} is not available in queries: call functions without a schema or catalog at position \\d+$`,
      ),
    );
  });
});

/**
 * Why accepting `main.` is no wider than accepting the bare name: DuckDB looks both up the same
 * way, so whatever could shadow a built-in for one would shadow it for the other. Users' SQL can
 * create nothing, so in the service both reach DuckDB's built-ins; only `system.main.` would
 * always reach them, and the parser never writes it.
 */
describe('DuckDB 1.5.6 resolves main.f as it resolves f', () => {
  it('a macro of the database, or a temporary one, shadows a built-in for both spellings', async () => {
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    const value = async (sql: string) => (await connection.runAndReadAll(sql)).getRows()[0]?.[0];
    try {
      await connection.run('CREATE MACRO main.abs(x) AS 42');
      await connection.run("CREATE TEMP MACRO upper(x) AS 'temporary'");
      expect(await value('SELECT abs(-1)')).toBe(42);
      expect(await value('SELECT main.abs(-1)')).toBe(42);
      expect(await value('SELECT system.main.abs(-1)')).toBe(1);
      expect(await value("SELECT upper('a')")).toBe('temporary');
      expect(await value("SELECT main.upper('a')")).toBe('temporary');
    } finally {
      connection.closeSync();
    }
  });
});
