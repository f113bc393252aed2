import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, uploadBody } from '../support/service.js';

/**
 * The typing rules of CSV uploads (DESIGN §4), each with values at its edges, checked the
 * only way that proves nothing was lost: the stored value is read back and compared with the
 * text that was uploaded (as the same number, instant, day or text, per type).
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

interface Column {
  name: string;
  values: string[];
  /** DuckDB's name of the type the column must get. */
  type: string;
}

/** A CSV field: quoted, so spaces and commas reach the reader as sent; empty stays empty (NULL). */
const field = (value: string) => (value === '' ? '' : `"${value.replaceAll('"', '""')}"`);

let uploads = 0;

/** Uploads the columns side by side (shorter ones padded with empty fields) and reads them back. */
async function uploadColumns(columns: Column[]) {
  const table = `typing_${++uploads}`;
  const height = Math.max(...columns.map((c) => c.values.length));
  const rows = Array.from({ length: height }, (_, r) =>
    columns.map((c) => field(c.values[r] ?? '')).join(','),
  );
  const data = `${columns.map((c) => c.name).join(',')}\n${rows.join('\n')}\n`;
  const { status, body } = await service.json<{ error?: string }>(
    '/v1/table/upload/csv',
    uploadBody({ table_name: table, data }),
  );
  expect(status, JSON.stringify(body)).toBe(200);
  return `alice.dataset_${table}`;
}

async function storedTypes(table: string): Promise<Record<string, string>> {
  const [schema, name] = table.split('.') as [string, string];
  const rows = await service.database.read((s) =>
    s.all<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? ORDER BY column_index',
      [schema, name],
    ),
  );
  return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
}

/** A decimal text as sign, significant digits and exponent: equal for equal numbers. */
function decimal(text: string): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`;
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return `${sign}0`;
  const significant = digits.slice(lead).replace(/0+$/, '');
  return `${sign}${significant}e${whole.length - lead + Number(exponent)}`;
}

/** Microseconds since the epoch of a timestamp text, its offset applied (none: UTC). */
function micros(text: string): bigint {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z| UTC|([+-])(\d{2}):?(\d{2})?)?$/.exec(
      text,
    );
  if (!match) throw new Error(`not a timestamp: ${text}`);
  const [, y, mo, d, h = '0', mi = '0', s = '0', f = '', zone, sign, oh = '0', om = '0'] = match;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const offset = zone && sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000 : 0;
  return BigInt(local - offset) * 1000n + BigInt(f.padEnd(6, '0'));
}

/** Reads each column back and compares every stored value with the text uploaded for it. */
async function expectStoredAsSent(table: string, columns: Column[]): Promise<void> {
  const types = await storedTypes(table);
  for (const column of columns) expect(types[column.name], column.name).toBe(column.type);
  const select = columns
    .map((c) => {
      const x = `"${c.name}"`;
      const extra = c.type.startsWith('TIMESTAMP') ? `epoch_us(${x})` : 'NULL';
      return `${x} AS "${c.name}", CAST(${x} AS VARCHAR) AS "${c.name} text", ${extra} AS "${c.name} us"`;
    })
    .join(', ');
  const rows = await service.database.read((s) =>
    s.all<Record<string, unknown>>(`SELECT ${select} FROM ${table} ORDER BY rowid`),
  );
  for (const column of columns) {
    column.values.forEach((sent, r) => {
      const row = rows[r] as Record<string, unknown>;
      const value = row[column.name];
      const text = row[`${column.name} text`] as string | null;
      const where = `${column.name} row ${r + 1}: ${JSON.stringify(sent)}`;
      if (sent === '') {
        expect(value, where).toBeNull();
        return;
      }
      switch (column.type) {
        case 'VARCHAR':
          expect(value, where).toBe(sent);
          break;
        case 'DOUBLE':
          // The same double as the text means, and its shortest print is the same number.
          expect(Object.is(value, Number(sent)), `${where} stored ${String(value)}`).toBe(true);
          // (JavaScript prints -0 as 0.)
          expect(decimal(Object.is(value, -0) ? '-0' : String(value)), where).toBe(decimal(sent));
          break;
        case 'BOOLEAN':
          expect(String(value), where).toBe(sent.toLowerCase());
          break;
        case 'TIMESTAMP':
        case 'TIMESTAMP WITH TIME ZONE':
          expect(row[`${column.name} us`], where).toBe(micros(sent));
          break;
        default:
          if (column.type.startsWith('DECIMAL')) expect(decimal(text ?? ''), where).toBe(decimal(sent));
          else expect(text, where).toBe(sent);
      }
    });
  }
}

const cases: Column[] = [
  // Doubles: every text that is a double's shortest print, the way JavaScript, Python and
  // DuckDB print them, 17 significant digits included; trailing zeros and exponents aside.
  {
    name: 'doubles',
    type: 'DOUBLE',
    values: [
      '0.1',
      '1e308',
      '5e-324',
      '-0.0',
      '1.50',
      '0.14285714285714285',
      '41.099999999999994',
      '1.7976931348623157e308',
      '2.2250738585072014e-308',
      '123456789012345680000',
      '1.2345678901234568e+20',
      '1e21',
      '1.5e-7',
      '1e-06',
      '0.000001',
      '100',
      '-2.5E-3',
      '.5',
      '0',
      '',
    ],
  },
  { name: 'negative_zero', type: 'DOUBLE', values: ['1', '-0'] },
  { name: 'ints_and_doubles', type: 'DOUBLE', values: ['5', '2.5', '9007199254740992'] },
  // Not a double's shortest print: exact decimals when 38 digits hold them, else text.
  { name: 'eighteen_digits', type: 'DECIMAL(19,18)', values: ['0.123456789012345678', '1.5'] },
  { name: 'seventeen_not_shortest', type: 'DECIMAL(18,17)', values: ['0.10000000000000001'] },
  { name: 'near_a_shortest', type: 'DECIMAL(17,15)', values: ['41.099999999999995', '41.099999999999994'] },
  { name: 'money', type: 'DECIMAL(21,2)', values: ['1234567890123456789.50', '0.01', '-7'] },
  { name: 'big_int_and_fraction', type: 'DECIMAL(21,1)', values: ['12345678901234567890', '0.5'] },
  { name: 'decimal_38_digits', type: 'DECIMAL(38,37)', values: [`0.${'1'.repeat(37)}`, '1.5'] },
  { name: 'decimal_39_digits', type: 'VARCHAR', values: [`0.${'1'.repeat(39)}`] },
  { name: 'nan', type: 'VARCHAR', values: ['1.5', 'NaN'] },
  { name: 'infinity', type: 'VARCHAR', values: ['1.5', 'Infinity', '-inf'] },
  { name: 'overflow', type: 'VARCHAR', values: ['1.5', '1e400'] },
  { name: 'underflow', type: 'VARCHAR', values: ['1.5', '1e-400'] },
  { name: 'subnormal_not_shortest', type: 'VARCHAR', values: ['4e-324', '4.9406564584124654e-324'] },
  { name: 'trailing_point', type: 'VARCHAR', values: ['1.5', '5.'] },
  // Integers: BIGINT, HUGEINT, BIGNUM up to 100 digits, never a double.
  { name: 'bigint', type: 'BIGINT', values: ['0', '1', '-2', '9223372036854775807', '-9223372036854775808'] },
  {
    name: 'hugeint',
    type: 'HUGEINT',
    values: [
      '9223372036854775808',
      '170141183460469231731687303715884105727',
      '-170141183460469231731687303715884105728',
    ],
  },
  { name: 'bignum_39_digits', type: 'BIGNUM', values: ['170141183460469231731687303715884105728', '-1'] },
  {
    name: 'bignum_uint256_max',
    type: 'BIGNUM',
    values: ['115792089237316195423570985008687907853269984665640564039457584007913129639935'],
  },
  { name: 'bignum_100_digits', type: 'BIGNUM', values: [`9${'0'.repeat(99)}`, `-9${'0'.repeat(99)}`] },
  { name: 'integer_101_digits', type: 'VARCHAR', values: [`1${'0'.repeat(100)}`] },
  { name: 'leading_zeros', type: 'VARCHAR', values: ['1', '007'] },
  { name: 'plus_sign', type: 'VARCHAR', values: ['1', '+5'] },
  { name: 'leading_space', type: 'VARCHAR', values: ['1', ' 5'] },
  { name: 'trailing_space', type: 'VARCHAR', values: ['1', '5 '] },
  { name: 'digit_separators', type: 'VARCHAR', values: ['1', '1_000'] },
  { name: 'hex', type: 'VARCHAR', values: ['1', '0x10'] },
  { name: 'plus_double', type: 'VARCHAR', values: ['1.5', '+1.5'] },
  { name: 'double_leading_zero', type: 'VARCHAR', values: ['1.5', '01.5'] },
  // Booleans, dates, timestamps.
  { name: 'booleans', type: 'BOOLEAN', values: ['true', 'FALSE', 'True', 'false'] },
  { name: 't_and_f', type: 'VARCHAR', values: ['t', 'f'] },
  { name: 'true_and_one', type: 'VARCHAR', values: ['true', '1'] },
  { name: 'dates', type: 'DATE', values: ['2024-01-05', '2024-02-29', '0001-01-01', '9999-12-31'] },
  { name: 'impossible_date', type: 'VARCHAR', values: ['2024-01-05', '2024-02-30'] },
  { name: 'short_date', type: 'VARCHAR', values: ['2024-01-05', '2024-1-5'] },
  { name: 'us_date', type: 'VARCHAR', values: ['01/02/2024'] },
  { name: 'year_zero', type: 'VARCHAR', values: ['0000-01-01'] },
  {
    name: 'timestamps',
    type: 'TIMESTAMP',
    values: [
      '2024-01-05 10:00:00',
      '2024-01-05T10:00:00.123456',
      '2024-01-05 10:00',
      '2024-01-05 23:59:59.5',
      '1969-12-31 23:59:59.999999',
    ],
  },
  { name: 'dates_and_timestamps', type: 'TIMESTAMP', values: ['2024-01-05', '2024-01-05 10:00:00.25'] },
  { name: 'nanoseconds', type: 'VARCHAR', values: ['2024-01-05 10:00:00.123456789'] },
  { name: 'hour_24', type: 'VARCHAR', values: ['2024-01-05 24:00:00'] },
  {
    name: 'with_offsets',
    type: 'TIMESTAMP WITH TIME ZONE',
    values: [
      '2024-01-05 10:00:00Z',
      '2024-01-05T10:00:00.123+02:00',
      '2024-01-05 10:00:00-0530',
      '2024-01-05 10:00:00+05',
      '2024-01-05 10:00:00 UTC',
      '2024-01-01T00:00:00.409Z',
      '2024-01-05T10:00:00.123456-12:00',
    ],
  },
  { name: 'naive_and_zoned', type: 'VARCHAR', values: ['2024-01-05 10:00:00', '2024-01-05 10:00:00Z'] },
  {
    name: 'zone_name',
    type: 'VARCHAR',
    values: ['2024-01-05 10:00:00Z', '2024-01-05 10:00:00 America/New_York'],
  },
  { name: 'all_empty', type: 'VARCHAR', values: ['', ''] },
];

describe('CSV upload typing: each rule, read back and compared with the text sent', () => {
  it('types every column by its rule and stores every value as the text means', async () => {
    const table = await uploadColumns(cases);
    await expectStoredAsSent(table, cases);
  });

  it('keeps an empty field NULL in every type, and a quoted empty field "" makes a number column text', async () => {
    const data = 'n,b,d,s\n1,true,2024-01-05,x\n,,,\n"",3,4,""\n';
    expect(
      (await service.json('/v1/table/upload/csv', uploadBody({ table_name: 'empties', data }))).status,
    ).toBe(200);
    expect(await storedTypes('alice.dataset_empties')).toEqual({
      n: 'VARCHAR',
      b: 'VARCHAR',
      d: 'VARCHAR',
      s: 'VARCHAR',
    });
    const rows = await service.database.read((s) =>
      s.all('SELECT * FROM alice.dataset_empties ORDER BY rowid'),
    );
    expect(rows).toEqual([
      { n: '1', b: 'true', d: '2024-01-05', s: 'x' },
      { n: null, b: null, d: null, s: null },
      { n: '', b: '3', d: '4', s: '' },
    ]);
    const typed = 'n,b,d,t,z\n1,true,2024-01-05,2024-01-05 10:00,2024-01-05 10:00:00Z\n,,,,\n';
    expect(
      (await service.json('/v1/table/upload/csv', uploadBody({ table_name: 'typed_nulls', data: typed })))
        .status,
    ).toBe(200);
    expect(await storedTypes('alice.dataset_typed_nulls')).toEqual({
      n: 'BIGINT',
      b: 'BOOLEAN',
      d: 'DATE',
      t: 'TIMESTAMP',
      z: 'TIMESTAMP WITH TIME ZONE',
    });
    const [empty] = await service.database.read((s) =>
      s.all('SELECT * FROM alice.dataset_typed_nulls WHERE n IS NULL'),
    );
    expect(empty).toEqual({ n: null, b: null, d: null, t: null, z: null });
  });

  it('widens any type after a million fitting rows and one misfit, keeping every value', async () => {
    // Per column: the value of a million rows, how SQL finds it, the misfit after them, the type.
    const columns: [string, string, string, string, string][] = [
      ['b', 'true', `"b" = 'true'`, 'maybe', 'VARCHAR'],
      ['i', '7', '"i" = 7', '2.5', 'DOUBLE'],
      ['h', '9223372036854775808', '"h" = 9223372036854775808', '0.5', 'DECIMAL(20,1)'],
      ['d', '0.5', '"d" = 0.5', '0.12345678901234567890', 'DECIMAL(21,20)'],
      ['m', '0.10000000000000001', `"m" = '0.10000000000000001'`, 'n/a', 'VARCHAR'],
      ['day', '2024-01-05', `"day" = TIMESTAMP '2024-01-05'`, '2024-01-05 10:00', 'TIMESTAMP'],
      ['tz', '2024-01-05T10:00:00Z', `"tz" = '2024-01-05T10:00:00Z'`, 'noon', 'VARCHAR'],
    ];
    const rows = 1_000_000;
    const line = `${columns.map(([, value]) => value).join(',')}\n`;
    const data = `${columns.map(([name]) => name).join(',')}\n${line.repeat(rows)}${columns.map(([, , , misfit]) => misfit).join(',')}\n`;
    const { status } = await service.json(
      '/v1/table/upload/csv',
      uploadBody({ table_name: 'late_misfits', data }),
    );
    expect(status).toBe(200);
    const table = 'alice.dataset_late_misfits';
    expect(await storedTypes(table)).toEqual(
      Object.fromEntries(columns.map(([name, , , , type]) => [name, type])),
    );
    const [counts] = await service.database.read((s) =>
      s.all<Record<string, bigint>>(
        `SELECT ${columns.map(([name, , found]) => `count(*) FILTER (WHERE ${found}) AS "${name}"`).join(', ')} FROM ${table}`,
      ),
    );
    expect(counts).toEqual(Object.fromEntries(columns.map(([name]) => [name, BigInt(rows)])));
    const [last] = await service.database.read((s) =>
      s.all<Record<string, string>>(
        `SELECT ${columns.map(([name]) => `CAST("${name}" AS VARCHAR) AS "${name}"`).join(', ')} FROM ${table} ORDER BY rowid DESC LIMIT 1`,
      ),
    );
    expect(last).toEqual({
      b: 'maybe',
      i: '2.5',
      h: '0.5',
      d: '0.12345678901234567890',
      m: 'n/a',
      day: '2024-01-05 10:00:00',
      tz: 'noon',
    });
  }, 180_000);
});
