import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * Say what was typed (issue 24, part 2): the upload's answer lists each column's type and
 * every column a few values turned into text, with the first such value and its line;
 * `strict` refuses such an upload and `types` pins a column's type, each refusal a 400 naming
 * line, column and value, nothing stored; `dry_run` answers the same and stores nothing.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

interface Widened {
  column: string;
  value: string;
  line: number;
  values: number;
  type: string;
  otherwise: string;
  message: string;
}
interface Answer {
  success?: boolean;
  error?: string;
  dry_run?: boolean;
  columns?: { name: string; type: string }[];
  widened?: Widened[];
}

const upload = (fields: Record<string, unknown>) =>
  service.json<Answer>('/v1/table/upload/csv', { ...uploadBody(fields), key: KEYS.alice });

const raw = (query: string, body: string, type = 'text/csv') =>
  service.json<Answer>(`/v1/table/upload/csv${query}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body,
    key: KEYS.alice,
  });

/** `rows` trades with 18-decimal amounts; `bad` maps a row index to the amount text it gets instead. */
function trades(rows: number, bad: Record<number, string> = {}): string {
  const lines = ['trader,amount,venue'];
  for (let i = 0; i < rows; i++) {
    const amount = bad[i] ?? `${i % 1000}.${String(i).padStart(18, '0')}`;
    lines.push(`0x${i.toString(16).padStart(40, '0')},${amount},${['curve', 'uniswap-v3', '1inch'][i % 3]}`);
  }
  return `${lines.join('\n')}\n`;
}

const tableExists = async (table: string) =>
  (
    await service.database.read((session) =>
      session.all("SELECT 1 FROM duckdb_tables() WHERE schema_name = 'alice' AND table_name = ?", [table]),
    )
  ).length > 0;

describe('widened columns in the answer', () => {
  it('names the one n/a among 200,000 amounts with its line, wherever it is', async () => {
    // Line numbers: the header is line 1, row i is on line i + 2.
    for (const [row, line] of [
      [1232, 1234],
      [0, 2],
      [150_000, 150_002],
    ] as const) {
      const { status, body } = await upload({
        table_name: 'trades',
        data: trades(200_000, { [row]: 'n/a' }),
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.columns).toEqual([
        { name: 'trader', type: 'varchar' },
        { name: 'amount', type: 'varchar' },
        { name: 'venue', type: 'varchar' },
      ]);
      expect(body.widened).toEqual([
        {
          column: 'amount',
          value: 'n/a',
          line,
          values: 1,
          type: 'varchar',
          otherwise: 'decimal(21,18)',
          message: `amount: "n/a" on CSV line ${line.toLocaleString('en-US')} made the column varchar; without it it would be decimal(21,18)`,
        },
      ]);
    }
  });

  it('counts the other misfits, and reports columns of mixed types by their first value', async () => {
    const data =
      'day,amount,label\n2024-01-01,1.5,EigenDA\n2024-01-02,-,Lagrange\n7,2.5,2024\n2024-01-04,,eOracle\n2024-01-05,n/a,Witness\n';
    const { body } = await upload({ table_name: 'mixed', data });
    expect(body.widened).toEqual([
      expect.objectContaining({ column: 'amount', value: '-', line: 3, values: 2, otherwise: 'double' }),
      expect.objectContaining({ column: 'day', value: '7', line: 4, values: 1, otherwise: 'date' }),
    ]);
    expect(body.widened?.[0]?.message).toBe(
      'amount: "-" on CSV line 3 (and 1 more) made the column varchar; without them it would be double',
    );
  });

  it('says nothing of text columns, nor of lossless numeric widening', async () => {
    const data = 'name,price\nEigenDA,3500\n1inch,3512.25\nLagrange,0.1\n';
    const { body } = await upload({ table_name: 'plain', data });
    expect(body.columns).toEqual([
      { name: 'name', type: 'varchar' },
      { name: 'price', type: 'double' },
    ]);
    expect(body.widened).toEqual([]);
  });

  it('reports many widened columns from one read, each with its own line', async () => {
    // 300 columns of numbers, column c with an n/a on row c (line c + 2); a body of two parts.
    const columns = 300;
    const rows = 4000;
    const lines = [Array.from({ length: columns }, (_, c) => `c${c}`).join(',')];
    for (let r = 0; r < rows; r++)
      lines.push(Array.from({ length: columns }, (_, c) => (r === c * 13 ? 'n/a' : String(r + c))).join(','));
    const { status, body } = await raw('?table_name=many', `${lines.join('\n')}\n`);
    expect(status, JSON.stringify(body).slice(0, 300)).toBe(200);
    expect(body.widened).toHaveLength(columns);
    for (const [c, widening] of (body.widened ?? []).entries()) {
      expect(widening).toMatchObject({
        column: `c${c}`,
        value: 'n/a',
        line: c * 13 + 2,
        values: 1,
        otherwise: 'bigint',
      });
    }
  });

  it('names NDJSON lines', async () => {
    const body = '{"amount": 1.5}\n\n{"amount": "n/a"}\n{"amount": 2}\n';
    const answer = await raw('?table_name=nd', body, 'application/x-ndjson');
    expect(answer.body.widened).toEqual([
      expect.objectContaining({ column: 'amount', value: 'n/a', line: 3, otherwise: 'double' }),
    ]);
  });
});

describe('strict and types', () => {
  it('strict refuses a widening with a 400 naming line, column and value, and stores nothing', async () => {
    expect((await upload({ table_name: 'kept', data: 'amount\n1\n' })).status).toBe(200);
    const before = await service.database.read((s) => s.all('SELECT * FROM alice.dataset_kept'));
    const data = trades(50_000, { 40000: 'n/a' });
    for (const answer of [
      await upload({ table_name: 'kept', data, strict: true }),
      await raw('?table_name=kept&strict=true', data),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe(
        'CSV line 40,002, column "amount": "n/a" is not a decimal(21,18) like the column\'s other values, and "strict" refuses to widen the column to varchar; nothing was stored. Fix the value, send "types": {"amount": "varchar"}, or upload without "strict"',
      );
    }
    expect(await service.database.read((s) => s.all('SELECT * FROM alice.dataset_kept'))).toEqual(before);
    const fine = await upload({ table_name: 'strict_ok', data: trades(100), strict: true });
    expect(fine).toMatchObject({ status: 200, body: { widened: [] } });
  });

  it('types pins a column, before or after the data in the JSON body, and refuses a value that does not fit', async () => {
    const data = 'zip,amount\n01234,1.5\n12345,2\n';
    const pinnedFirst = await service.json<Answer>('/v1/table/upload/csv', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // `types` after `data`: the load has begun with the inferred types when it arrives.
      body: `{"table_name": "pinned", "data": ${JSON.stringify(data)}, "types": {"amount": "decimal(10,2)", "zip": "varchar"}}`,
      key: KEYS.alice,
    });
    expect(pinnedFirst.status, JSON.stringify(pinnedFirst.body)).toBe(200);
    expect(pinnedFirst.body.columns).toEqual([
      { name: 'zip', type: 'varchar' },
      { name: 'amount', type: 'decimal(10,2)' },
    ]);
    const viaQuery = await raw(
      `?table_name=pinned_q&types=${encodeURIComponent('{"amount":"double"}')}`,
      data,
    );
    expect(viaQuery.body.columns?.[1]).toEqual({ name: 'amount', type: 'double' });
    const strictText = await upload({
      table_name: 'pinned_s',
      data: trades(10, { 5: 'n/a' }),
      strict: true,
      types: { amount: 'varchar' },
    });
    expect(strictText).toMatchObject({ status: 200, body: { widened: [] } });

    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { types: { amount: 'bigint' } },
        /^CSV line 2, column "amount": "1\.5" is not a bigint, the type given in "types"; nothing was stored$/,
      ],
      [
        { types: { amount: 'decimal(3,2)' }, data: 'amount\n1.5\n12.25\n' },
        /^CSV line 3, column "amount": "12\.25" is not a decimal\(3,2\)/,
      ],
      [
        { types: { nope: 'varchar' } },
        /"types" names "nope", which is not a column; the columns are zip, amount/,
      ],
      [{ types: { amount: 'money' } }, /"types": "amount" has type "money"; the types are varchar, boolean/],
      [{ types: ['amount'] }, /"types" must be an object/],
      [{ strict: 'yes' }, /field "strict" must be true or false/],
    ];
    for (const [fields, error] of refusals) {
      const answer = await upload({ table_name: 'pinned_bad', data, ...fields });
      expect(answer.status, JSON.stringify(fields)).toBe(400);
      expect(answer.body.error, JSON.stringify(fields)).toMatch(error);
    }
    expect(await tableExists('dataset_pinned_bad')).toBe(false);
    expect((await raw('?table_name=x&types=notjson', data)).body.error).toMatch(
      /query parameter "types" must be a JSON object/,
    );
  });

  it('dry_run answers as a store would and stores nothing', async () => {
    const answer = await raw('?table_name=preview&dry_run=true', trades(100, { 7: 'n/a' }));
    expect(answer).toMatchObject({
      status: 200,
      body: { success: true, dry_run: true, table_name: 'dataset_preview' },
    });
    expect(answer.body.widened?.[0]).toMatchObject({ column: 'amount', line: 9 });
    expect(await tableExists('dataset_preview')).toBe(false);
    const json = await upload({ table_name: 'preview', data: 'a\n1\n', dry_run: true });
    expect(json.body.dry_run).toBe(true);
    expect(await tableExists('dataset_preview')).toBe(false);
    const staging = await service.database.read((s) =>
      s.all("SELECT table_name FROM duckdb_tables() WHERE starts_with(table_name, '__upload_')"),
    );
    expect(staging).toEqual([]);
  });
});
