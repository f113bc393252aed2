/**
 * DuckDB's parse tree as `json_serialize_sql` writes it, read and written back without
 * passing any number through a JavaScript double: the tree holds integer constants
 * (`9007199254740993`) and uint64 positions as JSON numbers, and a round trip through
 * `JSON.parse` alone silently changes them (LIBRARY-NOTES, "DuckDB, measured for users' SQL").
 *
 * Each number is kept as its text, marked by a leading NUL character, which no other string
 * of a tree holds (a tree with a NUL in a string is refused): the reader quotes
 * every number token before `JSON.parse`, the writer unquotes marked strings after
 * `JSON.stringify`. Hand-written because it is several times faster than lossless-json
 * (measured on a 1.7 MB tree on the loaded 2-core machine: about 25 ms to read against 80–125 ms
 * for its parse, 25 ms to write against 390 ms for its stringify), and the tree of the largest
 * SQL accepted is over 2 MB, all of it handled on the event loop. It also reads the
 * `Infinity` and `NaN` that DuckDB writes for `1e400`, which no JSON parser accepts.
 */
export type TreeValue = string | boolean | null | TreeValue[] | TreeObject;
export interface TreeObject {
  [key: string]: TreeValue;
}

const NUMBER_MARK = '\u0000';

export const isTreeNumber = (value: TreeValue | undefined): value is string =>
  typeof value === 'string' && value.startsWith(NUMBER_MARK);

/** A number's text as DuckDB wrote it (`42`, `-1.5e300`, `18446744073709551615`). */
export const treeNumberText = (value: string): string => value.slice(NUMBER_MARK.length);

export const isTreeObject = (value: TreeValue | undefined): value is TreeObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type ReadResult = { tree: TreeValue } | { refused: 'too deep' | 'NUL' };

/** Reads a tree; refused when it nests deeper than `maxDepth` objects and arrays, or holds a NUL. */
export function readTree(json: string, maxDepth: number): ReadResult {
  const parts: string[] = [];
  let copied = 0;
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === QUOTE) {
      // A string: skip to its closing quote, past escaped characters.
      for (i++; i < json.length; i++) {
        const inner = json.charCodeAt(i);
        if (inner === BACKSLASH) {
          if (json.startsWith('u0000', i + 1)) return { refused: 'NUL' };
          i++;
        } else if (inner === QUOTE) break;
      }
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      // Checked before parsing: JSON.parse itself would throw a RangeError past ~5,000 levels.
      if (++depth > maxDepth) return { refused: 'too deep' };
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else if (startsNumber(code)) {
      let end = i + 1;
      while (end < json.length && continuesNumber(json.charCodeAt(end))) end++;
      parts.push(json.slice(copied, i), '"\\u0000', json.slice(i, end), '"');
      copied = end;
      i = end - 1;
    }
  }
  parts.push(json.slice(copied));
  return { tree: JSON.parse(parts.join('')) as TreeValue };
}

/** Writes a tree as JSON, numbers as the text they were read from. */
export function writeTree(value: TreeValue): string {
  return JSON.stringify(value).replace(MARKED_NUMBER, '$1');
}

/** A marked number as JSON.stringify writes it: `"\u0000` + the number's text + `"`. */
const MARKED_NUMBER = /"\\u0000([-+.0-9A-Za-z]*)"/g;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** `-`, a digit, or the `I` of Infinity and `N` of NaN (`true`, `false`, `null` start otherwise). */
const startsNumber = (code: number): boolean =>
  code === 0x2d || (code >= 0x30 && code <= 0x39) || code === 0x49 || code === 0x4e;

/** Digits, `.`, `+`, `-`, `e`, and the letters of Infinity and NaN. */
const continuesNumber = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) ||
  code === 0x2e ||
  code === 0x2b ||
  code === 0x2d ||
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a);
