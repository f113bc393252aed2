/**
 * What DuckDB does with the compiled SQL, for every kind of column: values travel as bound
 * parameters and numbers keep every digit. Each case names the rows it must select.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilters, type ResultColumn } from '../../src/filter-language/index.js';
import { openDatabase, type TestDatabase } from './support/duckdb.js';

const COLUMNS: ResultColumn[] = [
  { name: 'id', type: 'integer' },
  { name: 'i', type: 'bigint' },
  { name: 'u', type: 'ubigint' },
  { name: 'ti', type: 'tinyint' },
  { name: 'h', type: 'hugeint' },
  { name: 'uh', type: 'uhugeint' },
  { name: 'n', type: 'bignum' },
  { name: 'm', type: 'decimal(18,4)' },
  { name: 'm38', type: 'decimal(38,10)' },
  { name: 'd', type: 'double' },
  { name: 'f', type: 'float' },
  { name: 'dt', type: 'date' },
  { name: 'ts', type: 'timestamp' },
  { name: 'tz', type: 'timestamp with time zone' },
  { name: 'ns', type: 'timestamp_ns' },
  { name: 'bl', type: 'blob' },
  { name: 'addr', type: 'varchar' },
  { name: 'tm', type: 'time' },
];

// id, i, u, ti, h, uh, n, m, m38, d, f, dt, ts, tz, ns, bl, addr, tm
const ROWS = [
  `(1, 9007199254740993, 18446744073709551615, 127, 170141183460469231731687303715884105727,
    340282366920938463463374607431768211455, '115792089237316195423570985008687907853269984665640564039457584007913129639935'::BIGNUM,
    99999999999999.9999, 1234567890123456789012345678.0123456789, 0.1, 0.1, '2024-02-29', '2024-01-31 12:00:00.123456',
    '2024-01-31 12:00:00+00', '2024-01-31 12:00:00.123456789', '\\xAB\\xCD'::BLOB, '0x870679e138bcdf293b7ff14dd44b70fc97e12fc0', '12:00:00')`,
  `(2, 9007199254740992, 0, -128, -170141183460469231731687303715884105728, 0,
    '-115792089237316195423570985008687907853269984665640564039457584007913129639936'::BIGNUM,
    -0.0001, -1, 'NaN', 'inf', '0001-01-01', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '1970-01-01 00:00:00',
    ''::BLOB, '0xabc', '00:00:00')`,
  `(3, -9223372036854775808, 1, 0, 0, 1, 0, 0, 0, -0.0, 'nan', '9999-12-31', '2024-01-31 12:00:00', '2024-01-31 13:00:00+01',
    '2024-01-31 12:00:00.123456788', '\\x00'::BLOB, NULL, NULL)`,
  `(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
];

let db: TestDatabase;

beforeAll(async () => {
  db = await openDatabase();
  await db.rows(`SET TimeZone = 'America/New_York'`);
  const columns = COLUMNS.map((c) => `"${c.name}" ${c.type.toUpperCase()}`).join(', ');
  await db.rows(`CREATE TABLE t (${columns})`);
  await db.rows(`INSERT INTO t VALUES ${ROWS.join(', ')}`);
});

afterAll(() => db?.close());

async function ids(filters: string): Promise<number[]> {
  const { sql, params } = compileFilters(filters, COLUMNS);
  const rows = await db.rows(`SELECT id FROM t WHERE ${sql} ORDER BY id`, params);
  return rows.map((row) => Number(row.id));
}

describe('integers beyond 2^53 keep every digit', () => {
  it.each<[string, number[]]>([
    ['i = 9007199254740993', [1]],
    ['i = 9007199254740992', [2]],
    ['i > 9007199254740992', [1]],
    ["i = '9007199254740993'", [1]],
    ['i = 9007199254740992.5', []],
    ['i > 9007199254740992.5', [1]],
    ['i >= 9007199254740992.5', [1]],
    ['i < 9007199254740992.5', [2, 3]],
    ['i = -9223372036854775808', [3]],
    ['i < -9223372036854775808', []],
    ['i < 1e30', [1, 2, 3]],
    ['NOT i = 1.5', [1, 2, 3]],
    ['NOT i <> 1.5', []],
    ['i IN (9007199254740993, 1.5, 1e40)', [1]],
    ['i NOT IN (1.5)', [1, 2, 3]],
    ['i BETWEEN 9007199254740992.5 AND 1e30', [1]],
    ['u = 18446744073709551615', [1]],
    ['u > 5', [1]],
    ['u > 18446744073709551615', []],
    ['ti > 126.5', [1]],
    ['ti BETWEEN -1000 AND -100', [2]],
    ['h = 170141183460469231731687303715884105727', [1]],
    ['h = 170141183460469231731687303715884105726', []],
    ['h < -170141183460469231731687303715884105727', [2]],
    ['h > 170141183460469231731687303715884105727', []],
    ['uh = 340282366920938463463374607431768211455', [1]],
    ['uh > 170141183460469231731687303715884105728', [1]],
    ['uh > 0', [1, 3]],
    ['n = 115792089237316195423570985008687907853269984665640564039457584007913129639935', [1]],
    ['n = 115792089237316195423570985008687907853269984665640564039457584007913129639934', []],
    ['n < -115792089237316195423570985008687907853269984665640564039457584007913129639935', [2]],
    ['n > 1e100', []],
    ['n > 1.5', [1]],
    ['n >= 0.5', [1]],
  ])('%s', async (filters, expected) => {
    expect(await ids(filters)).toEqual(expected);
  });

  it('would lose them as a plain JS number (why the compiler casts)', async () => {
    const rows = await db.rows('SELECT id FROM t WHERE i = ? ORDER BY id', [Number('9007199254740993')]);
    expect(rows.map((row) => Number(row.id))).toEqual([2]);
    await expect(db.rows('SELECT id FROM t WHERE uh > ?', [5])).rejects.toThrow(/out of range/);
  });
});

describe('decimals compare in the column type', () => {
  it.each<[string, number[]]>([
    ['m = 99999999999999.9999', [1]],
    ['m > 99999999999999.99985', [1]],
    ['m >= 99999999999999.99995', []],
    ['m = -0.0001', [2]],
    ["m = '-0.00010'", [2]],
    ['m < 1e20', [1, 2, 3]],
    ['m38 = 1234567890123456789012345678.0123456789', [1]],
    ['m38 > 1234567890123456789012345678.01234567885', [1]],
    ['m38 < 1234567890123456789012345678.01234567895', [1, 2, 3]],
    ['m38 BETWEEN -1.5 AND 0', [2, 3]],
  ])('%s', async (filters, expected) => {
    expect(await ids(filters)).toEqual(expected);
  });
});

describe('doubles compare as DuckDB orders them', () => {
  it.each<[string, number[]]>([
    ['d = 0.1', [1]],
    ['d = 0', [3]],
    ["d = 'NaN'", [2]],
    ['d > 1e308', [2]],
    ['d < 0.2', [1, 3]],
    ['f = 0.1', []],
    ['f = 0.10000000149011612', [1]],
    ["f = 'Infinity'", [2]],
    ["f >= 'inf'", [2, 3]],
    ['d > -1e999', [1, 2, 3]],
  ])('%s', async (filters, expected) => {
    expect(await ids(filters)).toEqual(expected);
  });
});

describe('dates, timestamps, bytes and other types', () => {
  it.each<[string, number[]]>([
    ["dt = '2024-02-29'", [1]],
    ["dt >= '2024-01-01'", [1, 3]],
    ["dt < '0001-01-02'", [2]],
    ["ts = '2024-01-31 12:00:00.123456'", [1]],
    ["ts > '2024-01-31'", [1, 3]],
    ["ts = '2024-01-31T12:00:00Z'", [3]],
    ["ts = '2024-01-31 12:00:00 UTC'", [3]],
    ["ts BETWEEN '2024-01-31 12:00' AND '2024-01-31 12:00:00.123456'", [1, 3]],
    ["tz = '2024-01-31 12:00:00'", [1, 3]],
    ["tz = '1970-01-01'", [2]],
    ["ns = '2024-01-31 12:00:00.123456789'", [1]],
    ["ns < '2024-01-31 12:00:00.123456789'", [2, 3]],
    ['bl = 0xABCD', [1]],
    ["bl = '0xabcd'", [1]],
    ['bl = 0x', [2]],
    ['bl < 0x01', [2, 3]],
    ['bl IN (0x00, 0xabcd)', [1, 3]],
    ['addr = 0x870679E138BCDF293B7FF14DD44B70FC97E12FC0', [1]],
    ['addr = 0xABC', [2]],
    ["addr LIKE '0x8706%'", [1]],
    ["tm = '12:00:00'", [1]],
    ["tm < '12:00:00'", [2]],
    ["tm LIKE '12:%'", [1]],
    ['tm IS NULL', [3, 4]],
  ])('%s', async (filters, expected) => {
    expect(await ids(filters)).toEqual(expected);
  });
});

describe('NULL rows', () => {
  it('are never selected by a comparison, nor by its negation', async () => {
    expect(await ids('i = 1 OR NOT i = 1')).toEqual([1, 2, 3]);
    expect(await ids('i IS NULL')).toEqual([4]);
    expect(await ids('NOT i IS NOT NULL')).toEqual([4]);
  });
});
