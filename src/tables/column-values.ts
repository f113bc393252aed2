import { raise } from '../storage/storage-error.js';
import { type DeclaredColumn, type DeclaredType, INTEGER_256_RANGE } from './table-schema.js';

/**
 * How inserted text becomes a value of a declared column, as SQL over a VARCHAR
 * expression. DuckDB's own casts are lenient where data would be lost (`1.5` into an
 * integer rounds to 2, `1e400` into a double becomes infinity), so those types get a
 * stricter guard. Two forms of each rule:
 * - `convert`: the stored value; raises a database error when the text does not fit
 *   (the fast path, which then hands over to the diagnosis);
 * - `fits`: true when the text converts exactly; never raises (the diagnosis, which
 *   looks for the first failing line).
 * Both are given non-null text; NULL handling is the caller's.
 *
 * Whole-number columns (integer, bigint, int256, uint256) take a whole number in any decimal
 * notation, exactly: `1e5`, `1.5e3`, `2E+2`, `7.0`; never through a double (`1e77` is 1 and 77
 * zeros), and a fraction that is not zero (`1.5e0`) does not fit.
 */

/** Raised inside SQL when a guard refuses a value; only ever seen as a RaisedError. */
const REFUSED = raise('value does not fit its column');

const WHOLE_NUMBER = String.raw`'\s*[+-]?[0-9]+\s*'`;
const SPECIAL_DOUBLE = String.raw`'\s*[+-]?(?i:inf|infinity|nan)\s*'`;
const HEX_BYTES = "'0[xX]([0-9a-fA-F]{2})*'";

interface ValueRule {
  convert(text: string): string;
  fits(text: string): string;
  /** What a fitting value looks like, for error messages. */
  expected: string;
}

/** A decimal number's parts: sign, digits before and after the point, exponent (at most 9 digits, so it casts to INTEGER). */
const DECIMAL_PARTS = String.raw`'^\s*([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,9}))?\s*$'`;

/** More digits than any whole-number column holds (2^256 has 78): refused before they are written out. */
const MAX_WHOLE_DIGITS = 80;

/**
 * SQL: text `v` in decimal notation as the plain digits of the whole number it is (`-1.50e2` →
 * `-150`), NULL when it is no number, not whole, or longer than MAX_WHOLE_DIGITS digits. Exact:
 * digits are moved, never computed. Each lambda binds a value once (DuckDB has no LET).
 */
export function wholeNumberText(v: string): string {
  const parts = `regexp_extract(${v}, ${DECIMAL_PARTS}, ['sign', 'whole', 'fraction', 'exponent'])`;
  // value = digits × 10^scale, digits without leading zeros ('' for zero)
  const number = `{'negative': p.sign = '-', 'digits': ltrim(p.whole || p.fraction, '0'), 'scale': CAST(CASE WHEN p.exponent = '' THEN '0' ELSE p.exponent END AS INTEGER) - length(p.fraction)}`;
  const plain = `CASE
      WHEN d.digits = '' THEN '0'
      WHEN length(d.digits) + d.scale > ${MAX_WHOLE_DIGITS} THEN NULL
      WHEN d.scale >= 0 THEN d.digits || repeat('0', least(d.scale, ${MAX_WHOLE_DIGITS}))
      WHEN -d.scale < length(d.digits) AND ltrim(right(d.digits, -d.scale), '0') = ''
        THEN left(d.digits, length(d.digits) + d.scale)
    END`;
  const signed = `CASE WHEN d.negative AND d.digits <> '' THEN '-' ELSE '' END || ${plain}`;
  // No digit at all ('', '.', 'e5', or text that does not match: every part '') is no number.
  return `list_transform([${parts}], lambda p: CASE WHEN p.whole = '' AND p.fraction = '' THEN NULL
      ELSE list_transform([${number}], lambda d: ${signed})[1] END)[1]`;
}

const castRule = (type: string, expected: string): ValueRule => ({
  convert: (v) => `CAST(${v} AS ${type})`,
  fits: (v) => `(TRY_CAST(${v} AS ${type}) IS NOT NULL)`,
  expected,
});

/** Plain digits take the cast as they are; other notations go through wholeNumberText first. */
const wholeNumberRule = (type: 'INTEGER' | 'BIGINT', expected: string): ValueRule => {
  const fitsWritten = (v: string) => `(TRY_CAST(${wholeNumberText(v)} AS ${type}) IS NOT NULL)`;
  return {
    convert: (v) =>
      `CASE WHEN regexp_full_match(${v}, ${WHOLE_NUMBER}) THEN CAST(${v} AS ${type})
            WHEN ${fitsWritten(v)} THEN CAST(${wholeNumberText(v)} AS ${type}) ELSE ${REFUSED} END`,
    fits: (v) =>
      `(CASE WHEN regexp_full_match(${v}, ${WHOLE_NUMBER}) THEN TRY_CAST(${v} AS ${type}) IS NOT NULL ELSE ${fitsWritten(v)} END)`,
    expected,
  };
};

/**
 * int256 and uint256: BIGNUM in range. The table's CHECK constraint enforces the range too;
 * checking it here as well keeps `convert` and `fits` in agreement on their own.
 */
const bignumRule = (type: 'int256' | 'uint256', expected: string): ValueRule => {
  const { min, maxExclusive } = INTEGER_256_RANGE[type];
  const inRange = (digits: string) =>
    `coalesce(TRY_CAST(${digits} AS BIGNUM) >= '${min}'::BIGNUM AND TRY_CAST(${digits} AS BIGNUM) < '${maxExclusive}'::BIGNUM, false)`;
  const fits = (v: string) =>
    `(CASE WHEN regexp_full_match(${v}, ${WHOLE_NUMBER}) THEN ${inRange(`trim(${v})`)} ELSE ${inRange(wholeNumberText(v))} END)`;
  return {
    convert: (v) =>
      `CASE WHEN regexp_full_match(${v}, ${WHOLE_NUMBER})
              THEN CASE WHEN ${inRange(`trim(${v})`)} THEN CAST(trim(${v}) AS BIGNUM) ELSE ${REFUSED} END
            WHEN ${inRange(wholeNumberText(v))} THEN CAST(${wholeNumberText(v)} AS BIGNUM) ELSE ${REFUSED} END`,
    fits,
    expected,
  };
};

const doubleFits = (v: string) =>
  `(TRY_CAST(${v} AS DOUBLE) IS NOT NULL AND (isfinite(TRY_CAST(${v} AS DOUBLE)) OR regexp_full_match(${v}, ${SPECIAL_DOUBLE})))`;

const RULES: Record<DeclaredType, ValueRule> = {
  varchar: { convert: (v) => v, fits: () => 'true', expected: 'text' },
  integer: wholeNumberRule('INTEGER', 'a whole number from -2147483648 to 2147483647'),
  bigint: wholeNumberRule('BIGINT', 'a whole number from -9223372036854775808 to 9223372036854775807'),
  int256: bignumRule('int256', 'a whole number from -2^255 to 2^255-1'),
  uint256: bignumRule('uint256', 'a whole number from 0 to 2^256-1'),
  double: {
    convert: (v) => `CASE WHEN ${doubleFits(v)} THEN CAST(${v} AS DOUBLE) ELSE ${REFUSED} END`,
    fits: doubleFits,
    expected: 'a number within the range of a double (or NaN, Infinity, -Infinity)',
  },
  boolean: castRule('BOOLEAN', 'true or false'),
  date: castRule('DATE', 'a date such as 2024-01-31'),
  timestamp: castRule('TIMESTAMP', 'a timestamp such as 2024-01-31 13:45:00 (UTC)'),
  varbinary: {
    convert: (v) =>
      `CASE WHEN regexp_full_match(${v}, ${HEX_BYTES}) THEN from_hex(substr(${v}, 3)) ELSE ${REFUSED} END`,
    fits: (v) => `regexp_full_match(${v}, ${HEX_BYTES})`,
    expected: '0x followed by pairs of hex digits',
  },
};

/** The stored value of `column` from text `v`, NULL staying NULL. */
export function convertValue(column: DeclaredColumn, v: string): string {
  if (column.type === 'varchar') return v;
  return `CASE WHEN ${v} IS NULL THEN NULL ELSE ${RULES[column.type].convert(v)} END`;
}

/** True when text `v` may be stored in `column`: it fits, or it is NULL and the column allows that. */
export function valueFits(column: DeclaredColumn, v: string): string {
  const fits = RULES[column.type].fits(v);
  return column.nullable ? `(${v} IS NULL OR ${fits})` : `(${v} IS NOT NULL AND ${fits})`;
}

export function expectedValue(column: DeclaredColumn): string {
  return RULES[column.type].expected;
}
