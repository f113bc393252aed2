import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Files in (issue 24, part 1): an upload's body may be the file itself (text/csv, NDJSON,
 * Parquet) with the JSON form's fields as query parameters, and inserts take Parquet. Every
 * bad body is a 4xx that leaves the table exactly as it was.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;
let files: string;

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
  files = tempDir('upload-files-');
});
afterAll(async () => {
  await service.stop();
  fs.rmSync(files, { recursive: true, force: true });
});

type Answer = {
  success?: boolean;
  table_name?: string;
  error?: string;
  columns?: unknown;
  row_count?: number;
};

function post(query: string, body: string | Buffer, contentType: string, key: string = KEYS.alice) {
  return service.json<Answer>(`/v1/table/upload/csv${query}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
    key,
  });
}

/** Writes a Parquet file with DuckDB (an instance of the test's own: the service's may not write files there). */
async function parquetFile(name: string, select: string): Promise<string> {
  const file = path.join(files, `${name}.parquet`);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (${select}) TO '${file}' (FORMAT parquet)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return file;
}

const TRADES =
  'block_time,trader,amount,note\n' +
  '2024-01-01T00:00:12.000Z,0x870679e138bcdf293b7ff14dd44b70fc97e12fc0,1.000000000000000001,"said ""gm"", then sold"\n' +
  '2024-01-01T00:00:24.000Z,0x1111111111111111111111111111111111111111,25,\n';

/** The stored table, read directly from DuckDB, with its column types. */
async function stored(table: string) {
  return service.database.read(async (session) => {
    const result = await session.query(`SELECT * FROM ${table} ORDER BY ALL`);
    return { columns: result.columns, rows: result.rows };
  });
}

/** A table that holds something, to show that a refused upload leaves it exactly so. */
async function guarded(): Promise<() => Promise<void>> {
  const answer = await post('?table_name=guarded', 'a,b\n1,x\n2,y\n', 'text/csv');
  expect(answer.status).toBe(200);
  const before = await stored('alice.dataset_guarded');
  return async () => expect(await stored('alice.dataset_guarded')).toEqual(before);
}

describe('a raw text/csv body', () => {
  it('is stored exactly as the same CSV in the JSON form', async () => {
    const raw = await post('?table_name=raw_trades&description=trades&is_private=false', TRADES, 'text/csv');
    expect(raw).toMatchObject({ status: 200, body: { success: true, table_name: 'dataset_raw_trades' } });
    const json = await service.json(
      '/v1/table/upload/csv',
      uploadBody({ table_name: 'json_trades', data: TRADES }),
    );
    expect(json.status).toBe(200);
    expect(raw.body.columns).toEqual((json.body as Answer).columns);
    expect(await stored('alice.dataset_raw_trades')).toEqual(await stored('alice.dataset_json_trades'));
    const listed = await calls.describe(KEYS.alice, 'alice.dataset_raw_trades');
    expect(listed.body).toMatchObject({ description: 'trades', is_private: false, row_count: 2 });
  });

  it('takes charset=utf-8, is_private for a premium key, and answers under /v1/uploads/csv', async () => {
    const answer = await service.json<Answer>('/api/v1/uploads/csv?table_name=secret&is_private=true', {
      method: 'POST',
      headers: { 'content-type': 'text/csv; charset=utf-8' },
      body: 'x\n1\n',
      key: KEYS.bob,
    });
    expect(answer.status).toBe(200);
    expect((await calls.describe(KEYS.bob, 'bob.dataset_secret')).body).toMatchObject({ is_private: true });
  });

  it('streams a body of many parts (over 16 MB) and keeps every row in order', async () => {
    const rows = 400_000;
    const lines = Array.from({ length: rows }, (_, i) => `${i},0x${i.toString(16).padStart(40, '0')},${i}.5`);
    const body = `id,address,amount\n${lines.join('\n')}\n`;
    expect(body.length).toBeGreaterThan(20_000_000);
    const answer = await post('?table_name=big', body, 'text/csv');
    expect(answer).toMatchObject({ status: 200, body: { row_count: rows } });
    const [check] = await service.database.read((session) =>
      session.all<{ n: bigint; s: number }>('SELECT count(*) AS n, sum(amount) AS s FROM alice.dataset_big'),
    );
    expect(Number(check?.n)).toBe(rows);
    expect(check?.s).toBe((rows * (rows - 1)) / 2 + rows / 2);
  });

  it('refuses bad query parameters and bad CSV with a 4xx, leaving the table as it was', async () => {
    const unchanged = await guarded();
    const cases: [string, string | Buffer, string, number, RegExp][] = [
      ['', 'a\n1\n', 'text/csv', 400, /query parameter "table_name" is required/],
      ['?table_name=guarded&overwrite=1', 'a\n1\n', 'text/csv', 400, /unknown query parameter "overwrite"/],
      ['?table_name=Guarded', 'a\n1\n', 'text/csv', 400, /table_name/],
      ['?table_name=guarded&is_private=yes', 'a\n1\n', 'text/csv', 400, /"is_private" must be true or false/],
      ['?table_name=guarded&is_private=true', 'a\n1\n', 'text/csv', 403, /premium/],
      ['?table_name=guarded', 'a,b\n1,2\n3\n', 'text/csv', 400, /CSV line 3 has fewer fields/],
      ['?table_name=guarded', '', 'text/csv', 400, /the body is empty/],
      ['?table_name=guarded', Buffer.from([0x61, 0x0a, 0xff, 0x0a]), 'text/csv', 400, /UTF-8/],
      ['?table_name=guarded', 'a\n1\n', 'text/csv; charset=latin1', 415, /Content-Type must be/],
      ['?table_name=guarded', 'a\n1\n', 'text/plain', 415, /text\/csv/],
    ];
    for (const [query, body, type, status, error] of cases) {
      const answer = await post(query, body, type);
      expect(answer.status, `${query} ${type}`).toBe(status);
      expect(answer.body.error, `${query} ${type}`).toMatch(error);
    }
    await unchanged();
  });
});

describe('an NDJSON upload', () => {
  it('makes the keys columns, in the order they first appear, typed like CSV values', async () => {
    const body =
      '{"id": 1, "amount": "1.000000000000000001", "ok": true}\n' +
      '\n' +
      '{"id": 2, "trader": "0xabc", "amount": 25, "ok": false}\r\n' +
      '{"big": 115792089237316195423570985008687907853269984665640564039457584007913129639935}\n';
    const answer = await post('?table_name=events_json', body, 'application/x-ndjson');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.columns).toEqual([
      { name: 'id', type: 'bigint' },
      { name: 'amount', type: 'decimal(20,18)' },
      { name: 'ok', type: 'boolean' },
      { name: 'trader', type: 'varchar' },
      { name: 'big', type: 'bignum' },
    ]);
    const rows = await calls.rows(
      'alice.dataset_events_json',
      'id, amount::VARCHAR AS amount, ok, trader, big::VARCHAR AS big',
      'id NULLS LAST',
    );
    expect(rows).toEqual([
      { id: 1n, amount: '1.000000000000000001', ok: true, trader: null, big: null },
      { id: 2n, amount: '25.000000000000000000', ok: false, trader: '0xabc', big: null },
      {
        id: null,
        amount: null,
        ok: null,
        trader: null,
        big: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      },
    ]);
  });

  it('keeps keys that read like SQL as column names, and runs none of it', async () => {
    const key = `note'); DROP TABLE alice.dataset_guarded; --`;
    const answer = await post(
      '?table_name=sqlish',
      `${JSON.stringify({ [key]: 'x', 'a"b': 1 })}\n`,
      'application/x-ndjson',
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.columns).toEqual([
      { name: key, type: 'varchar' },
      { name: 'a"b', type: 'bigint' },
    ]);
    expect(await calls.rows('alice.dataset_sqlish')).toEqual([{ [key]: 'x', 'a"b': 1n }]);
  });

  it('refuses a line that is not a flat object, naming the line, and leaves the table', async () => {
    const unchanged = await guarded();
    const cases: [string, RegExp][] = [
      ['{"a": 1}\n{"a": \n', /NDJSON line 2 is not valid JSON/],
      ['{"a": 1}\n\n[1, 2]\n', /NDJSON line 3 is not a JSON object/],
      ['{"a": 1}\n{"a": {"b": 2}}\n', /NDJSON line 2, key "a": nested objects and arrays/],
      ['{"a": 1, "a": 2}\n', /NDJSON line 1 names a key more than once/],
      ['{"1a": 1}\n', /must start with a letter/],
      ['\n\n', /the body is empty/],
    ];
    for (const [body, error] of cases) {
      const answer = await post('?table_name=guarded', body, 'application/x-ndjson');
      expect(answer.status, body).toBe(400);
      expect(answer.body.error, body).toMatch(error);
    }
    await unchanged();
  });
});

describe('a Parquet upload', () => {
  it('keeps the file schema: 18-decimal amounts, unsigned 64-bit integers and instants exact', async () => {
    const file = await parquetFile(
      'typed',
      `SELECT * FROM (VALUES
         (1::BIGINT, 1.000000000000000001::DECIMAL(38,18), 18446744073709551615::UBIGINT, TIMESTAMPTZ '2024-01-01 12:00:00+02', '\\xDEAD'::BLOB, 'said "gm"'),
         (2, 25, 0, NULL, NULL, NULL)) t(id, amount, raw, seen_at, payload, note)`,
    );
    const answer = await post('?table_name=typed', fs.readFileSync(file), 'application/vnd.apache.parquet');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      success: true,
      table_name: 'dataset_typed',
      row_count: 2,
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'amount', type: 'decimal(38,18)' },
        { name: 'raw', type: 'ubigint' },
        { name: 'seen_at', type: 'timestamp with time zone' },
        { name: 'payload', type: 'blob' },
        { name: 'note', type: 'varchar' },
      ],
    });
    const rows = await calls.rows(
      'alice.dataset_typed',
      'id, amount::VARCHAR AS amount, raw::VARCHAR AS raw, seen_at::VARCHAR AS seen_at',
      'id',
    );
    expect(rows).toEqual([
      {
        id: 1n,
        amount: '1.000000000000000001',
        raw: '18446744073709551615',
        seen_at: '2024-01-01 10:00:00+00',
      },
      { id: 2n, amount: '25.000000000000000000', raw: '0', seen_at: null },
    ]);
  });

  it('refuses a file that is not Parquet, is cut short or damaged, or has nested columns', async () => {
    const unchanged = await guarded();
    const good = fs.readFileSync(
      await parquetFile('good', 'SELECT range AS id, range::VARCHAR AS label FROM range(1000)'),
    );
    const damaged = Buffer.from(good);
    damaged.fill(0x55, 4, Math.min(200, damaged.length - 8));
    const nested = fs.readFileSync(
      await parquetFile('nested', "SELECT 1 AS id, [1, 2] AS list, {'a': 1} AS st"),
    );
    const cases: [string, Buffer, RegExp][] = [
      [
        'a CSV',
        Buffer.from('a,b\n1,2\n'),
        /not a Parquet file: it does not start with the Parquet magic bytes/,
      ],
      [
        'truncated',
        good.subarray(0, good.length - 100),
        /not a Parquet file: it does not end with the magic bytes PAR1/,
      ],
      ['empty', Buffer.alloc(0), /not a Parquet file: the body is empty/],
      ['damaged', damaged, /not a Parquet file: DuckDB could not read it/],
      ['nested', nested, /nested columns.*"list" \(INTEGER\[\]\).*"st" \(STRUCT\(a INTEGER\)\)/],
    ];
    for (const [label, body, error] of cases) {
      const answer = await post('?table_name=guarded', body, 'application/vnd.apache.parquet');
      expect(answer.status, label).toBe(400);
      expect(answer.body.error, label).toMatch(error);
    }
    const typed = await post(
      `?table_name=guarded&types=${encodeURIComponent('{"id":"varchar"}')}`,
      good,
      'application/vnd.apache.parquet',
    );
    expect(typed).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/"types" does not apply to Parquet/) },
    });
    await unchanged();
  });
});

describe('a Parquet insert', () => {
  it('appends by column name with the same checks as CSV, and refuses what does not fit', async () => {
    await calls.createTable(KEYS.alice, 'alice.pq_events', [
      { name: 'id', type: 'bigint', nullable: false },
      { name: 'amount', type: 'uint256' },
      { name: 'raw', type: 'varbinary' },
      { name: 'seen_at', type: 'timestamp' },
    ]);
    const insert = (file: string) =>
      calls.insert(KEYS.alice, 'alice.pq_events', fs.readFileSync(file), 'application/vnd.apache.parquet');
    const good = await parquetFile(
      'insert-good',
      `SELECT * FROM (VALUES ('\\xBE\\xEF'::BLOB, 7::BIGINT, '115792089237316195423570985008687907853269984665640564039457584007913129639935', TIMESTAMPTZ '2024-01-01 02:00:00+02'))
         t(raw, id, amount, seen_at)`,
    );
    expect(await insert(good)).toMatchObject({
      status: 200,
      body: { rows_written: 1, name: 'alice.pq_events' },
    });
    const rows = await calls.rows(
      'alice.pq_events',
      'id, amount::VARCHAR AS amount, hex(raw) AS raw, seen_at::VARCHAR AS seen_at',
    );
    expect(rows).toEqual([
      {
        id: 7n,
        amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
        raw: 'BEEF',
        seen_at: '2024-01-01 00:00:00',
      },
    ]);
    const fraction = await parquetFile('insert-fraction', "SELECT * FROM (VALUES ('1'), ('1.5')) t(id)");
    expect(await insert(fraction)).toMatchObject({
      status: 400,
      body: {
        error:
          'Parquet row 2, column "id" (bigint): "1.5" does not fit; expected a whole number from -9223372036854775808 to 9223372036854775807',
      },
    });
    const unknown = await parquetFile('insert-unknown', 'SELECT 1::BIGINT AS id, 2 AS nope');
    expect((await insert(unknown)).body.error).toMatch(/the Parquet schema names unknown column "nope"/);
    expect(
      await insert(path.join(files, 'insert-good.parquet')).then(() => calls.count('alice.pq_events')),
    ).toBe(2);
    expect(
      (
        await calls.insert(
          KEYS.alice,
          'alice.pq_events',
          Buffer.from('id\n1\n'),
          'application/vnd.apache.parquet',
        )
      ).body.error,
    ).toMatch(/not a Parquet file/);
    expect(await calls.count('alice.pq_events')).toBe(2);
  });
});
