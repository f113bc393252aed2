import type { ComparisonOperator } from './ast.js';
import { MAX_NUMBER_DIGITS } from './limits.js';

/**
 * A number as the client wrote it, exactly: `units / 10^scale`. Integer, decimal and bignum
 * columns are compared against this, never against a JS double, so that `2^63 - 1`,
 * `12345678901234.5678` or a 256-bit amount keep every digit.
 */
export interface ExactNumber {
  units: bigint;
  scale: number;
}

const NUMBER_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** `undefined`: not a number; `'out-of-range'`: a number with more than MAX_NUMBER_DIGITS digits. */
export function parseExactNumber(text: string): ExactNumber | 'out-of-range' | undefined {
  const match = NUMBER_TEXT.exec(text);
  if (match === null) {
    return undefined;
  }
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  if (whole === '' && fraction === '') {
    return undefined;
  }
  const digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') {
    return { units: 0n, scale: 0 };
  }
  const exponent = Number(exponentText);
  const scale = fraction.length - exponent;
  // Digits before the point and after it, once the exponent is applied.
  if (digits.length - scale > MAX_NUMBER_DIGITS || scale > MAX_NUMBER_DIGITS) {
    return 'out-of-range';
  }
  let units = BigInt(sign + digits);
  if (scale <= 0) {
    return { units: units * 10n ** BigInt(-scale), scale: 0 };
  }
  let normalised = scale;
  while (normalised > 0 && units % 10n === 0n) {
    units /= 10n;
    normalised--;
  }
  return { units, scale: normalised };
}

/** The value in units of `10^-scale`, rounded down and up; equal when it is exact at that scale. */
export function unitsAtScale(x: ExactNumber, scale: number): { floor: bigint; ceil: bigint } {
  if (x.scale <= scale) {
    const units = x.units * 10n ** BigInt(scale - x.scale);
    return { floor: units, ceil: units };
  }
  const divisor = 10n ** BigInt(x.scale - scale);
  const quotient = x.units / divisor; // truncates toward zero
  const remainder = x.units % divisor;
  if (remainder === 0n) {
    return { floor: quotient, ceil: quotient };
  }
  return remainder > 0n ? { floor: quotient, ceil: quotient + 1n } : { floor: quotient - 1n, ceil: quotient };
}

/** Decimal text of `units / 10^scale`, e.g. (15000n, 4) → `1.5000`. */
export function formatUnits(units: bigint, scale: number): string {
  if (scale === 0) {
    return units.toString();
  }
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * The values an exact column can hold, in units of `10^-scale`: integers have scale 0 and
 * their type's range, DECIMAL(p,s) has scale s and ±(10^p − 1), BIGNUM has no bounds.
 */
export interface ExactDomain {
  scale: number;
  min?: bigint;
  max?: bigint;
}

/** A comparison rewritten so that its bound fits the column's type, or decided for every non-NULL value. */
export type LoweredComparison =
  | { kind: 'compare'; operator: ComparisonOperator; units: bigint }
  | { kind: 'always'; value: boolean };

/**
 * Rewrites `column <op> x` so that the bound is a value of the column's own type: a
 * fraction or an out-of-range number would otherwise have to be cast to some wider type,
 * which DuckDB does inexactly (via DOUBLE) or not at all. For an integer column `> 1.5`
 * means `> 1` and `>= 1.5` means `>= 2`; `= 1.5` holds for no value.
 */
export function lowerComparison(
  operator: ComparisonOperator,
  x: ExactNumber,
  domain: ExactDomain,
): LoweredComparison {
  const { floor, ceil } = unitsAtScale(x, domain.scale);
  const { min, max } = domain;
  const above = (k: bigint) => max !== undefined && k > max;
  const below = (k: bigint) => min !== undefined && k < min;
  switch (operator) {
    case '=':
    case '<>': {
      const representable = floor === ceil && !above(floor) && !below(floor);
      return representable
        ? { kind: 'compare', operator, units: floor }
        : { kind: 'always', value: operator === '<>' };
    }
    case '<':
    case '>=': {
      // column < x  ⟺  column < ceil(x)
      if (above(ceil)) {
        return { kind: 'always', value: operator === '<' };
      }
      if (below(ceil) || (min !== undefined && ceil === min)) {
        return { kind: 'always', value: operator === '>=' };
      }
      return { kind: 'compare', operator, units: ceil };
    }
    case '<=':
    case '>': {
      // column <= x  ⟺  column <= floor(x)
      if (below(floor)) {
        return { kind: 'always', value: operator === '>' };
      }
      if (above(floor) || (max !== undefined && floor === max)) {
        return { kind: 'always', value: operator === '<=' };
      }
      return { kind: 'compare', operator, units: floor };
    }
  }
}

/** The units of `x` if the column can hold it exactly, for `IN` lists: other items can never match. */
export function exactUnits(x: ExactNumber, domain: ExactDomain): bigint | undefined {
  const lowered = lowerComparison('=', x, domain);
  return lowered.kind === 'compare' ? lowered.units : undefined;
}

/** `BETWEEN low AND high` as the whole-unit range it selects, clamped to the domain; undefined when empty. */
export function lowerRange(
  low: ExactNumber,
  high: ExactNumber,
  domain: ExactDomain,
): { low: bigint; high: bigint } | undefined {
  let from = unitsAtScale(low, domain.scale).ceil;
  let to = unitsAtScale(high, domain.scale).floor;
  if (domain.min !== undefined && from < domain.min) {
    from = domain.min;
  }
  if (domain.max !== undefined && to > domain.max) {
    to = domain.max;
  }
  return from > to ? undefined : { low: from, high: to };
}
