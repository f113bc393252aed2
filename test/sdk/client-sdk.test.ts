import { ColumnType, ContentType, DuneClient } from '@duneanalytics/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * The official TypeScript client, unmodified, against a running service. Only its base
 * address is redirected: it is a constant in the client, so fetch is wrapped for the test
 * and every request it sends is recorded, which also pins down what the client sends.
 */

const DUNE_BASE = 'https://api.dune.com/api';

let service: TestService;
const realFetch = globalThis.fetch;
const sent: { method: string; path: string; contentType: string | null; hasKey: boolean }[] = [];

beforeAll(async () => {
  service = await startTestService();
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(DUNE_BASE)) throw new Error(`unexpected address ${url}`);
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? 'GET',
      path: url.slice(DUNE_BASE.length),
      contentType: headers.get('content-type'),
      hasKey: headers.get('x-dune-api-key') !== null,
    });
    return realFetch(`${service.url}/api${url.slice(DUNE_BASE.length)}`, init);
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await service.stop();
});

const lastSent = () => sent[sent.length - 1];

async function stored(sql: string) {
  return service.database.read((session) => session.all(sql));
}

const schema = [
  { name: 'block_number', type: ColumnType.Bigint, nullable: false },
  { name: 'operator', type: ColumnType.Varchar },
  { name: 'shares_delta', type: ColumnType.Int256 },
  { name: 'balance', type: ColumnType.Uint256 },
  { name: 'payload', type: ColumnType.Varbinary },
  { name: 'active', type: ColumnType.Boolean },
  { name: 'ratio', type: ColumnType.Double },
  { name: 'day', type: ColumnType.Date },
  { name: 'seen_at', type: ColumnType.Timestamp },
  { name: 'log_index', type: ColumnType.Integer },
];

describe('@duneanalytics/client-sdk against the service', () => {
  const client = new DuneClient(KEYS.bob);

  it('table.uploadCsv and uploads.uploadCsv store a CSV and answer true', async () => {
    expect(
      await client.table.uploadCsv({
        table_name: 'sdk_prices',
        data: 'token,price\ncbETH,3100.5\nstETH,3050\n',
        description: 'prices from the SDK',
        is_private: false,
      }),
    ).toBe(true);
    expect(lastSent()).toEqual({
      method: 'POST',
      path: '/v1/table/upload/csv',
      contentType: 'application/json',
      hasKey: true,
    });
    expect(await client.uploads.uploadCsv({ table_name: 'sdk_prices2', data: 'a\n1\n' })).toBe(true);
    expect(lastSent()?.path).toBe('/v1/uploads/csv');
    expect(await stored('SELECT token, price FROM bob.dataset_sdk_prices ORDER BY token')).toEqual([
      { token: 'cbETH', price: 3100.5 },
      { token: 'stETH', price: 3050 },
    ]);
  });

  it('uploads.create makes a table (201), and answers already_existed for the same schema', async () => {
    const created = await client.uploads.create({
      namespace: 'bob',
      table_name: 'sdk_events',
      schema,
      is_private: true,
    });
    expect(lastSent()).toMatchObject({
      method: 'POST',
      path: '/v1/uploads',
      contentType: 'application/json',
    });
    expect(created).toEqual({
      namespace: 'bob',
      table_name: 'sdk_events',
      full_name: 'bob.sdk_events',
      example_query: 'select * from bob.sdk_events limit 10',
      already_existed: false,
      message: 'Table bob.sdk_events created',
    });
    const again = await client.uploads.create({
      namespace: 'bob',
      table_name: 'sdk_events',
      schema,
      is_private: true,
    });
    expect(again).toMatchObject({ full_name: 'bob.sdk_events', already_existed: true });
  });

  it('uploads.insert appends CSV and NDJSON, with 256-bit integers and varbinary kept exactly', async () => {
    const csv = Buffer.from(
      'block_number,operator,shares_delta,balance,payload,active,ratio,day,seen_at,log_index\n' +
        '19000000,0xabc,-57896044618658096711785492504343953926634992332820282019728792003956564819968,' +
        '115792089237316195423570985008687907853269984665640564039457584007913129639935,0x00ff10,true,0.25,' +
        '2024-03-01,2024-03-01 12:30:00,7\n',
    );
    const csvResult = await client.uploads.insert({
      namespace: 'bob',
      table_name: 'sdk_events',
      data: csv,
      content_type: ContentType.Csv,
    });
    expect(lastSent()).toMatchObject({
      method: 'POST',
      path: '/v1/uploads/bob/sdk_events/insert',
      contentType: 'text/csv',
    });
    expect(csvResult).toEqual({ rows_written: 1, bytes_written: csv.length, name: 'bob.sdk_events' });

    const ndjson = Buffer.from(
      '{"block_number": 19000001, "operator": "0xdef", "shares_delta": 340282366920938463463374607431768211457, "balance": "18446744073709551617", "payload": "0xCAFE"}\n' +
        '{"block_number": 19000002, "shares_delta": -18446744073709551617, "active": false, "log_index": 3}\n',
    );
    const ndjsonResult = await client.uploads.insert({
      namespace: 'bob',
      table_name: 'sdk_events',
      data: ndjson,
      content_type: ContentType.NDJson,
    });
    expect(lastSent()?.contentType).toBe('application/x-ndjson');
    expect(ndjsonResult).toEqual({ rows_written: 2, bytes_written: ndjson.length, name: 'bob.sdk_events' });

    expect(
      await stored(
        'SELECT block_number, CAST(shares_delta AS VARCHAR) AS shares_delta, CAST(balance AS VARCHAR) AS balance, to_hex(payload) AS payload FROM bob.sdk_events ORDER BY block_number',
      ),
    ).toEqual([
      {
        block_number: 19000000n,
        shares_delta: '-57896044618658096711785492504343953926634992332820282019728792003956564819968',
        balance: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
        payload: '00FF10',
      },
      {
        block_number: 19000001n,
        shares_delta: '340282366920938463463374607431768211457',
        balance: '18446744073709551617',
        payload: 'CAFE',
      },
      { block_number: 19000002n, shares_delta: '-18446744073709551617', balance: null, payload: null },
    ]);
  });

  it('a refused insert surfaces as the client’s error, with the line and column', async () => {
    await expect(
      client.uploads.insert({
        namespace: 'bob',
        table_name: 'sdk_events',
        data: Buffer.from('block_number,log_index\n1,2\n2,x\n'),
        content_type: ContentType.Csv,
      }),
    ).rejects.toThrow(/Status: 400.*CSV line 3, column \\"log_index\\"/);
    expect(await stored('SELECT count(*) AS n FROM bob.sdk_events')).toEqual([{ n: 3n }]);
  });

  it('uploads.list answers the tables with next_offset paging', async () => {
    const all = await client.uploads.list();
    expect(lastSent()).toMatchObject({ method: 'GET', path: '/v1/uploads' });
    const events = all.tables.find((t) => t.full_name === 'bob.sdk_events');
    expect(events).toMatchObject({
      is_private: true,
      owner: { handle: 'bob', type: 'user' },
      table_size_bytes: expect.stringMatching(/^\d+$/),
    });
    expect(events?.columns.map((c) => c.type)).toEqual(schema.map((c) => c.type));
    expect(all.next_offset).toBeUndefined();

    const first = await client.uploads.list({ limit: 1, offset: 0 });
    expect(lastSent()?.path).toBe('/v1/uploads?limit=1&offset=0');
    expect(first.tables).toHaveLength(1);
    expect(first.next_offset).toBe(1);
  });

  it('uploads.clear and uploads.delete answer their messages', async () => {
    const cleared = await client.uploads.clear({ namespace: 'bob', table_name: 'sdk_events' });
    expect(lastSent()).toMatchObject({ method: 'POST', path: '/v1/uploads/bob/sdk_events/clear' });
    expect(cleared).toEqual({ message: 'Table bob.sdk_events successfully cleared' });
    expect(await stored('SELECT count(*) AS n FROM bob.sdk_events')).toEqual([{ n: 0n }]);

    const deleted = await client.uploads.delete({ namespace: 'bob', table_name: 'sdk_events' });
    expect(lastSent()).toMatchObject({ method: 'DELETE', path: '/v1/uploads/bob/sdk_events' });
    expect(deleted).toEqual({ message: 'Table bob.sdk_events successfully deleted' });
    const names = (await client.uploads.list()).tables.map((t) => t.full_name);
    expect(names).not.toContain('bob.sdk_events');
  });

  it('the deprecated table.* calls reach the same operations under /v1/table', async () => {
    await client.table.create({
      namespace: 'bob',
      table_name: 'sdk_legacy',
      schema: [{ name: 'x', type: ColumnType.Integer }],
    });
    expect(lastSent()?.path).toBe('/v1/table/create');
    const inserted = await client.table.insert({
      namespace: 'bob',
      table_name: 'sdk_legacy',
      data: Buffer.from('x\n1\n2\n'),
      content_type: ContentType.Csv,
    });
    expect(inserted).toMatchObject({ rows_written: 2 });
    expect(await client.table.delete({ namespace: 'bob', table_name: 'sdk_legacy' })).toEqual({
      message: 'Table bob.sdk_legacy successfully deleted',
    });
    expect(lastSent()).toMatchObject({ method: 'DELETE', path: '/v1/table/bob/sdk_legacy' });
  });

  it('a wrong key is the client’s error with status 401', async () => {
    await expect(new DuneClient('wrong-key-0000000').uploads.list()).rejects.toThrow(/Status: 401/);
  });
});
