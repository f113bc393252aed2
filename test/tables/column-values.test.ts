import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import { quoteLiteral } from '../../src/storage/sql.js';
import { convertValue, valueFits } from '../../src/tables/column-values.js';
import type { DeclaredColumn, DeclaredType } from '../../src/tables/table-schema.js';

/**
 * The two forms of each conversion rule must agree: whatever `valueFits` accepts,
 * `convertValue` stores without error, and whatever it refuses, `convertValue` raises on.
 * Were they to disagree, an insert would fail without the diagnosis finding why (a 500),
 * or store a value the diagnosis calls wrong.
 */

let database: Database;

beforeAll(async () => {
  database = await Database.open({ path: ':memory:', catalogReaders: 1, resultReaders: 1 });
});
afterAll(async () => {
  await database.close();
});

const TWO_255 = 2n ** 255n;
const TWO_256 = 2n ** 256n;

/** [text, the stored value as DuckDB prints it, or undefined when it does not fit] */
const CASES: Record<DeclaredType, [string, string | undefined][]> = {
  varchar: [
    ['', ''],
    ['any text, "quoted"', 'any text, "quoted"'],
  ],
  integer: [
    ['0', '0'],
    [' -2147483648 ', '-2147483648'],
    ['+2147483647', '2147483647'],
    ['2147483648', undefined],
    ['1.5', undefined],
    ['1.0', '1'],
    ['1e3', '1000'],
    ['1.5e3', '1500'],
    ['2E+2', '200'],
    [' -12.50e+1 ', '-125'],
    ['1500e-3', undefined],
    ['1.5e0', undefined],
    ['0.0001e4', '1'],
    ['-0e999999999', '0'],
    ['.5e1', '5'],
    ['5.', '5'],
    ['2.147483647e9', '2147483647'],
    ['2.147483648e9', undefined],
    ['1e999999999', undefined],
    ['1e1234567890', undefined],
    ['1e', undefined],
    ['e5', undefined],
    ['.', undefined],
    ['1e5.0', undefined],
    ['0x10', undefined],
    ['', undefined],
    ['one', undefined],
  ],
  bigint: [
    ['-9223372036854775808', '-9223372036854775808'],
    ['9223372036854775807', '9223372036854775807'],
    ['9223372036854775808', undefined],
    ['12.0', '12'],
    ['9.223372036854775807e18', '9223372036854775807'],
    ['9.223372036854775808e18', undefined],
    ['12.5', undefined],
  ],
  int256: [
    [`-${TWO_255}`, `-${TWO_255}`],
    [`${TWO_255 - 1n}`, `${TWO_255 - 1n}`],
    [` +42 `, '42'],
    [`${TWO_255}`, undefined],
    [`-${TWO_255 + 1n}`, undefined],
    ['1.0', '1'],
    ['1e5', '100000'],
    ['-1e76', `-1${'0'.repeat(76)}`],
    // 2^255 = 5.789…e76: its digits with an exponent, and one past it.
    [`${String(TWO_255 - 1n)[0]}.${String(TWO_255 - 1n).slice(1)}e76`, `${TWO_255 - 1n}`],
    [`${String(TWO_255)[0]}.${String(TWO_255).slice(1)}e76`, undefined],
    ['1.0000000000000000000001e22', '10000000000000000000001'],
    ['1.5e0', undefined],
    ['abc', undefined],
  ],
  uint256: [
    ['0', '0'],
    ['-0', '0'],
    [`${TWO_256 - 1n}`, `${TWO_256 - 1n}`],
    [`${TWO_256}`, undefined],
    ['-1', undefined],
    ['1e77', `1${'0'.repeat(77)}`],
    ['1e78', undefined],
    ['-0.0e5', '0'],
    ['-1e0', undefined],
  ],
  double: [
    ['0.1', '0.1'],
    ['-1.5e300', '-1.5e+300'],
    ['NaN', 'nan'],
    ['-Infinity', '-inf'],
    ['inf', 'inf'],
    ['1e400', undefined],
    ['-1e400', undefined],
    ['1,5', undefined],
    ['', undefined],
  ],
  boolean: [
    ['true', 'true'],
    ['FALSE', 'false'],
    ['maybe', undefined],
  ],
  date: [
    ['2024-02-29', '2024-02-29'],
    ['2023-02-29', undefined],
    ['yesterday', undefined],
  ],
  timestamp: [
    ['2024-02-29 23:59:59.123456', '2024-02-29 23:59:59.123456'],
    ['2024-02-29T10:00:00Z', '2024-02-29 10:00:00'],
    ['noon', undefined],
  ],
  varbinary: [
    ['0x', ''],
    ['0x00FFab', '\\x00\\xFF\\xAB'],
    ['0XAB', '\\xAB'],
    ['00ff', undefined],
    ['0xabc', undefined],
    ['0xgg', undefined],
    [' 0x00', undefined],
  ],
};

describe('column value rules', () => {
  for (const [type, cases] of Object.entries(CASES) as [DeclaredType, [string, string | undefined][]][]) {
    it(`${type}: fits exactly when it converts, to the exact value`, async () => {
      const column: DeclaredColumn = { name: 'c', type, nullable: true };
      for (const [text, stored] of cases) {
        const literal = quoteLiteral(text);
        const [row] = await database.read((session) =>
          session.all<{ fits: boolean }>(`SELECT ${valueFits(column, literal)} AS fits`),
        );
        expect(row?.fits, `${type} ${JSON.stringify(text)}`).toBe(stored !== undefined);
        const converted = database.read((session) =>
          session.all<{ value: string }>(`SELECT CAST(${convertValue(column, literal)} AS VARCHAR) AS value`),
        );
        if (stored === undefined)
          await expect(converted, `${type} ${JSON.stringify(text)}`).rejects.toThrow();
        else expect((await converted)[0]?.value, `${type} ${JSON.stringify(text)}`).toBe(stored);
      }
    });
  }

  it('NULL fits a nullable column only, and converts to NULL', async () => {
    for (const type of Object.keys(CASES) as DeclaredType[]) {
      const [row] = await database.read((session) =>
        session.all<{ nullable: boolean; required: boolean; value: unknown }>(
          `SELECT ${valueFits({ name: 'c', type, nullable: true }, 'NULL')} AS nullable,
                  ${valueFits({ name: 'c', type, nullable: false }, 'NULL')} AS required,
                  ${convertValue({ name: 'c', type, nullable: true }, 'NULL')} AS value`,
        ),
      );
      expect(row, type).toEqual({ nullable: true, required: false, value: null });
    }
  });
});
