/**
 * PostgreSQL's text output of values (DateStyle ISO, IntervalStyle postgres, TimeZone UTC,
 * bytea_output hex, extra_float_digits ≥ 1), written from DuckDB's values. Each format was
 * compared with PostgreSQL 15's own output (test/pgwire/text-values.test.ts pins them).
 */

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : '0'.repeat(width - text.length) + text;
}

/**
 * The shortest digits that read back as `x` and the decimal exponent of the first, from
 * JavaScript's own shortest round-trip printing (ECMA-262 Number::toString), which picks
 * the same digits as PostgreSQL's Ryu (shortest, then closest).
 */
function shortestDigits(text: string): { digits: string; exponent: number } {
  const e = text.indexOf('e');
  if (e >= 0) {
    const mantissa = text.slice(0, e).replace('.', '');
    return { digits: mantissa, exponent: Number(text.slice(e + 1)) };
  }
  const dot = text.indexOf('.');
  if (dot < 0) {
    const digits = text.replace(/0+$/, '');
    return { digits: digits === '' ? '0' : digits, exponent: text.length - 1 };
  }
  const whole = text.slice(0, dot);
  const fraction = text.slice(dot + 1);
  if (whole !== '0') return { digits: (whole + fraction).replace(/0+$/, ''), exponent: whole.length - 1 };
  const zeros = fraction.length - fraction.replace(/^0+/, '').length;
  return { digits: fraction.slice(zeros), exponent: -(zeros + 1) };
}

/** PostgreSQL's layout of shortest digits: fixed for exponents in [-4, fixedBelow), else `d.ddde±XX`. */
function layout(negative: boolean, digits: string, exponent: number, fixedBelow: number): string {
  const sign = negative ? '-' : '';
  if (exponent >= -4 && exponent < fixedBelow) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    if (digits.length <= exponent + 1) return sign + digits + '0'.repeat(exponent + 1 - digits.length);
    return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const magnitude = Math.abs(exponent);
  return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude < 10 ? `0${magnitude}` : magnitude}`;
}

function special(x: number): string | undefined {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  return undefined;
}

/** The decimal `digits × 10^(exponent − digits.length + 1)` as JavaScript reads it. */
const decimalNumber = (d: Digits) => Number(`${d.digits}e${d.exponent - d.digits.length + 1}`);

interface Digits {
  digits: string;
  exponent: number;
}

/** The exact value's significant digits (JavaScript prints up to 100; more never matter here). */
function exactDigits(magnitude: number): Digits {
  const { digits, exponent } = shortestDigits(magnitude.toPrecision(100));
  return { digits: digits.replace(/0+$/, '') || '0', exponent };
}

/** `magnitude` rounded to `precision` significant digits, ties to even (toPrecision rounds them up). */
function roundedDigits(magnitude: number, precision: number): Digits {
  const exact = exactDigits(magnitude);
  if (exact.digits.length === precision + 1 && exact.digits.endsWith('5')) {
    const down = exact.digits.slice(0, precision);
    if (Number(down[precision - 1]) % 2 === 0)
      return { digits: down.replace(/0+$/, '') || '0', exponent: exact.exponent };
  }
  const rounded = shortestDigits(magnitude.toPrecision(precision));
  return { digits: rounded.digits.replace(/0+$/, '') || '0', exponent: rounded.exponent };
}

/** The distances to the neighbouring values of the same width, below and above. */
function neighbourGaps(magnitude: number, single: boolean): { below: number; above: number } {
  if (single) {
    const bits = new Uint32Array(new Float32Array([magnitude]).buffer);
    const at = bits[0] as number;
    const value = (b: number) => new Float32Array(new Uint32Array([b]).buffer)[0] as number;
    const above = value(at + 1) - magnitude;
    return {
      below: magnitude - value(at - 1),
      above: Number.isFinite(above) ? above : magnitude - value(at - 1),
    };
  }
  const bits = new BigUint64Array(new Float64Array([magnitude]).buffer);
  const at = bits[0] as bigint;
  const value = (b: bigint) => new Float64Array(new BigUint64Array([b]).buffer)[0] as number;
  const above = value(at + 1n) - magnitude;
  // The largest value's interval ends half a gap above it, as its lower one does.
  return {
    below: magnitude - value(at - 1n),
    above: Number.isFinite(above) ? above : magnitude - value(at - 1n),
  };
}

/**
 * Whether the decimal lies exactly on an end of the interval of values that read back as
 * `magnitude`. PostgreSQL's Ryu excludes the ends (acceptBounds false in its d2s.c and
 * f2s.c) where JavaScript's printing may pick one: measured against PostgreSQL 15,
 * 5.6486363e19 prints there as 5.6486363000000004e+19, and the float4 8.46e9 as 8.4600003e+09.
 */
function onBoundary(candidate: Digits, magnitude: number, single: boolean): boolean {
  const { below, above } = neighbourGaps(magnitude, single);
  if (!single) {
    // Below 2^53 an end needs more than 17 digits; above, every value and end is an integer.
    if (magnitude < 2 ** 53) return false;
    const power = candidate.exponent - candidate.digits.length + 1;
    if (power < 0) return false;
    const decimal = 2n * BigInt(candidate.digits) * 10n ** BigInt(power);
    const exact = 2n * BigInt(magnitude);
    return decimal === exact - BigInt(below) || decimal === exact + BigInt(above);
  }
  const read = decimalNumber(candidate);
  for (const end of [magnitude - below / 2, magnitude + above / 2]) {
    if (read !== end) continue;
    const exact = exactDigits(end);
    if (exact.digits === candidate.digits && exact.exponent === candidate.exponent) return true;
  }
  return false;
}

/** The shortest digits PostgreSQL prints: inside the round-trip interval, closest, ties to even. */
function pgShortest(magnitude: number, single: boolean, from: number): Digits {
  const maxDigits = single ? 9 : 17;
  for (let precision = from; precision < maxDigits; precision++) {
    const candidate = roundedDigits(magnitude, precision);
    const read = decimalNumber(candidate);
    if ((single ? Math.fround(read) : read) === magnitude && !onBoundary(candidate, magnitude, single))
      return candidate;
  }
  return roundedDigits(magnitude, maxDigits);
}

/** float8: shortest round-trip digits, fixed notation for 1e-4 ≤ |x| < 1e15. */
export function float8Text(x: number): string {
  const magnitude = Math.abs(x);
  // JavaScript prints fixed notation for 1e-7 ≤ |x| < 1e21: the same text inside PostgreSQL's range.
  if (magnitude >= 1e-4 && magnitude < 1e15) return String(x);
  const named = special(x);
  if (named !== undefined) return named;
  let digits = shortestDigits(String(magnitude));
  if (onBoundary(digits, magnitude, false)) digits = pgShortest(magnitude, false, digits.digits.length + 1);
  return layout(x < 0, digits.digits, digits.exponent, 15);
}

/** float4: the shortest digits that read back as the same 32-bit float, fixed for 1e-4 ≤ |x| < 1e6. */
export function float4Text(x: number): string {
  const named = special(x);
  if (named !== undefined) return named;
  const { digits, exponent } = pgShortest(Math.abs(x), true, 1);
  return layout(x < 0, digits, exponent, 6);
}

/** DuckDB's DATE infinities (int32 max and its negation). */
const DATE_INFINITY = 2147483647;
/** DuckDB's TIMESTAMP infinities: int64 max and -(int64 max). */
const TIMESTAMP_INFINITY = 9223372036854775807n;

/** Year, month, day of a count of days since 1970-01-01 (proleptic Gregorian; H. Hinnant's civil_from_days). */
function civil(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** `YYYY-MM-DD` and whether it is BC (year 0 is 1 BC, as PostgreSQL writes it). */
function dateParts(days: number): { text: string; bc: boolean } {
  const { year, month, day } = civil(days);
  const bc = year <= 0;
  return { text: `${pad(bc ? 1 - year : year, 4)}-${pad2(month)}-${pad2(day)}`, bc };
}

export function dateText(days: number): string {
  if (days === DATE_INFINITY) return 'infinity';
  if (days === -DATE_INFINITY) return '-infinity';
  const { text, bc } = dateParts(days);
  return bc ? `${text} BC` : text;
}

/** `HH:MM:SS[.ffffff]`, trailing zeros of the fraction dropped. */
function clockText(microsOfDay: number): string {
  const seconds = Math.floor(microsOfDay / 1_000_000);
  const fraction = microsOfDay - seconds * 1_000_000;
  const clock = `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`;
  return fraction === 0 ? clock : `${clock}.${pad(fraction, 6).replace(/0+$/, '')}`;
}

export function timeText(micros: number): string {
  return clockText(micros);
}

/** A timestamp in microseconds since 1970 (UTC for timestamptz, which gets `+00`). */
export function timestampText(micros: bigint, withZone: boolean): string {
  if (micros === TIMESTAMP_INFINITY) return 'infinity';
  if (micros === -TIMESTAMP_INFINITY) return '-infinity';
  const day = 86_400_000_000n;
  let days = micros / day;
  let rest = micros % day;
  if (rest < 0n) {
    days -= 1n;
    rest += day;
  }
  const { text, bc } = dateParts(Number(days));
  return `${text} ${clockText(Number(rest))}${withZone ? '+00' : ''}${bc ? ' BC' : ''}`;
}

/** `+HH[:MM[:SS]]` of an offset east of UTC in seconds, as PostgreSQL writes a timetz's. */
export function zoneOffsetText(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const magnitude = Math.abs(seconds);
  const hours = Math.floor(magnitude / 3600);
  const minutes = Math.floor(magnitude / 60) % 60;
  const secs = magnitude % 60;
  return `${sign}${pad2(hours)}${minutes || secs ? `:${pad2(minutes)}` : ''}${secs ? `:${pad2(secs)}` : ''}`;
}

/** PostgreSQL's interval output (IntervalStyle postgres), e.g. `1 year 2 mons -3 days +04:05:06.5`. */
export function intervalText(months: number, days: number, micros: bigint): string {
  const parts: string[] = [];
  let before = false;
  const add = (value: number, unit: string) => {
    if (value === 0) return;
    parts.push(`${before && value > 0 ? '+' : ''}${value} ${unit}${value !== 1 ? 's' : ''}`);
    before = value < 0;
  };
  add(Math.trunc(months / 12), 'year');
  add(months % 12, 'mon');
  add(days, 'day');
  if (parts.length === 0 || micros !== 0n) {
    const negative = micros < 0n;
    const magnitude = negative ? -micros : micros;
    const hours = magnitude / 3_600_000_000n;
    const rest = Number(magnitude % 3_600_000_000n);
    const clock = clockText(rest);
    parts.push(`${negative ? '-' : before ? '+' : ''}${pad2(Number(hours))}${clock.slice(2)}`);
  }
  return parts.join(' ');
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** bytea's hex output: `\x` and two lowercase digits a byte. */
export function byteaText(bytes: Uint8Array): string {
  let text = '\\x';
  for (const byte of bytes) text += HEX[byte];
  return text;
}

/** An element of an array literal, quoted when PostgreSQL would quote it. */
export function arrayElementText(text: string | null): string {
  if (text === null) return 'NULL';
  if (text === '' || /[{}",\\\s]/.test(text) || text.toUpperCase() === 'NULL')
    return `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return text;
}
