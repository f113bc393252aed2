import { quoteIdentifier } from '../storage/sql.js';

/**
 * The typing rules of uploaded CSV columns (DESIGN §4): a column gets the first type of
 * TYPE_ORDER that every one of its values fits, where "fits" means the text is exactly a
 * value of the type, nothing lost. DuckDB's own casts are lenient where data would be lost
 * (` 5`, `+5`, `007`, `1_000` and `1.5` all cast to BIGINT; an offset in a TIMESTAMP is
 * dropped; 0.12345678901234567890 becomes a nearby double), so each rule is a check on the
 * text, written in SQL over the text `x` and its cast value `t` (both non-NULL here).
 *
 * Each rule's `check` serves twice: in `fitsMask`, a bitmask of the types a value fits (the
 * inference ANDs the masks per column), and in `convertExpression`, the stored value or NULL
 * when the text does not fit (the load, where nearly every value fits: the cheapest exact test
 * comes first).
 *
 * - DOUBLE: a decimal text is a double when the double's shortest round-trip text, the way
 *   JavaScript, Python, Go and DuckDB print doubles, is the same number (trailing zeros and
 *   exponent form aside): `0.14285714285714285`, `41.099999999999994`, `1e308`, `5e-324`,
 *   `-0.0`, `1.50` are doubles; `0.12345678901234567890` is not (it prints back shorter).
 * - DECIMAL(p,s): other plain decimals of at most 38 digits, exactly.
 * - integers: BIGINT, HUGEINT, then BIGNUM up to MAX_BIGNUM_DIGITS digits (exact, sums
 *   exactly like the int256 columns of created tables); never a double. Text such as `007`,
 *   `+5`, ` 5`, `1_000`, `-0` is not an integer's own text, so it is not an integer.
 * - BOOLEAN: `true`/`false` in any case. DATE: `YYYY-MM-DD`. TIMESTAMP: a date, or a date and
 *   a time with up to 6 fractional digits (a date is midnight). TIMESTAMPTZ: a date and time
 *   with `Z`, ` UTC` or an offset; stored as the instant (the offset is never dropped).
 */

export type InferredType =
  | {
      kind:
        | 'BOOLEAN'
        | 'BIGINT'
        | 'HUGEINT'
        | 'BIGNUM'
        | 'DOUBLE'
        | 'DATE'
        | 'TIMESTAMP'
        | 'TIMESTAMPTZ'
        | 'VARCHAR'
        // No value in the sample: stored as VARCHAR, every value a misfit that widens the column.
        | 'NULL';
    }
  | { kind: 'DECIMAL'; precision: number; scale: number };

type Kind = InferredType['kind'];

export function sqlType(type: InferredType): string {
  if (type.kind === 'DECIMAL') return `DECIMAL(${type.precision},${type.scale})`;
  return type.kind === 'NULL' ? 'VARCHAR' : type.kind;
}

/**
 * Integers longer than this stay text: DuckDB's text-to-BIGNUM conversion costs the square
 * of the digits (measured, 1.5: 57 µs at 1,000 digits, 6.7 ms at 10,000, 0.68 s at 100,000),
 * so longer ones would make a load superlinear. 100 digits hold any 256-bit integer (78).
 */
export const MAX_BIGNUM_DIGITS = 100;
const MAX_DECIMAL_PRECISION = 38;
/** The smallest normal double: below it (subnormals) a double holds fewer than 15 digits. */
const MIN_NORMAL_DOUBLE = '2.2250738585072014e-308';

/** `-0` is no integer's own text: as a double it keeps its sign. */
const INTEGER = '0|-?[1-9][0-9]*';
const NUMBER = String.raw`-?((0|[1-9][0-9]*)(\.[0-9]+)?|\.[0-9]+)([eE][+-]?[0-9]+)?`;
const DECIMAL = String.raw`-?((0|[1-9][0-9]*)(\.[0-9]+)?|\.[0-9]+)`;
const YEAR = '([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])';
const DAY = `${YEAR}-[0-9]{2}-[0-9]{2}`;
const TIME = String.raw`([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?`;
const TIMESTAMP = `${DAY}([ T]${TIME})?`;
const ZONE = '(Z| UTC|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)';
const TIMESTAMPTZ = `${DAY}[ T]${TIME}${ZONE}`;

const matches = (x: string, re: string) => `regexp_full_match(${x}, '${re}')`;

/**
 * The significant digits of a number's text: no sign, point, exponent, nor leading or
 * trailing zeros. Plain string functions: regexp_replace cost ~5 times as much (measured).
 */
const digitsOf = (x: string) =>
  `trim(replace(replace(split_part(replace(${x}, 'E', 'e'), 'e', 1), '-', ''), '.', ''), '0')`;

/** Digits after the point of a plain decimal text. */
const fractionDigits = (x: string) =>
  `CASE WHEN contains(${x}, '.') THEN strlen(${x}) - strpos(${x}, '.') ELSE 0 END`;
/** Digits before the point, a lone 0 not counted (DECIMAL(1,1) holds 0.5). */
const integerDigits = (x: string) => `strlen(ltrim(split_part(ltrim(${x}, '-'), '.', 1), '0'))`;

interface Rule {
  /** Text `x` as a value of the type, NULL when it is none. */
  cast: (x: string) => string;
  /**
   * Whether text `x` is exactly the value `t` of the type, given that `t` is not NULL (a
   * NULL `t` fails the rule by itself: the stored value is then NULL, a misfit).
   */
  check: (x: string, t: string) => string;
  /**
   * Whether `check` needs the value: then the cast is computed once in a projection below;
   * otherwise the cast runs only for text that passed the check.
   */
  usesValue?: boolean;
}

const castTo = (type: string) => (x: string) => `TRY_CAST(${x} AS ${type})`;

/** Only integers short enough are cast to BIGNUM (see MAX_BIGNUM_DIGITS). */
const bignumCast = (x: string) =>
  `CASE WHEN strlen(${x}) <= ${MAX_BIGNUM_DIGITS + 1} THEN TRY_CAST(${x} AS BIGNUM) END`;

/**
 * Checks are CASE conditions, never AND/OR inside a value: DuckDB evaluates both sides of a
 * conjunction computed as a value, while CASE conditions run on the rows still undecided
 * (measured: a DOUBLE check written with OR cost 600 ms per 767k values, as CASE 150 ms).
 * Each column's expression is kept small too: planning costs ~0.1 ms per CASE, which a
 * 10,000-column upload pays for every column.
 */
const RULES: Record<Exclude<Kind, 'VARCHAR' | 'NULL' | 'DECIMAL' | 'BOOLEAN'>, Rule> = {
  // An integer's own print is its canonical text: cheaper than the shape test (measured).
  BIGINT: { cast: castTo('BIGINT'), usesValue: true, check: (x, t) => `CAST(${t} AS VARCHAR) = ${x}` },
  HUGEINT: { cast: castTo('HUGEINT'), check: (x) => matches(x, INTEGER) },
  BIGNUM: { cast: bignumCast, check: (x) => matches(x, INTEGER) },
  DOUBLE: {
    cast: castTo('DOUBLE'),
    usesValue: true,
    // The text is the value's shortest print as JSON prints it (yyjson's shortest round-trip
    // print, JavaScript's style: `0.14285714285714285`, `1e21`, `1.5e-7`; ~40 ns a value,
    // measured, against ~120 ns for CAST(double AS VARCHAR)); or, up to 15 characters, of a
    // number's shape: at most 15 significant digits, which a double in its normal range
    // always gives back (`100`, `1.50`); or it has the digits of DuckDB's print.
    check: (x, t) =>
      `CASE WHEN NOT isfinite(${t}) THEN false
            WHEN CAST(to_json(${t}) AS VARCHAR) = ${x} THEN true
            WHEN strlen(${x}) <= 15 AND abs(${t}) >= ${MIN_NORMAL_DOUBLE} THEN ${matches(x, NUMBER)}
            WHEN ${matches(x, NUMBER)} THEN ${digitsOf(x)} = ${digitsOf(`CAST(${t} AS VARCHAR)`)}
            ELSE false END`,
  },
  // DuckDB prints a date as YYYY-MM-DD (year 0 as 0001-01-01 (BC)): its own print or no date.
  DATE: { cast: castTo('DATE'), usesValue: true, check: (x, t) => `CAST(${t} AS VARCHAR) = ${x}` },
  TIMESTAMP: { cast: castTo('TIMESTAMP'), check: (x) => matches(x, TIMESTAMP) },
  TIMESTAMPTZ: { cast: castTo('TIMESTAMPTZ'), check: (x) => matches(x, TIMESTAMPTZ) },
};

/**
 * `check` as a condition on its own: the cast succeeded and the text is its value's. A cast
 * that fails is slow, so a check on the text alone goes first.
 */
const fits = (kind: keyof typeof RULES, x: string, t: string) =>
  RULES[kind].usesValue
    ? `${t} IS NOT NULL AND coalesce(${RULES[kind].check(x, t)}, false)`
    : `${RULES[kind].check(x, t)} AND ${t} IS NOT NULL`;

/** In order of preference: a column gets the first type all its values fit. */
const TYPE_ORDER = [
  'BOOLEAN',
  'BIGINT',
  'HUGEINT',
  'BIGNUM',
  'DOUBLE',
  'DECIMAL',
  'DATE',
  'TIMESTAMP',
  'TIMESTAMPTZ',
] as const;

const bit = (kind: (typeof TYPE_ORDER)[number]) => 1 << TYPE_ORDER.indexOf(kind);

/**
 * Per non-NULL value `x`: the bitmask of the types it fits (bit i: TYPE_ORDER[i]), and the
 * digits of a plain decimal before and after its point (NULL otherwise). The inference
 * aggregates these per column. The text's family is told first (a number, a date or time,
 * a boolean), so each value meets a few tests, not every type's: an integer's size says most
 * of its bits (an integer too long for BIGNUM is text, never a double), and a cast runs only
 * where the text has its type's shape (a cast that fails is slow in DuckDB). `asDouble` is
 * `doubleOf(x)`, computed once in a projection below: an expression repeated inside CASE is
 * evaluated each time.
 */
export function fitsMask(
  x: string,
  asDouble: string,
): { mask: string; integerDigits: string; fractionDigits: string } {
  const digits = `strlen(ltrim(${x}, '-'))`;
  const double = `CASE WHEN ${fits('DOUBLE', x, asDouble)} THEN ${bit('DOUBLE')} ELSE 0 END`;
  // At the limits, the digits compare as text: a cast that overflows is slow.
  const within = (limit: bigint) =>
    `CASE WHEN starts_with(${x}, '-') THEN ltrim(${x}, '-') <= '${-(-limit - 1n)}' ELSE ${x} <= '${limit}' END`;
  const wide = bit('HUGEINT') | bit('BIGNUM') | bit('DECIMAL');
  const integerBits = `CASE WHEN ${digits} <= 18 THEN ${wide | bit('BIGINT')}
        WHEN ${digits} = 19 THEN ${wide} + CASE WHEN ${within(2n ** 63n - 1n)} THEN ${bit('BIGINT')} ELSE 0 END
        WHEN ${digits} <= 38 THEN ${wide}
        WHEN ${digits} = 39 THEN ${bit('BIGNUM')} + CASE WHEN ${within(2n ** 127n - 1n)} THEN ${bit('HUGEINT')} ELSE 0 END
        ELSE ${bit('BIGNUM')} END`;
  const decimalBit = `CASE WHEN ${matches(x, DECIMAL)} AND ${integerDigits(x)} + ${fractionDigits(x)} <= ${MAX_DECIMAL_PRECISION} THEN ${bit('DECIMAL')} ELSE 0 END`;
  // A date's shape first: a cast of a timestamp's text to DATE fails, slowly.
  const temporal = (kind: 'DATE' | 'TIMESTAMP' | 'TIMESTAMPTZ') =>
    `CASE WHEN ${kind === 'DATE' ? `${matches(x, DAY)} AND ` : ''}${fits(kind, x, castTo(kind)(x))} THEN ${bit(kind)} ELSE 0 END`;
  const mask = `CASE
      WHEN ${matches(x, INTEGER)} THEN CASE WHEN ${digits} <= ${MAX_BIGNUM_DIGITS} THEN ${double} + ${integerBits} ELSE 0 END
      WHEN ${matches(x, NUMBER)} THEN ${double} + ${decimalBit}
      WHEN ${matches(x, `${DAY}.*`)} THEN ${temporal('DATE')} + ${temporal('TIMESTAMP')} + ${temporal('TIMESTAMPTZ')}
      WHEN lower(${x}) IN ('true', 'false') THEN ${bit('BOOLEAN')}
      ELSE 0 END`;
  const isDecimal = matches(x, DECIMAL);
  return {
    mask,
    integerDigits: `CASE WHEN ${isDecimal} THEN ${integerDigits(x)} END`,
    fractionDigits: `CASE WHEN ${isDecimal} THEN ${fractionDigits(x)} END`,
  };
}

/** The double of text `x`, for `fitsMask`. */
export const doubleOf = (x: string) => castTo('DOUBLE')(x);

export interface ColumnFit {
  /** AND of the masks of the column's non-NULL values; undefined when it has none. */
  mask: number | undefined;
  maxIntegerDigits: number;
  maxFractionDigits: number;
}

/** The type of a column from its aggregated fits; `NULL` when it had no value. */
export function typeFromFit(fit: ColumnFit): InferredType {
  if (fit.mask === undefined) return { kind: 'NULL' };
  const mask = fit.mask;
  const kind = TYPE_ORDER.find((k) => (mask & bit(k)) !== 0);
  if (kind === undefined) return { kind: 'VARCHAR' };
  if (kind !== 'DECIMAL') return { kind };
  const scale = fit.maxFractionDigits;
  const precision = fit.maxIntegerDigits + scale;
  if (precision > MAX_DECIMAL_PRECISION) return { kind: 'VARCHAR' };
  // At least one integer digit where it fits: DuckDB prints DECIMAL(2,2) 0.5 as `.50`.
  return {
    kind,
    precision: Math.min(Math.max(fit.maxIntegerDigits, 1) + scale, MAX_DECIMAL_PRECISION),
    scale,
  };
}

/** The cast the check of a value needs, computed once in a projection below the conversion. */
export function castExpression(type: InferredType, x: string): string | undefined {
  if (type.kind === 'VARCHAR' || type.kind === 'NULL' || type.kind === 'BOOLEAN' || type.kind === 'DECIMAL')
    return undefined;
  const rule = RULES[type.kind];
  return rule.usesValue ? rule.cast(x) : undefined;
}

/**
 * Text to DECIMAL(p,s). DuckDB parses text of more than 17 integer digits into a wide
 * decimal ~100 times slower than into HUGEINT (measured, 1.5: 28 µs a value against 0.3),
 * so such text is put together from its integer part, cast to HUGEINT, and its fraction.
 */
function decimalCast(type: { precision: number; scale: number }, x: string): string {
  const decimal = `DECIMAL(${type.precision},${type.scale})`;
  if (type.precision - type.scale <= 17) return `TRY_CAST(${x} AS ${decimal})`;
  const whole = `split_part(${x}, '.', 1)`;
  const integer = `TRY_CAST(CASE WHEN ${whole} IN ('', '-') THEN '0' ELSE ${whole} END AS HUGEINT)`;
  const fraction = `TRY_CAST('0.' || split_part(${x}, '.', 2) AS ${decimal})`;
  const sign = `CASE WHEN starts_with(${x}, '-') THEN -1 ELSE 1 END`;
  return `CASE WHEN contains(${x}, '.') THEN TRY_CAST(${integer} AS ${decimal}) + ${sign} * ${fraction} ELSE TRY_CAST(TRY_CAST(${x} AS HUGEINT) AS ${decimal}) END`;
}

/**
 * The stored value of text `x` (NULL stays NULL), or NULL when the text does not fit the
 * type; `t` is `castExpression`'s value, where it has one. A NULL from non-NULL text is a
 * misfit: the loader counts those and widens the column.
 */
export function convertExpression(type: InferredType, x: string, t: string): string {
  switch (type.kind) {
    case 'VARCHAR':
      return x;
    case 'NULL':
      return 'CAST(NULL AS VARCHAR)';
    case 'BOOLEAN':
      return `CASE WHEN ${x} = 'true' THEN true WHEN ${x} = 'false' THEN false WHEN lower(${x}) = 'true' THEN true WHEN lower(${x}) = 'false' THEN false END`;
    case 'DECIMAL':
      return `CASE WHEN ${matches(x, DECIMAL)} AND ${fractionDigits(x)} <= ${type.scale} THEN ${decimalCast(type, x)} END`;
    default: {
      const rule = RULES[type.kind];
      return rule.usesValue
        ? `CASE WHEN ${rule.check(x, t)} THEN ${t} END`
        : `CASE WHEN ${rule.check(x, x)} THEN ${rule.cast(x)} END`;
    }
  }
}

export const sourceColumn = (i: number) => quoteIdentifier(`c${i}`);

/** A type as the service shows it (the list's `columns`, the upload's answer): DuckDB's name in lower case. */
export function shownType(type: InferredType): string {
  if (type.kind === 'TIMESTAMPTZ') return 'timestamp with time zone';
  return sqlType(type).toLowerCase();
}

const NAMED_TYPES: Record<string, InferredType> = {
  varchar: { kind: 'VARCHAR' },
  text: { kind: 'VARCHAR' },
  boolean: { kind: 'BOOLEAN' },
  bigint: { kind: 'BIGINT' },
  hugeint: { kind: 'HUGEINT' },
  bignum: { kind: 'BIGNUM' },
  double: { kind: 'DOUBLE' },
  date: { kind: 'DATE' },
  timestamp: { kind: 'TIMESTAMP' },
  timestamptz: { kind: 'TIMESTAMPTZ' },
  'timestamp with time zone': { kind: 'TIMESTAMPTZ' },
};

export const TYPE_NAMES =
  'varchar, boolean, bigint, hugeint, bignum, double, decimal(p,s) (p 1 to 38), date, timestamp, timestamp with time zone';

/** A column type a client pins (`types`), by the names `shownType` gives; undefined when it is none. */
export function parseTypeName(text: string): InferredType | undefined {
  const name = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const named = NAMED_TYPES[name];
  if (named) return named;
  const decimal = /^decimal\s*\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)$/.exec(name);
  if (!decimal) return undefined;
  const precision = Number(decimal[1]);
  const scale = Number(decimal[2]);
  if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) return undefined;
  return { kind: 'DECIMAL', precision, scale };
}

/**
 * Whether a value's fit (`fitsMask`'s mask and digits, as SQL) fits `type`: the SQL the
 * widening report asks of each value.
 */
export function fitsTypeCondition(
  mask: string,
  integerDigits: string,
  fractionDigits: string,
  type: InferredType,
): string {
  if (type.kind === 'VARCHAR' || type.kind === 'NULL') return 'true';
  if (type.kind !== 'DECIMAL') return `(${mask} & ${bit(type.kind)}) <> 0`;
  return `((${mask} & ${bit('DECIMAL')}) <> 0 AND coalesce(${integerDigits}, 0) <= ${type.precision - type.scale} AND coalesce(${fractionDigits}, 0) <= ${type.scale})`;
}
