import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { ALL_TYPES, tableCalls } from '../support/tables.js';

let service: TestService;
let calls: ReturnType<typeof tableCalls>;

const INT256_MIN = `-${2n ** 255n}`;
const INT256_MAX = `${2n ** 255n - 1n}`;
const UINT256_MAX = `${2n ** 256n - 1n}`;

/** Every column as text, so that values of any size compare exactly. */
const AS_TEXT =
  'id, label, n, ratio, flag, CAST(day AS VARCHAR) AS day, CAST("at" AS VARCHAR) AS "at", to_hex(payload) AS payload, CAST(delta AS VARCHAR) AS delta, CAST(balance AS VARCHAR) AS balance';

let tableNumber = 0;
/** A fresh table with every declared type, so that tests do not depend on each other. */
async function freshTable(schema = ALL_TYPES): Promise<string> {
  const name = `alice.t${++tableNumber}`;
  await calls.createTable(KEYS.alice, name, schema);
  return name;
}

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
});
afterAll(async () => {
  await service.stop();
});

describe('POST /v1/table/{namespace}/{table_name}/insert with text/csv', () => {
  it('appends every type exactly, and answers rows_written, bytes_written and name', async () => {
    const table = await freshTable();
    const csv =
      'id,label,n,ratio,flag,day,at,payload,delta,balance\n' +
      `1,"hello, ""world""",-2147483648,0.1,true,2024-02-29,2024-02-29 23:59:59.123456,0x00ff,${INT256_MIN},${UINT256_MAX}\n` +
      `2,"two\nlines",2147483647,-1.5e300,false,1970-01-01,1970-01-01 00:00:00,0x,${INT256_MAX},0\n` +
      '3,,,,,,,,,\n' +
      '4,"",0,NaN,TRUE,0001-01-01,2024-01-01T12:00:00Z,0xDEADbeef,-1,18446744073709551616\n';
    const answer = await calls.insert(KEYS.alice, table, csv);
    expect(answer).toEqual({
      status: 200,
      body: { rows_written: 4, bytes_written: Buffer.byteLength(csv), name: table },
    });
    expect(await calls.rows(table, AS_TEXT, 'id')).toEqual([
      {
        id: 1n,
        label: 'hello, "world"',
        n: -2147483648,
        ratio: 0.1,
        flag: true,
        day: '2024-02-29',
        at: '2024-02-29 23:59:59.123456',
        payload: '00FF',
        delta: INT256_MIN,
        balance: UINT256_MAX,
      },
      {
        id: 2n,
        label: 'two\nlines',
        n: 2147483647,
        ratio: -1.5e300,
        flag: false,
        day: '1970-01-01',
        at: '1970-01-01 00:00:00',
        payload: '',
        delta: INT256_MAX,
        balance: '0',
      },
      {
        id: 3n,
        label: null,
        n: null,
        ratio: null,
        flag: null,
        day: null,
        at: null,
        payload: null,
        delta: null,
        balance: null,
      },
      {
        id: 4n,
        label: '',
        n: 0,
        ratio: Number.NaN,
        flag: true,
        day: '0001-01-01',
        at: '2024-01-01 12:00:00',
        payload: 'DEADBEEF',
        delta: '-1',
        balance: '18446744073709551616',
      },
    ]);
  });

  it('takes the header’s columns in any order; omitted nullable columns are NULL', async () => {
    const table = await freshTable();
    const answer = await calls.insert(KEYS.alice, table, 'balance,label,id\n5,five,5\n6,six,6\n');
    expect(answer.body).toMatchObject({ rows_written: 2 });
    expect(await calls.rows(table, 'id, label, n, CAST(balance AS VARCHAR) AS balance', 'id')).toEqual([
      { id: 5n, label: 'five', n: null, balance: '5' },
      { id: 6n, label: 'six', n: null, balance: '6' },
    ]);
  });

  it('appends: each insert adds to the rows already there, and the catalog counts them', async () => {
    const table = await freshTable();
    const before = (await calls.describe(KEYS.alice, table)).body as {
      updated_at: string;
      created_at: string;
    };
    await new Promise((r) => setTimeout(r, 5));
    const first = 'id\n1\n2\n';
    const second = 'id\r\n3\r\n';
    await calls.insert(KEYS.alice, table, first);
    await calls.insert(KEYS.alice, table, second);
    expect(await calls.rows(table, 'id', 'id')).toEqual([{ id: 1n }, { id: 2n }, { id: 3n }]);
    const after = (await calls.describe(KEYS.alice, table)).body as Record<string, unknown>;
    expect(after).toMatchObject({
      row_count: 3,
      table_size_bytes: String(first.length + second.length),
      created_at: before.created_at,
    });
    expect(String(after.updated_at) > before.updated_at).toBe(true);
  });

  it('reads a UTF-8 byte order mark, trailing blank lines and a header-only body', async () => {
    const table = await freshTable();
    expect((await calls.insert(KEYS.alice, table, '\uFEFFid,label\n1,é\n\n\n')).body).toMatchObject({
      rows_written: 1,
    });
    expect((await calls.insert(KEYS.alice, table, 'id,label\n')).body).toMatchObject({ rows_written: 0 });
    expect((await calls.insert(KEYS.alice, table, 'id,label')).body).toMatchObject({ rows_written: 0 });
    expect(await calls.rows(table, 'id, label')).toEqual([{ id: 1n, label: 'é' }]);
  });

  it('refuses a value that does not fit, naming line and column, and writes no row of the request', async () => {
    const table = await freshTable();
    await calls.insert(KEYS.alice, table, 'id\n100\n');
    const cases: [string, string, string][] = [
      ['n', '1.5', 'a whole number from -2147483648 to 2147483647'],
      ['n', '2147483648', 'a whole number from -2147483648 to 2147483647'],
      ['n', '1.5e0', 'a whole number'],
      ['n', '2.147483648e9', 'a whole number from -2147483648 to 2147483647'],
      ['n', 'true', 'a whole number'],
      ['id', '9223372036854775808', 'a whole number from -9223372036854775808 to 9223372036854775807'],
      ['id', 'abc', 'a whole number'],
      ['ratio', 'abc', 'a number within the range of a double'],
      ['ratio', '1e400', 'a number within the range of a double'],
      ['flag', 'maybe', 'true or false'],
      ['day', '2024-02-30', 'a date such as 2024-01-31'],
      ['at', 'noon', 'a timestamp such as'],
      ['payload', 'abcd', '0x followed by pairs of hex digits'],
      ['payload', '0xabc', '0x followed by pairs of hex digits'],
      ['payload', '0xzz', '0x followed by pairs of hex digits'],
      ['delta', `${2n ** 255n}`, 'a whole number from -2^255 to 2^255-1'],
      ['delta', `-${2n ** 255n + 1n}`, 'a whole number from -2^255 to 2^255-1'],
      ['delta', '1.05e1', 'a whole number'],
      ['balance', '-1', 'a whole number from 0 to 2^256-1'],
      ['balance', `${2n ** 256n}`, 'a whole number from 0 to 2^256-1'],
    ];
    for (const [column, value, expected] of cases) {
      // A quoted newline in record 2 makes the bad record 3 start on physical line 5.
      const csv =
        column === 'id'
          ? `id,label\n1,\n2,"two\nlines"\n${value},x\n4,\n`
          : `id,label,${column}\n1,,\n2,"two\nlines",\n3,,${value}\n4,,\n`;
      const answer = await calls.insert(KEYS.alice, table, csv);
      expect(answer.status, `${column} ${value}`).toBe(400);
      expect(answer.body.error).toContain(`CSV line 5, column "${column}" (`);
      // Long values are cut to 60 characters in the message.
      const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
      expect(answer.body.error).toContain(`${JSON.stringify(shown)} does not fit; expected ${expected}`);
    }
    expect(await calls.rows(table, 'id')).toEqual([{ id: 100n }]);
    expect((await calls.describe(KEYS.alice, table)).body).toMatchObject({ row_count: 1 });
  });

  it('refuses an empty value in a column that is not nullable', async () => {
    const table = await freshTable();
    const answer = await calls.insert(KEYS.alice, table, 'id,label\n1,a\n,b\n');
    expect(answer).toEqual({
      status: 400,
      body: { error: 'CSV line 3, column "id" (bigint) has no value, and the column is not nullable' },
    });
    expect(await calls.count(table)).toBe(0);
  });

  it('writes nothing when the only bad value is in the last of 20,000 rows', async () => {
    const table = await freshTable();
    const lines = Array.from({ length: 20_000 }, (_, i) => `${i},${i}`);
    lines[lines.length - 1] = '19999,not a number';
    const answer = await calls.insert(KEYS.alice, table, `id,n\n${lines.join('\n')}\n`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/^CSV line 20001, column "n" \(integer\): "not a number" does not fit/);
    expect(await calls.count(table)).toBe(0);
    expect((await calls.describe(KEYS.alice, table)).body).toMatchObject({
      row_count: 0,
      table_size_bytes: '0',
    });
  });

  it('refuses rows DuckDB’s reader cannot read, with the line', async () => {
    const table = await freshTable();
    const cases: [string | Buffer, string][] = [
      ['id,label\n1,a\n2,b,c\n', 'CSV line 3 has more fields than the 2 columns of the header'],
      ['id,label\n1,a\n2\n', 'CSV line 3 has fewer fields than the 2 columns of the header'],
      ['id,label\n1,"a\n2,b\n', 'CSV line 2: a quoted value is not closed (its closing quote is missing)'],
      [
        Buffer.concat([Buffer.from('id,label\n1,a\n2,'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]),
        'CSV line 3 is not valid UTF-8',
      ],
    ];
    for (const [body, message] of cases) {
      expect(await calls.insert(KEYS.alice, table, body)).toEqual({ status: 400, body: { error: message } });
    }
    expect(await calls.count(table)).toBe(0);
  });

  it('checks the header against the table’s columns', async () => {
    const table = await freshTable();
    const cases: [string, string][] = [
      [
        'id,colour\n1,red\n',
        `CSV line 1 (the header) names unknown column "colour"; the table's columns are ${ALL_TYPES.map((c) => c.name).join(', ')}`,
      ],
      [
        'id,ID\n1,2\n',
        `CSV line 1 (the header) names unknown column "ID"; the table's columns are ${ALL_TYPES.map((c) => c.name).join(', ')}`,
      ],
      ['id,label,id\n1,a,1\n', 'CSV line 1 (the header) names "id" more than once'],
      ['label\na\n', 'CSV line 1 (the header) does not name "id", which is not nullable'],
      [
        'id,"label\n1,a\n',
        'CSV line 1 (the header): a quoted value is not closed (its closing quote is missing)',
      ],
    ];
    for (const [csv, message] of cases) {
      expect(await calls.insert(KEYS.alice, table, csv)).toEqual({ status: 400, body: { error: message } });
    }
  });

  it('refuses an empty body', async () => {
    const table = await freshTable();
    for (const body of ['', '\n\n']) {
      expect(await calls.insert(KEYS.alice, table, body)).toEqual({
        status: 400,
        body: { error: 'the body is empty: send a CSV whose first line names the columns' },
      });
    }
  });
});

describe('POST …/insert with application/x-ndjson', () => {
  it('appends objects whose keys name columns in any order; integers beyond 64 and 128 bits stay exact', async () => {
    const table = await freshTable();
    const body =
      `{"balance": ${UINT256_MAX}, "id": 1, "delta": ${INT256_MIN}, "label": "a \\"quoted\\" \\u00e9", "n": -5, "ratio": 2.5, "flag": true, "day": "2024-02-29", "at": "2024-02-29 10:00:00", "payload": "0xCAFE"}\n` +
      `{"id": 2, "delta": 340282366920938463463374607431768211457, "balance": "18446744073709551617"}\n` +
      '\n' +
      '{"id": 3, "delta": -9223372036854775809, "balance": 9223372036854775808, "label": null}\r\n' +
      '{"id": 4, "label": 12.5, "flag": false}\n';
    const answer = await calls.insert(KEYS.alice, table, body, 'application/x-ndjson');
    expect(answer).toEqual({
      status: 200,
      body: { rows_written: 4, bytes_written: Buffer.byteLength(body), name: table },
    });
    expect(await calls.rows(table, AS_TEXT, 'id')).toEqual([
      {
        id: 1n,
        label: 'a "quoted" é',
        n: -5,
        ratio: 2.5,
        flag: true,
        day: '2024-02-29',
        at: '2024-02-29 10:00:00',
        payload: 'CAFE',
        delta: INT256_MIN,
        balance: UINT256_MAX,
      },
      {
        id: 2n,
        label: null,
        n: null,
        ratio: null,
        flag: null,
        day: null,
        at: null,
        payload: null,
        delta: '340282366920938463463374607431768211457',
        balance: '18446744073709551617',
      },
      {
        id: 3n,
        label: null,
        n: null,
        ratio: null,
        flag: null,
        day: null,
        at: null,
        payload: null,
        delta: '-9223372036854775809',
        balance: '9223372036854775808',
      },
      {
        id: 4n,
        label: '12.5',
        n: null,
        ratio: null,
        flag: false,
        day: null,
        at: null,
        payload: null,
        delta: null,
        balance: null,
      },
    ]);
  });

  it('refuses a bad line with its number, and writes no line of the request', async () => {
    const table = await freshTable();
    const good = '{"id": 1}\n\n{"id": 2}\n';
    const names = ALL_TYPES.map((c) => c.name).join(', ');
    const cases: [string, string][] = [
      ['{"id": 3\n', 'NDJSON line 4 is not valid JSON'],
      ['{"id": 3}}\n', 'NDJSON line 4 is not valid JSON'],
      ['[3]\n', 'NDJSON line 4 is not a JSON object'],
      ['3\n', 'NDJSON line 4 is not a JSON object'],
      ['{"id": 3, "id": 4}\n', 'NDJSON line 4: key "id" appears more than once'],
      [
        '{"id": 3, "colour": "red"}\n',
        `NDJSON line 4: unknown column "colour"; the table's columns are ${names}`,
      ],
      [
        '{"id": 3, "label": {"a": 1}}\n',
        'NDJSON line 4, column "label": nested objects and arrays are not accepted; send a string, number, boolean or null',
      ],
      [
        '{"id": 3, "label": [1]}\n',
        'NDJSON line 4, column "label": nested objects and arrays are not accepted; send a string, number, boolean or null',
      ],
      [
        '{"label": "no id"}\n',
        'NDJSON line 4, column "id" (bigint) has no value, and the column is not nullable',
      ],
      ['{"id": null}\n', 'NDJSON line 4, column "id" (bigint) has no value, and the column is not nullable'],
      [
        '{"id": 3, "n": 1.5}\n',
        'NDJSON line 4, column "n" (integer): "1.5" does not fit; expected a whole number from -2147483648 to 2147483647',
      ],
      [
        '{"id": 3, "n": "seven"}\n',
        'NDJSON line 4, column "n" (integer): "seven" does not fit; expected a whole number from -2147483648 to 2147483647',
      ],
      [
        '{"id": 3, "balance": -1}\n',
        'NDJSON line 4, column "balance" (uint256): "-1" does not fit; expected a whole number from 0 to 2^256-1',
      ],
      [
        '{"id": 3, "payload": "cafe"}\n',
        'NDJSON line 4, column "payload" (varbinary): "cafe" does not fit; expected 0x followed by pairs of hex digits',
      ],
      [
        '{"id": 3, "flag": "perhaps"}\n',
        'NDJSON line 4, column "flag" (boolean): "perhaps" does not fit; expected true or false',
      ],
    ];
    for (const [bad, message] of cases) {
      const answer = await calls.insert(
        KEYS.alice,
        table,
        `${good}${bad}{"id": 5}\n`,
        'application/x-ndjson',
      );
      expect(answer, bad).toEqual({ status: 400, body: { error: message } });
    }
    expect(await calls.count(table)).toBe(0);
  });

  it('takes whole numbers written with a point or an exponent exactly, digit for digit as sent', async () => {
    const table = await freshTable();
    const body =
      '{"id": 1, "n": 1e5, "delta": 1.5e3, "balance": 1e77}\n' +
      // A double would make these ...992 and 10^22: the digits as sent are kept.
      '{"id": 2E+0, "n": 2E+2, "delta": -1.0000000000000000000001e22, "balance": 9007199254740993.0}\n' +
      '{"id": 3.0, "n": -0.0, "delta": "1e5", "balance": 0.1e1}\n' +
      // A string value holding what looks like a key and a number does not shift the numbers.
      '{"label": "\\"n\\": 9e9, \\u0022delta\\u0022:1.5e0,", "id": 4, "n": 3e1, "delta": 12.50e1}\n';
    const answer = await calls.insert(KEYS.alice, table, body, 'application/x-ndjson');
    expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 200, body: { rows_written: 4 } });
    expect(
      await calls.rows(
        table,
        'id, n, CAST(delta AS VARCHAR) AS delta, CAST(balance AS VARCHAR) AS balance, label',
        'id',
      ),
    ).toEqual([
      { id: 1n, n: 100000, delta: '1500', balance: `1${'0'.repeat(77)}`, label: null },
      { id: 2n, n: 200, delta: '-10000000000000000000001', balance: '9007199254740993', label: null },
      { id: 3n, n: 0, delta: '100000', balance: '1', label: null },
      { id: 4n, n: 30, delta: '125', balance: null, label: '"n": 9e9, "delta":1.5e0,' },
    ]);
  });

  it('keeps every whole number exactly in any notation, whatever strings, key order and spacing surround it', async () => {
    const table = await freshTable();
    /** `value` written as plain digits, with a point, with an exponent, or shifted the other way. */
    const notation = (max: bigint) =>
      fc
        .tuple(fc.bigInt({ min: -max, max }), fc.nat({ max: 4 }), fc.nat({ max: 5 }))
        .map(([value, form, shift]) => {
          const sign = value < 0n ? '-' : '';
          const digits = String(value < 0n ? -value : value);
          const written = [
            digits,
            `${digits}.${'0'.repeat(shift + 1)}`,
            `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${digits.length - 1}`,
            `${digits === '0' ? '0' : `${digits}${'0'.repeat(shift)}`}E-${shift}`,
            `${digits.slice(0, -1) || '0'}.${digits.slice(-1)}e+1`,
          ][form] as string;
          return { value, text: `${sign}${written}` };
        });
    const line = fc
      .record({
        // JSON's own characters, often, so that strings holding quotes, escapes and numbers are common.
        label: fc.string({
          unit: fc.oneof(
            fc.constantFrom('"', '\\', ':', ',', '{', '}', ' ', '1', 'e', '-', '.'),
            fc.string({ unit: 'binary', maxLength: 1 }),
          ),
          maxLength: 12,
        }),
        n: notation(2n ** 31n - 1n),
        delta: notation(2n ** 255n - 1n),
        order: fc.shuffledSubarray(['id', 'label', 'n', 'delta'], { minLength: 4 }),
        space: fc.constantFrom('', ' ', '\t', ' \t '),
      })
      .filter(({ label }) => !label.includes('\u0000'));
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 40 }), async (lines) => {
        await calls.clear(KEYS.alice, table);
        const body = lines
          .map(({ label, n, delta, order, space }, id) => {
            const field: Record<string, string> = {
              id: String(id),
              label: JSON.stringify(label),
              n: n.text,
              delta: delta.text,
            };
            const fields = order.map((key) => `"${key}"${space}:${space}${field[key]}`);
            return `{${space}${fields.join(`${space},${space}`)}${space}}`;
          })
          .join('\n');
        const answer = await calls.insert(KEYS.alice, table, body, 'application/x-ndjson');
        expect(answer.status, `${body}\n${JSON.stringify(answer.body)}`).toBe(200);
        expect(await calls.rows(table, 'id, label, n, CAST(delta AS VARCHAR) AS delta', 'id')).toEqual(
          lines.map(({ label, n, delta }, id) => ({
            id: BigInt(id),
            label,
            n: Number(n.value),
            delta: String(delta.value),
          })),
        );
      }),
      { numRuns: 15 },
    );
  });

  it('names a number that does not fit as the client wrote it, not as a double would print it', async () => {
    const table = await freshTable();
    const cases: [string, string][] = [
      ['"n": 1.5e0', 'column "n" (integer): "1.5e0" does not fit; expected a whole number from -2147483648'],
      ['"n": 1E10', 'column "n" (integer): "1E10" does not fit; expected a whole number from -2147483648'],
      ['"id": 9.3e18', 'column "id" (bigint): "9.3e18" does not fit; expected a whole number from'],
      ['"delta": 2.5E-1', 'column "delta" (int256): "2.5E-1" does not fit; expected a whole number'],
      ['"balance": 1e78', 'column "balance" (uint256): "1e78" does not fit; expected a whole number'],
      ['"balance": -1e0', 'column "balance" (uint256): "-1e0" does not fit; expected a whole number'],
      [
        '"balance": 1.0000000000000000000001e-3',
        'column "balance" (uint256): "1.0000000000000000000001e-3" does not fit',
      ],
      ['"day": 2e3', 'column "day" (date): "2e3" does not fit; expected a date'],
      ['"flag": 1.0e0', 'column "flag" (boolean): "1.0e0" does not fit; expected true or false'],
    ];
    for (const [field, message] of cases) {
      const body = `{"id": 1}\n{"label": "x,\\"n\\":7", ${field.startsWith('"id"') ? '' : '"id": 2, '}${field}}\n`;
      const answer = await calls.insert(KEYS.alice, table, body, 'application/x-ndjson');
      expect(answer.status, field).toBe(400);
      expect(answer.body.error).toContain(`NDJSON line 2, ${message}`);
    }
    expect(await calls.count(table)).toBe(0);
  });

  it('refuses an empty body', async () => {
    const table = await freshTable();
    expect(await calls.insert(KEYS.alice, table, '\n', 'application/x-ndjson')).toEqual({
      status: 400,
      body: { error: 'the body is empty: send one JSON object per line' },
    });
  });
});

describe('insert: content types, targets and sizes', () => {
  it('answers 415 for any other content type, and takes charset=utf-8', async () => {
    const table = await freshTable();
    for (const type of ['application/json', 'text/plain', 'text/csv; charset=latin1', null]) {
      const answer = await calls.insert(KEYS.alice, table, 'id\n1\n', type);
      expect(answer.status, String(type)).toBe(415);
      expect(answer.body.error).toMatch(
        /^Content-Type must be text\/csv or application\/x-ndjson \(UTF-8\), or application\/vnd\.apache\.parquet, got /,
      );
    }
    expect((await calls.insert(KEYS.alice, table, 'id\n1\n', 'text/csv; charset=UTF-8')).status).toBe(200);
    expect(
      (await calls.insert(KEYS.alice, table, '{"id":2}', 'application/x-ndjson; charset=utf-8')).status,
    ).toBe(200);
  });

  it('answers under /v1/uploads and /api/v1', async () => {
    const table = await freshTable();
    expect((await calls.insert(KEYS.alice, table, 'id\n1\n', 'text/csv', '/v1/uploads')).status).toBe(200);
    expect((await calls.insert(KEYS.alice, table, 'id\n2\n', 'text/csv', '/api/v1/uploads')).status).toBe(
      200,
    );
    expect((await calls.insert(KEYS.alice, table, 'id\n3\n', 'text/csv', '/api/v1/table')).status).toBe(200);
    expect(await calls.count(table)).toBe(3);
  });

  it('answers 404 for a table that does not exist, and 409 for a CSV upload', async () => {
    expect(await calls.insert(KEYS.alice, 'alice.nothing_here', 'id\n1\n')).toEqual({
      status: 404,
      body: { error: 'table alice.nothing_here does not exist' },
    });
    await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: 'uploaded', data: 'id\n1\n' }),
      key: KEYS.alice,
    });
    expect(await calls.insert(KEYS.alice, 'alice.dataset_uploaded', 'id\n2\n')).toEqual({
      status: 409,
      body: {
        error:
          'table alice.dataset_uploaded was stored by a CSV upload, which replaces its data; inserts append only to tables made with the create operation',
      },
    });
  });

  it('answers 400 for malformed names in the path', async () => {
    expect((await calls.insert(KEYS.alice, 'alice.Bad-Name', 'id\n1\n')).body.error).toMatch(
      /^field "table_name" must start with a lowercase letter/,
    );
    expect((await calls.insert(KEYS.alice, '_service.tables', 'id\n1\n')).body.error).toMatch(
      /^namespace "_service" is not a namespace/,
    );
    expect((await calls.insert(KEYS.admin, 'main.t', 'id\n1\n')).status).toBe(400);
  });
});

describe('insert size limit', () => {
  let small: TestService;
  const LIMIT = 50_000;

  beforeAll(async () => {
    small = await startTestService({ MAX_UPLOAD_BYTES: String(LIMIT) });
    await tableCalls(small).createTable(KEYS.alice, 'alice.sized', [{ name: 'x', type: 'varchar' }]);
  });
  afterAll(async () => {
    await small.stop();
  });

  it('refuses a body of MAX_UPLOAD_BYTES or more with 413, declared or streamed, and writes nothing', async () => {
    const body = `x\n${'a'.repeat(LIMIT)}\n`;
    const declared = await tableCalls(small).insert(KEYS.alice, 'alice.sized', body);
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatch(/^the request body must be smaller than 50000 bytes/);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++)
          controller.enqueue(new TextEncoder().encode(i === 0 ? 'x\n' : 'a'.repeat(10_000)));
        controller.close();
      },
    });
    const streamed = await small.request('/v1/table/alice/sized/insert', {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'x-service-api-key': KEYS.alice },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const just = `x\n${'a'.repeat(LIMIT - 3)}`;
    expect(Buffer.byteLength(just)).toBe(LIMIT - 1);
    expect((await tableCalls(small).insert(KEYS.alice, 'alice.sized', just)).status).toBe(200);
    expect(await tableCalls(small).count('alice.sized')).toBe(1);
  });
});
