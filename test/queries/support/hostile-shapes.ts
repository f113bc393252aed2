/**
 * Hostile shapes of SQL, each made at any length (test/queries/hostile-shapes.test.ts runs
 * them at 16 KiB and at the 64 KiB the sandbox accepts). None names a table, so each can be
 * checked whole without a catalog. The outcome at 64 KiB is one of:
 * - `linear`: accepted, with work linear in the SQL's length;
 * - `refused`: a 400 whose message matches; `before parsing` when the sandbox's estimate of
 *   DuckDB's parse refuses it (src/queries/sandbox/parse-cost.ts), otherwise after.
 */

export type ShapeOutcome = { linear: true } | { refused: RegExp; beforeParsing: boolean };

export interface HostileShape {
  name: string;
  make: (bytes: number) => string;
  outcome: ShapeOutcome;
}

/** `prefix` + parts joined by `separator` + `suffix`, as long as fits in `bytes`. */
export function fill(
  bytes: number,
  prefix: string,
  part: (i: number) => string,
  separator: string,
  suffix = '',
): string {
  const parts: string[] = [];
  let length = prefix.length + suffix.length;
  for (let i = 0; ; i++) {
    const next = part(i);
    if (length + next.length + separator.length > bytes) break;
    parts.push(next);
    length += next.length + separator.length;
  }
  return prefix + parts.join(separator) + suffix;
}

/** `open` … `close` around `inner` as often as fits in `bytes`. */
function nest(bytes: number, inner: string, open: string, close: string): string {
  const levels = Math.floor((bytes - inner.length) / (open.length + close.length));
  return open.repeat(levels) + inner + close.repeat(levels);
}

const linear = { linear: true } as const;
const tooManyConditions = {
  refused: /^this SQL joins too many conditions with AND or OR/,
  beforeParsing: true,
};

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    name: 'an IN list',
    make: (n) => fill(n, 'SELECT 1 WHERE 1 IN (', (i) => String(i), ', ', ')'),
    outcome: linear,
  },
  {
    name: 'a UNION ALL of selects',
    make: (n) => fill(n, '', () => 'SELECT 1', ' UNION ALL '),
    outcome: linear,
  },
  {
    name: 'many CTEs',
    make: (n) => fill(n, 'WITH ', (i) => `c${i} AS (SELECT ${i})`, ', ', ' SELECT 1'),
    outcome: linear,
  },
  {
    name: 'a chain of CTEs, each reading the one before',
    make: (n) =>
      fill(n, 'WITH c0 AS (SELECT 1 AS x), ', (i) => `c${i + 1} AS (SELECT x FROM c${i})`, ', ', ' SELECT 1'),
    outcome: linear,
  },
  { name: 'a long string literal', make: (n) => `SELECT '${'x'.repeat(n - 10)}'`, outcome: linear },
  { name: 'a long comment', make: (n) => `SELECT 1 /* ${'and '.repeat((n - 16) / 4)} */`, outcome: linear },
  { name: 'a select list of decimals', make: (n) => fill(n, 'SELECT ', () => '1.5', ', '), outcome: linear },
  {
    name: 'a select list of columns',
    make: (n) => fill(n, 'SELECT ', () => 'x', ', ', ' FROM (SELECT 1 AS x)'),
    outcome: linear,
  },
  { name: 'VALUES rows', make: (n) => fill(n, 'VALUES ', (i) => `(${i}, 'v')`, ', '), outcome: linear },
  {
    name: 'a searched CASE with many WHENs',
    make: (n) => fill(n, 'SELECT CASE ', (i) => `WHEN 1 = ${i} THEN ${i}`, ' ', ' END'),
    outcome: linear,
  },
  {
    name: 'AND chains of 50 in groups',
    make: (n) => fill(n, 'SELECT 1 WHERE ', () => `(${Array(50).fill('1=1').join(' AND ')})`, ' OR '),
    outcome: linear,
  },
  {
    name: 'parentheses up to 8,000 deep',
    make: (n) => `SELECT ${nest(Math.min(n, 16_008) - 7, '1', '(', ')')}`,
    outcome: linear,
  },
  {
    name: 'an AND chain',
    make: (n) => fill(n, 'SELECT 1 WHERE ', () => '1=1', ' AND '),
    outcome: tooManyConditions,
  },
  {
    name: 'an OR chain',
    make: (n) => fill(n, 'SELECT 1 WHERE ', () => '1=1', ' OR '),
    outcome: tooManyConditions,
  },
  {
    name: 'ANDed pairs between ORs',
    make: (n) => fill(n, 'SELECT 1 WHERE ', (i) => `1=${i} AND 2=${i}`, ' OR '),
    outcome: tooManyConditions,
  },
  {
    name: 'a simple CASE with a long operand',
    make: (n) => {
      const operand = `[${Array(Math.floor(n / 40))
        .fill('1')
        .join(',')}]`;
      return fill(n, `SELECT CASE ${operand} `, (i) => `WHEN [${i}] THEN ${i}`, ' ', ' END');
    },
    outcome: {
      refused: /^a CASE with an operand \(CASE x WHEN …\) makes DuckDB's parser copy/,
      beforeParsing: true,
    },
  },
  {
    name: 'a named window used in every column',
    make: (n) => {
      const window = ` FROM range(1) t(a) WINDOW w AS (PARTITION BY ${Array(Math.floor(n / 40))
        .fill('a')
        .join(', ')})`;
      return fill(n - window.length, 'SELECT ', () => 'sum(a) OVER w', ', ') + window;
    },
    outcome: { refused: /^each use of a named window \(OVER w\)/, beforeParsing: true },
  },
  {
    name: 'a ROLLUP of many columns',
    make: (n) => fill(n, 'SELECT 1 FROM range(1) t(a) GROUP BY ROLLUP (', () => 'a', ', ', ')'),
    outcome: {
      refused: /^ROLLUP, CUBE and GROUPING SETS here make DuckDB's parser write out/,
      beforeParsing: true,
    },
  },
  {
    name: 'parentheses as deep as the text',
    make: (n) => `SELECT ${nest(n - 7, '1', '(', ')')}`,
    outcome: { refused: /^memory exhausted/, beforeParsing: false },
  },
  {
    name: 'subqueries nested 300 deep',
    make: () => nest(3_000, 'SELECT 1', 'SELECT (', ')'),
    outcome: { refused: /^the SQL nests more than 1000 levels deep$/, beforeParsing: false },
  },
  {
    name: 'subqueries nested as deep as the text',
    make: (n) => nest(n, 'SELECT 1', 'SELECT (', ')'),
    outcome: { refused: /^memory exhausted at or near "\("/, beforeParsing: false },
  },
  {
    name: 'unnamed subqueries nested in each other around a long list',
    make: (n) => {
      const depth = 150;
      const inner = fill(n - depth * 9, 'SELECT ', () => '1.5', ',');
      return 'SELECT ('.repeat(depth) + inner + ')'.repeat(depth);
    },
    outcome: {
      refused: /^the columns of this query without an alias hold too much SQL/,
      beforeParsing: false,
    },
  },
];
