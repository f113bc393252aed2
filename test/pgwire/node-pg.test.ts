import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectPg, pgError, startPgService } from '../support/pg-wire.js';
import { KEYS, type TestService, uploadBody } from '../support/service.js';

/**
 * npm `pg` (node-postgres) against the Postgres wire protocol: it sends a query without
 * values with the simple protocol and one with values with the extended protocol (Parse,
 * Bind, Describe, Execute, Sync), values as text.
 */

let service: TestService & { pgPort: number };
let client: pg.Client;

/** Values as the server wrote them, unparsed. */
const raw = { getTypeParser: () => (value: string) => value };

beforeAll(async () => {
  service = await startPgService();
  const upload = await service.request(
    '/v1/table/upload/csv',
    uploadBody({
      table_name: 'prices',
      data: 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n2024-01-03,stETH,\n',
    }),
  );
  expect(upload.status).toBe(200);
  client = await connectPg(service.pgPort);
});

describe('connecting', () => {
  it('takes an API key as the password, whatever the user name', async () => {
    const other = await connectPg(service.pgPort, KEYS.bob, { user: 'anything at all' });
    const { rows } = await other.query('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
    await other.end();
  });

  it('refuses a wrong key with 28P01', async () => {
    const wrong = new pg.Client({
      host: '127.0.0.1',
      port: service.pgPort,
      user: 'alice',
      password: 'not-a-key',
    });
    const error = await pgError(wrong.connect());
    expect(error.code).toBe('28P01');
    expect(error.message).toBe('password authentication failed for user "alice"');
  });

  it('reports the session parameters clients read at start', async () => {
    const { rows } = await client.query('SHOW server_version');
    expect(rows).toEqual([{ server_version: '15.0' }]);
    const encoding = await client.query('SHOW client_encoding');
    expect(encoding.rows).toEqual([{ client_encoding: 'UTF8' }]);
  });
});

describe('simple queries', () => {
  it("reads the caller's tables with their types", async () => {
    const result = await client.query('SELECT day, token, price FROM dataset_prices ORDER BY day');
    expect(result.fields.map((f) => [f.name, f.dataTypeID])).toEqual([
      ['day', 1082],
      ['token', 25],
      ['price', 701],
    ]);
    const text = await client.query({
      text: 'SELECT day, token, price FROM dataset_prices ORDER BY day',
      types: raw,
    });
    expect(text.rows).toEqual([
      { day: '2024-01-01', token: 'stETH', price: '2301.5' },
      { day: '2024-01-02', token: 'rETH', price: '2512.25' },
      { day: '2024-01-03', token: 'stETH', price: null },
    ]);
  });

  it('runs several statements in one query string, each with its result', async () => {
    const results = (await client.query('SELECT 1 AS a; SELECT 2 AS b')) as unknown as pg.QueryResult[];
    expect(results.map((r) => r.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  });

  it('stops a query string at its first failing statement', async () => {
    const error = await pgError(client.query('SELECT 1; SELECT * FROM nope; SELECT 3'));
    expect(error.code).toBe('42P01');
    const { rows } = await client.query('SELECT 4 AS after');
    expect(rows).toEqual([{ after: 4 }]);
  });

  it('answers an empty query string', async () => {
    const result = await client.query('  -- nothing\n ; ');
    expect(result.rows).toEqual([]);
  });
});

describe('types', () => {
  it('writes each type as PostgreSQL does, with its OID', async () => {
    const result = await client.query({
      text: `SELECT true AS b, 42::SMALLINT AS i2, 42 AS i4, 9007199254740993::BIGINT AS i8,
        170141183460469231731687303715884105727::HUGEINT AS huge, 1.5::REAL AS f4, 0.1::DOUBLE AS f8,
        1e-5::DOUBLE AS small, 12345.678::DECIMAL(10,3) AS num, 'it''s'::VARCHAR AS t,
        DATE '2024-02-29' AS d, TIME '12:34:56.5' AS tm, TIMESTAMP '2024-01-01 12:00:00.123456' AS ts,
        TIMESTAMPTZ '2024-01-01 12:00:00+02' AS tz, INTERVAL '1 year 2 months 3 days 04:05:06' AS iv,
        '\\xDE\\xAD'::BLOB AS by, '550e8400-e29b-41d4-a716-446655440000'::UUID AS u,
        [1, NULL, 3] AS list, ['a b', '', 'NULL'] AS texts, NULL::INTEGER AS nothing,
        'infinity'::DOUBLE AS inf, 'NaN'::DOUBLE AS nan, -0.0::DOUBLE AS negzero,
        '{"a": [1, 2]}'::JSON AS j, 18446744073709551615::UBIGINT AS ubig`,
      types: raw,
    });
    expect(result.rows).toEqual([
      {
        b: 't',
        i2: '42',
        i4: '42',
        i8: '9007199254740993',
        huge: '170141183460469231731687303715884105727',
        f4: '1.5',
        f8: '0.1',
        small: '1e-05',
        num: '12345.678',
        t: "it's",
        d: '2024-02-29',
        tm: '12:34:56.5',
        ts: '2024-01-01 12:00:00.123456',
        tz: '2024-01-01 10:00:00+00',
        iv: '1 year 2 mons 3 days 04:05:06',
        by: '\\xdead',
        u: '550e8400-e29b-41d4-a716-446655440000',
        list: '{1,NULL,3}',
        texts: '{"a b","","NULL"}',
        nothing: null,
        inf: 'Infinity',
        nan: 'NaN',
        negzero: '-0',
        j: '{"a": [1, 2]}',
        ubig: '18446744073709551615',
      },
    ]);
    expect(result.fields.map((f) => f.dataTypeID)).toEqual([
      16, 21, 23, 20, 1700, 700, 701, 701, 1700, 25, 1082, 1083, 1114, 1184, 1186, 17, 2950, 1007, 1009, 23,
      701, 701, 701, 114, 1700,
    ]);
  });

  it('writes the same text when DuckDB writes it and when JavaScript does (a text whose last result was small)', async () => {
    // The first run of a text has DuckDB write its numbers', dates' and timestamps' text; a
    // next run of a text whose last result was small has JavaScript write it
    // (statement-cache.ts); a result that turns out large is written by JavaScript once.
    const text = `SELECT (i % 100)::TINYINT AS i1, (i * 1000)::INTEGER AS i4, i + 9007199254740993 AS i8, i / 10 AS f8,
        (i * 1e300)::DOUBLE AS huge, (1e-7 / (i + 1))::DOUBLE AS tiny, (i - 0.5)::REAL AS f4,
        DATE '2024-02-29' + i::INTEGER AS d, TIMESTAMP '1999-12-31 23:59:59.999999' + to_microseconds(i) AS ts,
        TIMESTAMPTZ '2024-01-01 12:00:00+02' + to_seconds(i) AS tz, CAST(i AS UBIGINT) AS ub,
        CASE WHEN i % 3 = 0 THEN NULL ELSE i / 7 END AS maybe
      FROM range(3000) r(i) WHERE i < $1 ORDER BY i`;
    const run = async (rows: number) =>
      (await client.query({ text, values: [rows], types: raw, rowMode: 'array' })).rows;
    const first = await run(4);
    expect(first[1]).toEqual([
      '1',
      '1000',
      '9007199254740994',
      '0.1',
      '1e+300',
      '5e-08',
      '0.5',
      '2024-03-01',
      '2000-01-01 00:00:00',
      '2024-01-01 10:00:01+00',
      '1',
      '0.14285714285714285',
    ]);
    expect(first[3]?.[11]).toBeNull();
    expect(await run(4)).toEqual(first);
    expect(await run(4)).toEqual(first);
    const large = await run(3000);
    expect(large.slice(0, 4)).toEqual(first);
    const again = await run(3000);
    expect(again).toEqual(large);
    expect(large[2999]?.slice(0, 4)).toEqual(['99', '2999000', '9007199254743992', '299.9']);
  });

  it('keeps int256 and uint256 columns digit for digit, as numeric', async () => {
    const created = await service.json('/v1/table/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        namespace: 'alice',
        table_name: 'wide',
        schema: [
          { name: 'u', type: 'uint256' },
          { name: 's', type: 'int256' },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const max = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
    const min = '-57896044618658097711785492504343953926634992332820282019728792003956564819968';
    const inserted = await service.request('/v1/table/alice/wide/insert', {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `u,s\n${max},${min}\n`,
    });
    expect(inserted.status).toBe(200);
    const result = await client.query({ text: 'SELECT u, s FROM wide', types: raw });
    expect(result.rows).toEqual([{ u: max, s: min }]);
    expect(result.fields.map((f) => f.dataTypeID)).toEqual([1700, 1700]);
  });
});

describe('the extended protocol', () => {
  it('binds parameters as values, never into the SQL', async () => {
    const result = await client.query('SELECT token FROM dataset_prices WHERE token = $1', [
      "stETH' OR '1'='1",
    ]);
    expect(result.rows).toEqual([]);
    const found = await client.query('SELECT count(*) AS n FROM dataset_prices WHERE token = $1', ['stETH']);
    expect(found.rows).toEqual([{ n: '2' }]);
  });

  it('takes parameters of every type', async () => {
    const result = await client.query({
      text: `SELECT $1::INTEGER + 1 AS i, $2::BIGINT AS big, $3::DOUBLE * 2 AS f, $4::DECIMAL(38,10) AS num,
        $5::VARCHAR AS t, $6::BOOLEAN AS b, $7::DATE + 1 AS d, $8::TIMESTAMP AS ts, $9::TIMESTAMPTZ AS tz,
        $10::BLOB AS by, $11::JSON AS j, $12::UUID AS u, $13::INTERVAL AS iv, $14::INTEGER IS NULL AS n,
        $15::HUGEINT AS huge`,
      values: [
        41,
        '9223372036854775807',
        1.25,
        '12345678901234567890.0123456789',
        'Zoë "quoted" \\ back',
        true,
        '2024-02-28',
        '2024-01-01 12:00:00.5',
        new Date('2024-01-01T12:00:00.000Z'),
        Buffer.from([0, 1, 254, 255]),
        { a: [1, 2] },
        '550e8400-e29b-41d4-a716-446655440000',
        '1 day 02:00:00',
        null,
        '-170141183460469231731687303715884105728',
      ],
      types: raw,
    });
    expect(result.rows).toEqual([
      {
        i: '42',
        big: '9223372036854775807',
        f: '2.5',
        num: '12345678901234567890.0123456789',
        t: 'Zoë "quoted" \\ back',
        b: 't',
        d: '2024-02-29',
        ts: '2024-01-01 12:00:00.5',
        tz: '2024-01-01 12:00:00+00',
        by: '\\x0001feff',
        j: '{"a":[1,2]}',
        u: '550e8400-e29b-41d4-a716-446655440000',
        iv: '1 day 02:00:00',
        n: 't',
        huge: '-170141183460469231731687303715884105728',
      },
    ]);
  });

  it('refuses a value that does not fit its parameter with 22P02', async () => {
    const error = await pgError(client.query('SELECT $1::INTEGER AS i', ['twelve']));
    expect(error.code).toBe('22P02');
  });

  it('reuses a named prepared statement', async () => {
    const first = await client.query({
      name: 'by-token',
      text: 'SELECT price FROM dataset_prices WHERE token = $1 ORDER BY day',
      values: ['rETH'],
      types: raw,
    });
    const second = await client.query({
      name: 'by-token',
      text: 'SELECT price FROM dataset_prices WHERE token = $1 ORDER BY day',
      values: ['stETH'],
      types: raw,
    });
    expect(first.rows).toEqual([{ price: '2512.25' }]);
    expect(second.rows).toEqual([{ price: '2301.5' }, { price: null }]);
  });

  it('refuses several statements in one prepared statement', async () => {
    const error = await pgError(client.query('SELECT $1::INTEGER; SELECT 2', [1]));
    expect(error.code).toBe('42601');
  });
});

describe('errors carry their SQLSTATE and the session goes on', () => {
  it.each([
    ['SELEC 1', '42601'],
    ['SELECT * FROM nope', '42P01'],
    ['SELECT * FROM bob.secret_missing', '42P01'],
    ['DROP TABLE dataset_prices', '42501'],
    ["SELECT * FROM read_csv('/etc/passwd')", '42501'],
    ["SELECT 'abc'::INTEGER", '22P02'],
    ['SELECT 9223372036854775807::BIGINT + 1', '22003'],
    ['SELECT * FROM information_schema.tables WHERE 1 = 0 UNION ALL SELECT * FROM dataset_prices', '0A000'],
    ['SELECT prize FROM dataset_prices', '42703'],
    ['SELECT p.nope FROM dataset_prices p', '42703'],
    ['SELECT x.day FROM dataset_prices', '42P01'],
    ['SELECT pg_no_such_function(oid) FROM pg_catalog.pg_class', '42883'],
    ['SELECT lower(1, 2)', '42883'],
  ])('%s is %s', async (sql, code) => {
    const error = await pgError(client.query(sql));
    expect(error.code).toBe(code);
    const { rows } = await client.query('SELECT 1 AS alive');
    expect(rows).toEqual([{ alive: 1 }]);
  });

  it("passes the binder's candidate columns on as the HINT", async () => {
    const column = await pgError(client.query('SELECT prize FROM dataset_prices'));
    expect(column.message).toBe('Binder Error: Referenced column "prize" not found in FROM clause!');
    expect(column.hint).toMatch(/^Did you mean .*"price".*\?$/);
  });

  it('gives the position of what was refused, 1-based as PostgreSQL does', async () => {
    const error = await pgError(client.query('SELECT 1; SELECT * FROM nope'));
    expect(error.position).toBe(String('SELECT 1; SELECT * FROM '.length + 1));
    expect(error.message).toBe('table nope does not exist');
  });

  it('refuses SQL longer than the sandbox takes with 54000', async () => {
    const error = await pgError(client.query(`SELECT '${'x'.repeat(70_000)}'`));
    expect(error.code).toBe('54000');
  });
});

describe('session commands', () => {
  it('answers transactions as PostgreSQL does, a failed block included', async () => {
    await client.query('BEGIN');
    await expect(client.query('SELECT 1 AS x')).resolves.toMatchObject({ rows: [{ x: 1 }] });
    await pgError(client.query('SELECT * FROM nope'));
    const aborted = await pgError(client.query('SELECT 1'));
    expect(aborted.code).toBe('25P02');
    const rollback = await client.query('COMMIT');
    expect(rollback.command).toBe('ROLLBACK');
    await expect(client.query('SELECT 2 AS y')).resolves.toMatchObject({ rows: [{ y: 2 }] });
  });

  it('keeps settings in the session and shows them', async () => {
    await client.query("SET application_name = 'reporting'");
    await client.query('SET extra_float_digits = 3');
    const { rows } = await client.query('SHOW application_name');
    expect(rows).toEqual([{ application_name: 'reporting' }]);
    const unknown = await pgError(client.query('SET no_such_setting = 1'));
    expect(unknown.code).toBe('42704');
    const readOnly = await pgError(client.query("SET server_version = '99'"));
    expect(readOnly.code).toBe('55P02');
  });

  it('refuses COPY, LISTEN and NOTIFY with 0A000', async () => {
    for (const sql of ['COPY dataset_prices TO STDOUT', 'LISTEN events', "NOTIFY events, 'x'"]) {
      const error = await pgError(client.query(sql));
      expect(error.code).toBe('0A000');
    }
  });

  it('applies statement_timeout, at most QUERY_TIMEOUT_SECONDS', async () => {
    await client.query("SET statement_timeout = '200ms'");
    const started = Date.now();
    const error = await pgError(client.query('SELECT count(*) FROM range(100000000000)'));
    expect(error.code).toBe('57014');
    expect(error.message).toBe('canceling statement due to statement timeout');
    expect(Date.now() - started).toBeLessThan(20_000);
    await client.query('RESET statement_timeout');
  });
});
