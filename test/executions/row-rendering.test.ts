import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { SnapshotColumn } from '../../src/executions/execution.js';
import { csvRowExpression, jsonRowExpression, jsonValue } from '../../src/executions/row-rendering.js';
import { quoteIdentifier, quoteLiteral } from '../../src/storage/sql.js';
import { forRandomTables } from './support/random-tables.js';

/**
 * Rows are rendered by one flat `concat` per row (issue 17: no JSON document built per row,
 * no regular expression per field). They must be exactly the rows the renderers before them
 * wrote, kept here as the reference: `json_object` of each value's JSON, and CSV fields
 * quoted by `regexp_matches(text, '[",\r\n]')` on every column.
 */

function jsonRowBefore(columns: readonly SnapshotColumn[]): string {
  if (columns.length === 0) return `'{}'`;
  const pairs = columns.map((c) => `${quoteLiteral(c.name)}, ${jsonValue(c)}`);
  return `CAST(json_object(${pairs.join(', ')}) AS VARCHAR)`;
}

function textBefore(column: SnapshotColumn): string {
  const x = quoteIdentifier(column.name);
  const t = column.type.toLowerCase();
  if (t === 'double' || t === 'float')
    return `CASE WHEN isfinite(${x}) THEN CAST(${x} AS VARCHAR) WHEN isnan(${x}) THEN 'NaN' WHEN ${x} > 0 THEN 'Infinity' ELSE '-Infinity' END`;
  if (t.startsWith('timestamp')) return `strftime(CAST(${x} AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%g UTC')`;
  if (t === 'blob') return `'0x' || lower(hex(${x}))`;
  const plain =
    /^(tinyint|smallint|integer|utinyint|usmallint|uinteger|bigint|hugeint|ubigint|uhugeint|bignum|date|varchar|boolean|uuid|time|interval)$/.test(
      t,
    ) || /^decimal\(/.test(t);
  return plain ? `CAST(${x} AS VARCHAR)` : `CAST(to_json(${x}) AS VARCHAR)`;
}

function csvRowBefore(columns: readonly SnapshotColumn[]): string {
  if (columns.length === 0) return `''`;
  return columns
    .map((c) => {
      const t = textBefore(c);
      return `CASE WHEN ${quoteIdentifier(c.name)} IS NULL THEN '' WHEN ${t} = '' OR regexp_matches(${t}, '[",\r\n]') THEN '"' || replace(${t}, '"', '""') || '"' ELSE ${t} END`;
    })
    .join(` || ',' || `);
}

async function connect() {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  await connection.run("SET TimeZone = 'UTC'");
  return connection;
}
type Connection = Awaited<ReturnType<typeof connect>>;

async function columnsOf(connection: Connection, table: string): Promise<SnapshotColumn[]> {
  const reader = await connection.runAndReadAll(`DESCRIBE ${table}`);
  return reader
    .getRowObjectsJS()
    .map((row) => ({ name: String(row.column_name), type: String(row.column_type).toLowerCase() }));
}

/** Every row of `table` by the new and the old renderer, JSON and CSV. */
async function bothRenderings(connection: Connection, table: string) {
  const columns = await columnsOf(connection, table);
  const rows = async (expression: string) =>
    (await connection.runAndReadAll(`SELECT ${expression} AS r FROM ${table} ORDER BY rowid`))
      .getRowsJS()
      .map((row) => row[0]);
  return {
    json: await rows(jsonRowExpression(columns)),
    jsonBefore: await rows(jsonRowBefore(columns)),
    csv: await rows(csvRowExpression(columns)),
    csvBefore: await rows(csvRowBefore(columns)),
  };
}

describe('row rendering', () => {
  it('writes the same JSON and CSV rows as before for every kind of value, NULLs included', async () => {
    const connection = await connect();
    await connection.run(`CREATE TABLE t AS SELECT * FROM (VALUES
      (1, 9007199254740991::BIGINT, 9007199254740993::BIGINT, 1.5::DOUBLE, 'nan'::DOUBLE, '-inf'::DOUBLE, 12.25::DECIMAL(10,2),
       123456789012345678.5::DECIMAL(38,1), TIMESTAMP '2024-01-05 10:00:00.123456', TIMESTAMPTZ '2024-01-05 10:00:00+02',
       DATE '2024-02-29', '\\xAB\\x01'::BLOB, true, 'text, with "quotes" and \\ and a tab	and é😀', NULL::VARCHAR,
       '340282366920938463463374607431768211456'::BIGNUM, [1, 2], {'k': 'v'}, 1.5::FLOAT, '12:00:00'::TIME, INTERVAL 3 DAY,
       -170141183460469231731687303715884105727::HUGEINT, 7::UTINYINT, 'a' || chr(13) || 'b', '#x'),
      (2, -9007199254740991::BIGINT, NULL, NULL, 'inf'::DOUBLE, 0::DOUBLE, NULL, 0::DECIMAL(38,1), NULL, NULL, NULL, ''::BLOB,
       NULL, '', 'x', '-5'::BIGNUM, [], {'k': NULL}, NULL, NULL, NULL, NULL, NULL, '', NULL),
      (3, 0, -9223372036854775807::BIGINT, 1e300::DOUBLE, -0.0::DOUBLE, 5e-324::DOUBLE, -0.5::DECIMAL(10,2), NULL,
       TIMESTAMP '0001-01-01 00:00:00', NULL, DATE '0045-03-15 (BC)', NULL, false, '"', ',', NULL, NULL, NULL, 3.4e38::FLOAT,
       NULL, NULL, NULL, NULL, 'c' || chr(10), '""')
    ) t(id, safe_big, unsafe_big, dbl, nan, inf, dec_small, dec_wide, ts, tstz, day, bin, flag, txt, maybe, huge, list,
        struct, f, tm, iv, hi, tiny, breaks, hash)`);
    const { json, jsonBefore, csv, csvBefore } = await bothRenderings(connection, 't');
    expect(json).toEqual(jsonBefore);
    expect(csv).toEqual(csvBefore);
    expect(JSON.parse(json[1] as string)).toMatchObject({ unsafe_big: null, nan: 'Infinity', txt: '' });
  });

  it('writes the same rows as before for random text, numbers and names', async () => {
    const connection = await connect();
    await forRandomTables(
      connection,
      async (table) => {
        const { json, jsonBefore, csv, csvBefore } = await bothRenderings(connection, table);
        expect(json).toEqual(jsonBefore);
        expect(csv).toEqual(csvBefore);
      },
      100,
    );
  });

  it('renders a result of 1,200 columns (one flat call, not 2,400 nested operators)', async () => {
    const connection = await connect();
    const names = Array.from({ length: 1200 }, (_, i) => `c${i}`);
    await connection.run(
      `CREATE TABLE wide AS SELECT ${names.map((c, i) => `${i % 2 === 0 ? i : `'v,${i}'`} AS ${c}`).join(', ')}`,
    );
    const columns = await columnsOf(connection, 'wide');
    const [[json, csv]] = (
      await connection.runAndReadAll(
        `SELECT ${jsonRowExpression(columns)}, ${csvRowExpression(columns)} FROM wide`,
      )
    ).getRowsJS() as [[string, string]];
    const row = JSON.parse(json) as Record<string, unknown>;
    expect(Object.keys(row)).toEqual(names);
    expect(row.c1198).toBe(1198);
    expect(row.c1199).toBe('v,1199');
    expect(csv.startsWith('0,"v,1",2,"v,3",')).toBe(true);
    expect(csv.endsWith(',1198,"v,1199"')).toBe(true);
  });
});
