import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, tempDir, uploadBody } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Change rows (issue 24, part 3): upsert by key (CSV, NDJSON, Parquet; all or nothing) and
 * delete-rows with the filter language. Every refusal leaves the table exactly as it was.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;
let dir: string;

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
  dir = tempDir('change-rows-');
});
afterAll(async () => {
  await service.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; body: Record<string, unknown> & { error?: string } };

const TRADES = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'trader', type: 'varchar' },
  { name: 'amount', type: 'uint256' },
  { name: 'block_time', type: 'timestamp' },
];

function upsert(
  table: string,
  body: string | Buffer,
  type = 'text/csv',
  query = '',
  key: string = KEYS.alice,
) {
  return service.json(`/v1/table/${table.replace('.', '/')}/upsert${query}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body,
    key,
  }) as Promise<Answer>;
}

function deleteRows(table: string, body: unknown, key: string = KEYS.alice, type = 'application/json') {
  return service.json(`/v1/table/${table.replace('.', '/')}/delete-rows`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    key,
  }) as Promise<Answer>;
}

const contents = (table: string) =>
  calls.rows(table, 'id, trader, amount::VARCHAR AS amount, block_time::VARCHAR AS block_time', 'id');

let tables = 0;
/** A created table of trades with rows 1–3, keyed on id unless `key` is null. */
async function tradesTable(key: string[] | null = ['id']): Promise<string> {
  const table = `alice.trades_${++tables}`;
  await calls.createTable(KEYS.alice, table, TRADES, key ? { key } : {});
  const inserted = await calls.insert(
    KEYS.alice,
    table,
    'id,trader,amount,block_time\n1,0xaaa,1000000000000000000,2024-01-01 00:00:00\n2,0xbbb,5,2024-01-02 00:00:00\n3,0xccc,,2024-01-03 00:00:00\n',
  );
  expect(inserted.status).toBe(200);
  return table;
}

describe('upsert', () => {
  it('replaces the rows with a key of the body and adds the others, and counts them', async () => {
    const table = await tradesTable();
    const answer = await upsert(
      table,
      'id,amount,trader\n2,115792089237316195423570985008687907853269984665640564039457584007913129639935,0xbbb2\n4,7,0xddd\n',
    );
    expect(answer).toMatchObject({ status: 200, body: { rows_written: 2, rows_replaced: 1, name: table } });
    expect(await contents(table)).toEqual([
      { id: 1n, trader: '0xaaa', amount: '1000000000000000000', block_time: '2024-01-01 00:00:00' },
      {
        id: 2n,
        trader: '0xbbb2',
        amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
        block_time: null,
      },
      { id: 3n, trader: '0xccc', amount: null, block_time: '2024-01-03 00:00:00' },
      { id: 4n, trader: '0xddd', amount: '7', block_time: null },
    ]);
    const listed = await calls.describe(KEYS.alice, table);
    expect(listed.body.row_count).toBe(4);
  });

  it('takes NDJSON and Parquet, and a key given as ?key= (several columns) on a table without one', async () => {
    const table = await tradesTable(null);
    const ndjson = await upsert(
      table,
      '{"id": 3, "trader": "0xccc", "amount": "9"}\n{"id": 5, "trader": "0xeee"}\n',
      'application/x-ndjson',
      '?key=id,trader',
    );
    expect(ndjson).toMatchObject({ status: 200, body: { rows_written: 2, rows_replaced: 1 } });
    const parquet = path.join(dir, 'upsert.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(
      `COPY (SELECT 1::BIGINT AS id, '0xaaa' AS trader, '42' AS amount) TO '${parquet}' (FORMAT parquet)`,
    );
    connection.closeSync();
    instance.closeSync();
    const fromParquet = await upsert(
      table,
      fs.readFileSync(parquet),
      'application/vnd.apache.parquet',
      '?key=id',
    );
    expect(fromParquet).toMatchObject({ status: 200, body: { rows_written: 1, rows_replaced: 1 } });
    expect((await contents(table)).map((row) => [row.id, row.amount])).toEqual([
      [1n, '42'],
      [2n, '5'],
      [3n, '9'],
      [5n, null],
    ]);
  });

  it('refuses a body that breaks a key or a value with a 400, changing nothing', async () => {
    const table = await tradesTable();
    const before = await contents(table);
    const cases: [string, string, string, RegExp][] = [
      [
        'duplicate keys',
        'id,trader\n4,a\n5,b\n4,c\n5,d\n4,e\n',
        '',
        /^the body gives a key more than once: id = 4 \(3 rows\); id = 5 \(2 rows\); each key may appear once in an upsert$/,
      ],
      [
        'a NULL key',
        'id,trader\n4,a\n,b\n',
        '',
        /^CSV line 3, column "id" \(bigint\) has no value, and it is a key column: every row needs its key$/,
      ],
      [
        'a bad value after good rows',
        `id,amount\n${Array.from({ length: 5000 }, (_, i) => `${i + 10},${i}`).join('\n')}\n99,-1\n`,
        '',
        /^CSV line 5002, column "amount" \(uint256\): "-1" does not fit/,
      ],
      [
        'no key column in the body',
        'id\n9\n',
        '?key=trader',
        /the body does not give the key column "trader"/,
      ],
      [
        'a key that is not a column',
        'id\n1\n',
        '?key=id,nope',
        /query parameter "key" names "nope", not a column of the table/,
      ],
      ['an unknown column', 'id,nope\n1,2\n', '', /CSV line 1 \(the header\) names unknown column "nope"/],
      ['an unknown query parameter', 'id\n1\n', '?keys=id', /unknown query parameter "keys"/],
    ];
    for (const [label, body, query, error] of cases) {
      const answer = await upsert(table, body, 'text/csv', query);
      expect(answer.status, label).toBe(400);
      expect(answer.body.error, label).toMatch(error);
    }
    const ndjsonNull = await upsert(table, '{"id": 4}\n{"trader": "x"}\n', 'application/x-ndjson');
    expect(ndjsonNull.body.error).toMatch(
      /^NDJSON line 2, column "id" \(bigint\) has no value, and it is a key column/,
    );
    expect(await contents(table)).toEqual(before);
    expect((await calls.describe(KEYS.alice, table)).body.row_count).toBe(3);
  });

  it('needs a key, a created table, and the rights to write it', async () => {
    const keyless = await tradesTable(null);
    expect((await upsert(keyless, 'id\n1\n')).body.error).toMatch(
      /has no key: give the columns rows are matched on, \?key=id/,
    );
    expect(
      (
        await service.json('/v1/table/upload/csv', {
          ...uploadBody({ table_name: 'up', data: 'id\n1\n' }),
          key: KEYS.alice,
        })
      ).status,
    ).toBe(200);
    expect(await upsert('alice.dataset_up', 'id\n1\n', 'text/csv', '?key=id')).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/upserts write only to tables made with the create operation/) },
    });
    expect((await upsert('bob.anything', 'id\n1\n')).status).toBe(403);
    expect((await upsert('alice.nothing_here', 'id\n1\n')).status).toBe(404);
    expect((await upsert(keyless, 'id\n1\n', 'text/plain')).status).toBe(415);
  });

  it('create keeps the key: the same key is the same table, another one a conflict', async () => {
    const body = { namespace: 'alice', table_name: 'keyed', schema: TRADES, key: ['id'] };
    expect((await calls.create(KEYS.alice, body)).status).toBe(201);
    expect((await calls.create(KEYS.alice, body)).status).toBe(200);
    expect((await calls.create(KEYS.alice, { ...body, key: undefined })).status).toBe(200);
    expect(await calls.create(KEYS.alice, { ...body, key: ['trader'] })).toMatchObject({
      status: 409,
      body: {
        error: 'table alice.keyed already exists with the key id; delete it first or choose another name',
      },
    });
    for (const key of [['nope'], [], 'id', ['id', 'id']]) {
      const answer = await calls.create(KEYS.alice, { ...body, table_name: 'keyed_bad', key });
      expect(answer.status, JSON.stringify(key)).toBe(400);
      expect(answer.body.error).toMatch(/field "key"/);
    }
  });
});

describe('concurrent writers', () => {
  it('upserts, deletes, inserts and restores at once: each all or nothing, the counts right', async () => {
    const table = await tradesTable();
    const path = `/v1/table/${table.replace('.', '/')}`;
    const writes = Array.from({ length: 12 }, (_, i) => {
      switch (i % 4) {
        case 0:
          return upsert(table, `id,trader\n${100 + i},0x${i}\n1,0xnew${i}\n`);
        case 1:
          return deleteRows(table, { filters: `id = ${100 + i - 1}` });
        case 2:
          return calls.insert(KEYS.alice, table, `id,trader\n${200 + i},0xins\n`);
        default:
          return service.json(`${path}/restore`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ version: 2 }),
            key: KEYS.alice,
          }) as Promise<Answer>;
      }
    });
    const answers = await Promise.all(writes);
    // A restore may find version 2 gone (a later write replaced what it restores): a 410, never a 5xx.
    for (const answer of answers) expect([200, 410]).toContain(answer.status);
    const listed = await calls.describe(KEYS.alice, table);
    expect(listed.body.row_count).toBe(await calls.count(table));
    const ids = (await contents(table)).map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('delete-rows', () => {
  it('deletes the rows the filter selects, comparing each type exactly, and counts them', async () => {
    const table = await tradesTable();
    expect(
      await deleteRows(table, { filters: "amount = 1000000000000000000 OR block_time >= '2024-01-03'" }),
    ).toEqual({
      status: 200,
      body: { rows_deleted: 2 },
    });
    expect((await contents(table)).map((row) => row.id)).toEqual([2n]);
    expect((await calls.describe(KEYS.alice, table)).body.row_count).toBe(1);
    expect(await deleteRows(table, { filters: "trader IN ('0xnothing')" })).toMatchObject({
      body: { rows_deleted: 0 },
    });
  });

  it('works on an upload, with values bound (a quote in a value is just a character)', async () => {
    const data = "venue,amount\ncurve,1.5\nit's new,2\nuniswap,3\n";
    expect(
      (
        await service.json('/v1/table/upload/csv', {
          ...uploadBody({ table_name: 'venues', data }),
          key: KEYS.alice,
        })
      ).status,
    ).toBe(200);
    expect(
      await deleteRows('alice.dataset_venues', { filters: "venue = 'it''s new' OR amount < 2" }),
    ).toMatchObject({
      body: { rows_deleted: 2 },
    });
    expect(await calls.rows('alice.dataset_venues', 'venue')).toEqual([{ venue: 'uniswap' }]);
  });

  it('refuses a bad filter or body with a 4xx, deleting nothing', async () => {
    const table = await tradesTable();
    const before = await contents(table);
    const cases: [unknown, number, RegExp, string?][] = [
      [{ filters: 'tradr = 1' }, 400, /^filters: unknown column "tradr" at position 0/],
      [{ filters: 'id = 1; DROP TABLE alice.trades_1' }, 400, /^filters: /],
      [{ filters: 'id = ' }, 400, /^filters: /],
      [{ filters: '' }, 400, /"filters" is empty; to remove every row use the clear operation/],
      [{ filters: 7 }, 400, /field "filters" is required/],
      [{}, 400, /field "filters" is required/],
      [{ filters: 'id = 1', all: true }, 400, /unknown field "all"/],
      ['[1]', 400, /the body must be a JSON object/],
      ['{"filters": ', 400, /malformed JSON/],
      [{ filters: 'id = 1' }, 415, /application\/json/, 'text/plain'],
    ];
    for (const [body, status, error, type] of cases) {
      const answer = await deleteRows(table, body, KEYS.alice, type);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.error, JSON.stringify(body)).toMatch(error);
    }
    expect((await deleteRows('bob.trades_1', { filters: 'id = 1' })).status).toBe(403);
    expect((await deleteRows('alice.nothing_here', { filters: 'id = 1' })).status).toBe(404);
    expect(await contents(table)).toEqual(before);
  });
});
