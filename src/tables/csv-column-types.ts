/**
 * Type inference for uploaded CSV columns, done by DuckDB over the text values.
 *
 * Each type has one predicate ("this text is exactly a value of the type, nothing lost")
 * used both to infer a column's type over a sample and, while loading, to check every
 * value: a value that fails the check stops the load, which is then redone with types
 * inferred from all rows. So a later row never fails the upload nor loses data: it widens
 * its column, at worst to VARCHAR.
 *
 * The predicates are regular expressions first: DuckDB's casts are lenient (`' 5'`, `'1_000'`,
 * `'007'` and `'.5'` all cast to BIGINT, an offset in a timestamp is silently dropped), and a
 * failing TRY_CAST is also slow. A cast runs only on text the expression has let through.
 */

export type InferredType =
  | { kind: 'BOOLEAN' | 'BIGINT' | 'HUGEINT' | 'DOUBLE' | 'DATE' | 'TIMESTAMP' | 'VARCHAR' }
  | { kind: 'DECIMAL'; precision: number; scale: number };

export function sqlType(type: InferredType): string {
  return type.kind === 'DECIMAL' ? `DECIMAL(${type.precision},${type.scale})` : type.kind;
}

/** The message DuckDB raises when a loaded value does not fit the inferred type. */
export const WIDEN_MARKER = 'csv-value-needs-wider-type';

const INTEGER_RE = '-?(0|[1-9][0-9]*)';
const DECIMAL_RE = '-?(0|[1-9][0-9]*)(\\.[0-9]+)?';
const NUMBER_RE = '-?((0|[1-9][0-9]*)(\\.[0-9]+)?|\\.[0-9]+)([eE][+-]?[0-9]+)?';
const DATE_RE = '[0-9]{4}-[0-9]{2}-[0-9]{2}';
const TIMESTAMP_RE = '[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?( UTC|Z)?';
/** A double holds any decimal of 15 significant digits exactly. */
const DOUBLE_DIGITS = 15;
const MAX_DECIMAL_PRECISION = 38;

const matches = (x: string, re: string) => `regexp_full_match(${x}, '${re}')`;

/** Significant digits of a number's text, leading and trailing zeros aside. */
const significantDigits = (x: string) =>
  `length(trim(regexp_replace(regexp_replace(${x}, '[eE].*$', ''), '[^0-9]', '', 'g'), '0'))`;

/** Canonical text of an integer: what the cast value prints back as (rules out `-0`, `007`, `+5`). */
const roundTrips = (x: string, type: string) => `CAST(TRY_CAST(${x} AS ${type}) AS VARCHAR) = ${x}`;

/**
 * Whether text `x` is exactly a value of the type. The regular expression goes first: it is
 * cheap, and a TRY_CAST that fails is slow.
 */
const PREDICATES = {
  BOOLEAN: (x: string) => `lower(${x}) IN ('true', 'false')`,
  BIGINT: (x: string) => `CASE WHEN ${matches(x, INTEGER_RE)} THEN ${roundTrips(x, 'BIGINT')} ELSE false END`,
  HUGEINT: (x: string) =>
    `CASE WHEN ${matches(x, INTEGER_RE)} THEN ${roundTrips(x, 'HUGEINT')} ELSE false END`,
  DOUBLE: (x: string) =>
    `CASE WHEN ${matches(x, NUMBER_RE)} THEN (length(${x}) <= ${DOUBLE_DIGITS} OR ${significantDigits(x)} <= ${DOUBLE_DIGITS}) AND isfinite(TRY_CAST(${x} AS DOUBLE)) ELSE false END`,
  DATE: (x: string) =>
    `CASE WHEN ${matches(x, DATE_RE)} THEN TRY_CAST(${x} AS DATE) IS NOT NULL ELSE false END`,
  TIMESTAMP: (x: string) =>
    `CASE WHEN ${matches(x, TIMESTAMP_RE)} THEN TRY_CAST(${x} AS TIMESTAMP) IS NOT NULL ELSE false END`,
};

/** `cheap OR full`, where the full test runs only for values the cheap one did not pass. */
const firstOr = (cheap: string, full: string) => `CASE WHEN ${cheap} THEN true ELSE ${full} END`;

/**
 * The checks while loading, where nearly every value passes: first the cheap question
 * "is this text exactly how DuckDB prints the cast value?" (true for canonical integers,
 * doubles and timestamps, and lossless by construction), and only for the other values
 * the full predicate. Each accepts at least what its predicate accepts, so types inferred
 * from all rows always load.
 */
const LOAD_CHECKS: Record<Candidate, (x: string) => string> = {
  BOOLEAN: (x) => firstOr(`${x} = 'true' OR ${x} = 'false'`, PREDICATES.BOOLEAN(x)),
  BIGINT: (x) => roundTrips(x, 'BIGINT'),
  HUGEINT: (x) => roundTrips(x, 'HUGEINT'),
  DOUBLE: (x) => firstOr(roundTrips(x, 'DOUBLE'), PREDICATES.DOUBLE(x)),
  DATE: (x) => firstOr(roundTrips(x, 'DATE'), PREDICATES.DATE(x)),
  TIMESTAMP: (x) => firstOr(roundTrips(x, 'TIMESTAMP'), PREDICATES.TIMESTAMP(x)),
};

/** In order of preference: the first type every value fits wins. */
const CANDIDATES = ['BOOLEAN', 'BIGINT', 'HUGEINT', 'DOUBLE', 'DATE', 'TIMESTAMP'] as const;
type Candidate = (typeof CANDIDATES)[number];

/** Digits before and after the point of a plain decimal. */
const integerDigits = (x: string) => `length(split_part(ltrim(${x}, '-'), '.', 1))`;
const fractionDigits = (x: string) => `length(split_part(${x}, '.', 2))`;

/**
 * Aggregates over the source columns whose single result row `readInference` turns into
 * types. For each column: does every non-null value fit each candidate type, and the
 * shape of its decimals, should DOUBLE not hold them.
 */
export function inferenceSelectList(sourceColumns: readonly string[]): string {
  return sourceColumns
    .map((x, i) => {
      const nonNull = `FILTER (WHERE ${x} IS NOT NULL)`;
      // A predicate may be NULL where a cast fails; that must count as "does not fit".
      const fits = CANDIDATES.map(
        (type) => `bool_and(coalesce(${PREDICATES[type](x)}, false)) ${nonNull} AS "t${i}_${type}"`,
      );
      const isDecimal = `${matches(x, DECIMAL_RE)}`;
      return [
        ...fits,
        `bool_and(${isDecimal}) ${nonNull} AS "t${i}_DECIMAL"`,
        `max(CASE WHEN ${isDecimal} THEN ${integerDigits(x)} END) AS "t${i}_int"`,
        `max(CASE WHEN ${isDecimal} THEN ${fractionDigits(x)} END) AS "t${i}_frac"`,
      ].join(', ');
    })
    .join(', ');
}

export function readInference(row: Record<string, unknown>, columnCount: number): InferredType[] {
  const types: InferredType[] = [];
  for (let i = 0; i < columnCount; i++) {
    const candidate = CANDIDATES.find((type) => row[`t${i}_${type}`] === true);
    if (candidate) {
      types.push({ kind: candidate });
      continue;
    }
    const integer = Number(row[`t${i}_int`] ?? 0);
    const scale = Number(row[`t${i}_frac`] ?? 0);
    if (row[`t${i}_DECIMAL`] === true && integer + scale <= MAX_DECIMAL_PRECISION) {
      types.push({ kind: 'DECIMAL', precision: Math.max(integer + scale, 1), scale });
    } else {
      types.push({ kind: 'VARCHAR' });
    }
  }
  return types;
}

/**
 * The expression that turns source text `x` into the column's value, raising WIDEN_MARKER
 * (with the column's index) for a value that does not fit.
 */
export function conversion(x: string, type: InferredType, index: number): string {
  if (type.kind === 'VARCHAR') return x;
  const fits =
    type.kind === 'DECIMAL'
      ? `${matches(x, DECIMAL_RE)} AND ${integerDigits(x)} <= ${type.precision - type.scale} AND ${fractionDigits(x)} <= ${type.scale}`
      : LOAD_CHECKS[type.kind](x);
  // The same TRY_CAST as in the check: DuckDB computes a repeated expression once.
  const value = type.kind === 'BOOLEAN' ? `lower(${x}) = 'true'` : `TRY_CAST(${x} AS ${sqlType(type)})`;
  return `CASE WHEN ${x} IS NULL THEN NULL WHEN ${fits} THEN ${value} ELSE error('${WIDEN_MARKER}:${index}') END`;
}
