import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { renderJsonRows, snapshotColumns } from '../../src/executions/json-rows.js';
import { jsonRowsQuery } from '../../src/executions/row-rendering.js';
import { forRandomTables } from './support/random-tables.js';

/**
 * A small result's rows are rendered in JavaScript (json-rows.ts, small-result.ts) and a
 * larger one's by DuckDB (row-rendering.ts): a client must not tell them apart. Both render
 * the same table here and must give the same bytes.
 */

async function connect() {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  await connection.run("SET TimeZone = 'UTC'");
  return connection;
}
type Connection = Awaited<ReturnType<typeof connect>>;

/** The table's rows by both renderers; `js` is undefined when JavaScript declines them. */
async function bothRenderings(connection: Connection, table: string) {
  const result = await connection.run(`SELECT * FROM ${table}`);
  const names = result.columnNames();
  const types = result.columnTypes();
  const columns = names.map((name, i) => ({ name, type: types[i] as (typeof types)[number] }));
  const chunks = Array.from({ length: result.chunkCount }, (_, i) => result.getChunk(i));
  const described = (await connection.runAndReadAll(`DESCRIBE ${table}`))
    .getRows()
    .map((row) => ({ name: String(row[0]), type: String(row[1]).toLowerCase() }));
  const sql = (await connection.runAndReadAll(jsonRowsQuery(table, described)))
    .getRows()
    .map((row) => row[0]);
  return { js: renderJsonRows(columns, chunks), sql, columns: snapshotColumns(columns), described };
}

describe('rows rendered in JavaScript', () => {
  it('are the bytes DuckDB renders, for every type rendered and its edge values', async () => {
    const connection = await connect();
    const controls = Array.from({ length: 32 }, (_, i) => `chr(${i})`).join(' || ');
    await connection.run(`CREATE TABLE t AS SELECT * FROM (VALUES
      (true, (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, -9007199254740991::BIGINT, 255::UTINYINT,
       65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT, (-170141183460469231731687303715884105728)::HUGEINT,
       340282366920938463463374607431768211455::UHUGEINT, 0.1::DOUBLE, 12.25::DECIMAL(4,2), -0.05::DECIMAL(9,3),
       123456789.12345::DECIMAL(15,5), 1234567890123456.78::DECIMAL(18,2), -12345678901234567890.1234567890::DECIMAL(38,10),
       'plain', (-(2::BIGNUM ^ 200::BIGNUM))::BIGNUM, DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00', TIMESTAMPTZ '1969-12-31 23:59:59.9995+00', '\\x00\\xFF\\x7F'::BLOB),
      (false, 127::TINYINT, 32767::SMALLINT, 2147483647::INTEGER, 9007199254740992::BIGINT, 0::UTINYINT,
       0::USMALLINT, 0::UINTEGER, 9007199254740991::UBIGINT, 9007199254740991::HUGEINT,
       9007199254740992::UHUGEINT, -0.0::DOUBLE, 0::DECIMAL(4,2), 0.001::DECIMAL(9,3),
       -0.00001::DECIMAL(15,5), 0::DECIMAL(18,2), 0.0000000001::DECIMAL(38,10),
       'quote " backslash \\ ' || ${controls} || ' é 漢 😀 ' || chr(127) || chr(8232), 9007199254740991::BIGNUM, DATE '9999-12-31',
       TIMESTAMP '9999-12-31 23:59:59.999999', TIMESTAMPTZ '2024-03-10 02:30:00.123456-07', ''::BLOB),
      (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
    ) v("b", "ti", "si", "i", "bi", "uti", "usi", "ui", "ubi", "hi", "uhi", "d", "dec4", "dec9", "dec15", "dec18", "dec38",
        "text ""quoted"" \\ key", "num", "day", "at", "at_tz", "bytes")`);
    const { js, sql, columns, described } = await bothRenderings(connection, 't');
    expect(js).toBeDefined();
    expect(js).toEqual(sql);
    expect(columns).toEqual(described);
  });

  it('are the bytes DuckDB renders for doubles of every magnitude', async () => {
    const connection = await connect();
    const values: string[] = ['nan', 'inf', '-inf', '5e-324', '1.7976931348623157e308', '1e21', '1e-7'];
    for (let exponent = -320; exponent <= 308; exponent += 7)
      for (const mantissa of ['1', '2.5', '3.3333333333333335', '-9.999999999999998', '7.1'])
        values.push(`${mantissa}e${exponent}`);
    for (let n = -20; n <= 20; n++) values.push(`${n}`, `${n}.5`, `${2 ** 53 + n}`, `${n}e15`, `${n}e16`);
    await connection.run(
      `CREATE TABLE d AS SELECT CAST(v AS DOUBLE) AS d FROM (VALUES ${values.map((v) => `('${v}')`).join(', ')}) t(v)`,
    );
    const { js, sql } = await bothRenderings(connection, 'd');
    expect(js).toEqual(sql);
  });

  it('are the bytes DuckDB renders for random rows and column names', async () => {
    const connection = await connect();
    await forRandomTables(
      connection,
      async (table) => {
        const { js, sql } = await bothRenderings(connection, table);
        expect(js).toEqual(sql);
      },
      150,
    );
  });

  it('declines types and values it does not render, for DuckDB to render them', async () => {
    const connection = await connect();
    for (const [table, select] of [
      ['f', 'SELECT 1.5::FLOAT AS f'],
      ['j', `SELECT '{"a": 1}'::JSON AS j`],
      ['l', 'SELECT [1, 2] AS l'],
      ['iv', "SELECT INTERVAL '1 day' AS iv"],
      ['ts_s', "SELECT TIMESTAMP_S '2024-01-01 00:00:00' AS t"],
      ['far', "SELECT DATE '10000-01-01' AS day"],
      ['inf', "SELECT 'infinity'::TIMESTAMP AS at"],
      ['bc', "SELECT TIMESTAMP '0001-01-01 00:00:00' - INTERVAL 1 second AS at"],
    ]) {
      await connection.run(`CREATE TABLE ${table} AS ${select}`);
      expect((await bothRenderings(connection, table as string)).js).toBeUndefined();
    }
  });
});
