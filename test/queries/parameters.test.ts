import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import {
  canonicalDatetime,
  canonicalNumber,
  checkValue,
  parameterSet,
  type QueryParameter,
  resolveValues,
  substitute,
} from '../../src/queries/parameters.js';

/** DESIGN §10's parameter rules, table by table, without a server. */

describe('numbers in canonical form', () => {
  it.each([
    ['7', '7'],
    ['7.0', '7'],
    ['+7.50', '7.5'],
    ['-0', '0'],
    ['0.000', '0'],
    ['007', '7'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['-1.5e3', '-1500'],
    ['2.5e-3', '0.0025'],
    ['1E2', '100'],
    ['12345678901234567890123', '12345678901234567890123'],
    [' 42 ', '42'],
  ])('%s → %s', (text, canonical) => {
    expect(canonicalNumber(text)).toBe(canonical);
  });

  it.each(['', '.', 'e5', '1e', 'ten', '0x10', '1,5', 'NaN', 'Infinity', '--1', '1e400', '1e-400', '1 2'])(
    'refuses %j',
    (text) => {
      expect(canonicalNumber(text)).toBeUndefined();
    },
  );

  it('is exact: the canonical text is the same decimal value, digit for digit', () => {
    /** value × 10^scale as [integer, scale], for a plain decimal text. */
    const decimal = (text: string): [bigint, number] => {
      const [whole = '', fraction = ''] = text.replace('-', '').split('.');
      const magnitude = BigInt(`${whole}${fraction}` || '0');
      return [text.startsWith('-') ? -magnitude : magnitude, -fraction.length];
    };
    fc.assert(
      fc.property(
        fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: -40, max: 40 })),
        ([negative, digits, exponent]) => {
          const canonical = canonicalNumber(`${negative ? '-' : ''}${digits}e${exponent}`) as string;
          expect(canonical).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
          const [value, scale] = decimal(canonical);
          const expected = negative ? -digits : digits;
          // expected × 10^exponent = value × 10^scale, compared without fractions.
          const low = Math.min(exponent, scale);
          expect(expected * 10n ** BigInt(exponent - low)).toBe(value * 10n ** BigInt(scale - low));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('datetimes in canonical form', () => {
  it.each([
    ['2024-01-31 12:00:00', '2024-01-31 12:00:00'],
    ['2024-01-31', '2024-01-31 00:00:00'],
    ['2024-01-31T12:30', '2024-01-31 12:30:00'],
    ['2024-01-31T12:30:15.999Z', '2024-01-31 12:30:15'],
    ['2024-01-31T23:30:00-01:00', '2024-02-01 00:30:00'],
    ['2024-03-01T00:30:00+0100', '2024-02-29 23:30:00'],
    ['0001-01-01 00:00:00', '0001-01-01 00:00:00'],
  ])('%s → %s', (text, canonical) => {
    expect(canonicalDatetime(text)).toBe(canonical);
  });

  it.each([
    '2023-02-29',
    '2024-13-01',
    '2024-00-10',
    '2024-01-32',
    '2024-01-01 24:00:00',
    '2024-01-01 12:60',
    'yesterday',
    '1/2/2024',
    '2024-1-2',
    '0000-01-01T00:00:00+01:00',
  ])('refuses %j', (text) => {
    expect(canonicalDatetime(text)).toBeUndefined();
  });
});

describe('values checked by type', () => {
  const text: QueryParameter = { key: 'color', type: 'text', value: 'red' };
  const number: QueryParameter = { key: 'n', type: 'number', value: '1' };
  const choice: QueryParameter = { key: 'side', type: 'enum', value: 'buy', enumOptions: ['buy', "it's"] };
  const free: QueryParameter = { key: 'any', type: 'enum', value: 'x' };

  it('accepts JSON numbers up to 2^53 and refuses larger ones, which a double has already rounded', () => {
    expect(checkValue(number, 42, 'q')).toBe('42');
    expect(checkValue(number, 0.1, 'q')).toBe('0.1');
    expect(() => checkValue(number, 2 ** 60, 'q')).toThrow(/beyond 2\^53 as strings/);
    expect(checkValue(number, '1152921504606846977', 'q')).toBe('1152921504606846977');
  });

  it('refuses values of the wrong kind with a 400 naming the parameter', () => {
    for (const [parameter, value] of [
      [text, 5],
      [text, null],
      [text, 'a\u0000b'],
      [number, true],
      [choice, 'sell'],
      [free, ['a']],
    ] as const) {
      let error: unknown;
      try {
        checkValue(parameter, value, 'query_parameters');
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(value)).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).message).toContain(`parameter "${parameter.key}"`);
    }
    expect(checkValue(free, 'anything', 'q')).toBe('anything');
  });

  it('fills defaults, takes given values, and refuses names the query does not declare', () => {
    const values = resolveValues([text, number], new Map([['n', '7.0']]), 'query_parameters');
    expect([...values]).toEqual([
      ['color', 'red'],
      ['n', '7'],
    ]);
    expect(() => resolveValues([text], new Map([['colour', 'x']]), 'query_parameters')).toThrow(
      /unknown parameter "colour"; this query takes "color"/,
    );
    expect(parameterSet(values)).toBe(
      parameterSet(resolveValues([number, text], new Map([['n', '7']]), 'q')),
    );
  });
});

describe('substitution', () => {
  const parameters: QueryParameter[] = [
    { key: 'color', type: 'text', value: 'red' },
    { key: 'n', type: 'number', value: '1' },
    { key: 'since', type: 'datetime', value: '2024-01-01 00:00:00' },
    { key: 'side', type: 'enum', value: 'buy' },
  ];

  it('writes each value as text where {{name}} stands, doubling quotes in text and enums', () => {
    const values = new Map([
      ['color', "o'clock {{n}}"],
      ['n', '-2.5'],
      ['since', '2024-02-03 04:05:06'],
      ['side', "x' OR '1'='1"],
    ]);
    expect(
      substitute(
        "SELECT '{{color}}', {{ n }}, timestamp '{{since}}', '{{side}}', '{{unknown}}'",
        parameters,
        values,
      ),
    ).toBe(
      "SELECT 'o''clock {{n}}', -2.5, timestamp '2024-02-03 04:05:06', 'x'' OR ''1''=''1', '{{unknown}}'",
    );
  });

  it('never lets a text value end its string literal (DuckDB reads back exactly the value)', async () => {
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000')),
        async (value) => {
          const sql = substitute("SELECT '{{color}}' AS v", parameters, new Map([['color', value]]));
          const reader = await connection.runAndReadAll(sql);
          expect(reader.getRowObjectsJS()).toEqual([{ v: value }]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
