import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { SnapshotColumn } from '../../src/executions/execution.js';
import {
  jsonArrayBytes,
  jsonRowExpression,
  jsonRowsQuery,
  resultBytesByRowsQuery,
  resultBytesQuery,
} from '../../src/executions/row-rendering.js';
import { forRandomTables } from './support/random-tables.js';

/**
 * total_result_set_bytes is summed per column (fast), or for a small result counted from its
 * rendered rows (jsonArrayBytes), and must equal the UTF-8 bytes of the rows as the pages
 * render them (one JSON object per row), for every kind of value.
 */

async function connect() {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  await connection.run("SET TimeZone = 'UTC'");
  return connection;
}

async function columnsOf(
  connection: Awaited<ReturnType<typeof connect>>,
  table: string,
): Promise<SnapshotColumn[]> {
  const reader = await connection.runAndReadAll(`DESCRIBE ${table}`);
  return reader
    .getRowObjectsJS()
    .map((row) => ({ name: String(row.column_name), type: String(row.column_type).toLowerCase() }));
}

async function bothCounts(connection: Awaited<ReturnType<typeof connect>>, table: string) {
  const columns = await columnsOf(connection, table);
  const fast = (await connection.runAndReadAll(resultBytesQuery(table, columns))).getRowsJS()[0]?.[0];
  const exact = (await connection.runAndReadAll(resultBytesByRowsQuery(table, columns))).getRowsJS()[0]?.[0];
  const rendered = (await connection.runAndReadAll(jsonRowsQuery(table, columns)))
    .getRowsJS()
    .map((row) => row[0] as string);
  const page = Buffer.byteLength(`[${rendered.join(',')}]`);
  // A small result's run counts its rows as rendered.
  expect(jsonArrayBytes(rendered)).toBe(page);
  return { fast, exact, page };
}

describe('total_result_set_bytes', () => {
  it('equals the rendered rows for every kind of value, NULLs included', async () => {
    const connection = await connect();
    await connection.run(`CREATE TABLE t AS SELECT * FROM (VALUES
      (1, 9007199254740991::BIGINT, 9007199254740993::BIGINT, 1.5::DOUBLE, 'nan'::DOUBLE, '-inf'::DOUBLE, 12.25::DECIMAL(10,2),
       123456789012345678.5::DECIMAL(38,1), TIMESTAMP '2024-01-05 10:00:00.123456', TIMESTAMPTZ '2024-01-05 10:00:00+02',
       DATE '2024-02-29', '\\xAB\\x01'::BLOB, true, 'text, with "quotes" and \\ and a tab	and é😀', NULL::VARCHAR,
       '340282366920938463463374607431768211456'::BIGNUM, [1, 2], {'k': 'v'}, 1.5::FLOAT, '12:00:00'::TIME, INTERVAL 3 DAY,
       -170141183460469231731687303715884105727::HUGEINT, 7::UTINYINT),
      (2, -9007199254740991::BIGINT, NULL, NULL, 'inf'::DOUBLE, 0::DOUBLE, NULL, 0::DECIMAL(38,1), NULL, NULL, NULL, ''::BLOB,
       NULL, '', 'x', '-5'::BIGNUM, [], {'k': NULL}, NULL, NULL, NULL, NULL, NULL)
    ) t(id, safe_big, unsafe_big, dbl, nan, inf, dec_small, dec_wide, ts, tstz, day, bin, flag, txt, maybe, huge, list,
        struct, f, tm, iv, hi, tiny)`);
    const { fast, exact, page } = await bothCounts(connection, 't');
    expect(fast).toBe(exact);
    expect(Number(fast)).toBe(page);
  });

  it('measures dates and timestamps outside years 1 to 9999, and infinities, by rendering them', async () => {
    const connection = await connect();
    await connection.run(
      'CREATE TABLE d (day DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, ns TIMESTAMP_NS, s TIMESTAMP_S)',
    );
    await connection.run(`INSERT INTO d VALUES
      ('2024-02-29', '2024-01-05 10:00:00.5', '9999-12-31 23:30:00-05', '2024-01-01 00:00:00.123456789', '0001-01-01 00:00:00'),
      ('0045-03-15 (BC)', '12345-01-01 00:00:00', '0500-06-01 00:00:00+00', NULL, NULL),
      ('infinity', '-infinity', 'infinity', NULL, '9999-12-31 23:59:59'),
      ('0001-01-01', '0999-12-31 23:59:59.999999', NULL, '1800-01-01 00:00:00', NULL)`);
    const { fast, exact, page } = await bothCounts(connection, 'd');
    expect(fast).toBe(exact);
    expect(Number(fast)).toBe(page);
  });

  it('is 2 for an empty result and counts rows of no columns', async () => {
    const connection = await connect();
    await connection.run('CREATE TABLE empty AS SELECT 1 AS a WHERE false');
    expect(await bothCounts(connection, 'empty')).toEqual({ fast: 2n, exact: 2n, page: 2 });
  });

  it('equals the rendered rows for random text, numbers and names', async () => {
    const connection = await connect();
    await forRandomTables(
      connection,
      async (table) => {
        const { fast, exact, page } = await bothCounts(connection, table);
        expect(fast).toBe(exact);
        expect(Number(fast)).toBe(page);
      },
      150,
    );
  });

  it('renders a NULL double as null (not as "-Infinity")', async () => {
    const connection = await connect();
    await connection.run('CREATE TABLE n AS SELECT NULL::DOUBLE AS x, 1 AS y');
    const reader = await connection.runAndReadAll(
      `SELECT ${jsonRowExpression(await columnsOf(connection, 'n'))} AS r FROM n`,
    );
    expect(reader.getRowsJS()).toEqual([['{"x":null,"y":1}']]);
  });
});
