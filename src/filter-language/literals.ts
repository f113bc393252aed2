/**
 * Reading literals for typed columns. Everything is validated here, in JS, so that a value
 * that reaches DuckDB always casts cleanly: a bad date is the client's 400, not DuckDB's error.
 */

const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Number syntax of the language, also used for quoted numbers such as `'5'`. */
export function isNumberText(text: string): boolean {
  return NUMBER_TEXT.test(text);
}

/** A double from number syntax, or from the words a result uses for non-finite doubles. */
export function parseDouble(text: string): number | undefined {
  const trimmed = text.trim();
  if (isNumberText(trimmed)) {
    return Number(trimmed);
  }
  if (/^nan$/i.test(trimmed)) {
    return Number.NaN;
  }
  const infinity = /^([+-]?)(?:inf|infinity)$/i.exec(trimmed);
  if (infinity !== null) {
    return infinity[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  return undefined;
}

export function parseBoolean(text: string): boolean | undefined {
  const lower = text.trim().toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
}

/** `0x…` with an even number of hex digits, as a result shows varbinary; lowercase digits. */
export function parseHexBytes(text: string): string | undefined {
  const match = /^0x((?:[0-9a-f]{2})*)$/i.exec(text.trim());
  return match?.[1]?.toLowerCase();
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function validDate(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** `YYYY-MM-DD`, a real calendar date in years 0001–9999. */
export function parseDate(text: string): string | undefined {
  const trimmed = text.trim();
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(trimmed);
  if (match === null || !validDate(Number(match[1]), Number(match[2]), Number(match[3]))) {
    return undefined;
  }
  return trimmed;
}

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(?:Z|UTC|\+00(?::?00)?)?$/i;

/**
 * A date, optionally with a time (`T` or space, seconds and fraction optional), optionally
 * marked UTC (`Z`, ` UTC`, `+00:00`) since results show timestamps as `… UTC`. Normalised to
 * `YYYY-MM-DD HH:MM:SS.ffffff` (nine fraction digits for TIMESTAMP_NS), which sorts as text.
 * `'fraction'` means more fraction digits than the column keeps.
 */
export function parseTimestamp(text: string, fractionDigits: 6 | 9): string | 'fraction' | undefined {
  const match = TIMESTAMP.exec(text.trim());
  if (match === null) {
    return undefined;
  }
  const [, year = '', month = '', day = '', hour = '00', minute = '00', second = '00', fraction = ''] = match;
  if (!validDate(Number(year), Number(month), Number(day))) {
    return undefined;
  }
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return undefined;
  }
  if (fraction.length > fractionDigits) {
    return 'fraction';
  }
  return `${year}-${month}-${day} ${hour}:${minute}:${second}.${fraction.padEnd(fractionDigits, '0')}`;
}
