import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSE_BUDGET, parseCost } from '../../src/queries/sandbox/parse-cost.js';
import { sqlTokens } from '../../src/queries/sandbox/sql-tokens.js';
import { Database } from '../../src/storage/database.js';

/**
 * The estimate of DuckDB's parse (src/queries/sandbox/parse-cost.ts), table-driven: which
 * words its scanner sees, what each shape is estimated to cost, and that each estimate is at
 * least what DuckDB 1.5.6 really writes where that can be counted (grouping sets).
 */

const words = (sql: string) =>
  sqlTokens(sql)
    .filter((token) => token.kind === 'word')
    .map((token) => token.text);

describe('the scanner', () => {
  it.each([
    ["SELECT 'a and b' AND 1", ['select', 'and']],
    ["SELECT 'it''s and' OR 1", ['select', 'or']],
    ['SELECT "and" AND "x""or"', ['select', 'and']],
    ['SELECT $$ and $$ OR $tag$ or $ and $tag$ AND 1', ['select', 'or', 'and']],
    ["SELECT E'\\' and' AND e'\\\\' OR 1", ['select', 'and', 'or']],
    ["SELECT x'and' AND b'01'", ['select', 'x', 'and', 'b']],
    ['SELECT 1 -- and or\nAND 2', ['select', 'and']],
    ['SELECT 1 /* and /* nested or */ and */ OR 2', ['select', 'or']],
    ['SELECT 1=1and 1=1OR 1', ['select', 'and', 'or']],
    ['SELECT 1.5e3and 2', ['select', 'and']],
    ['SELECT a$and, band, "AND", AnD', ['select', 'a$and', 'band', 'and']],
    ['SELECT $1 AND $name', ['select', 'and']],
    ['SELECT 1 OR$$a$$ OR $$b$$', ['select', 'or$$a$$', 'or']],
    ["SELECT 'never closed and or", ['select']],
    ['SELECT 1 /* never closed and', ['select']],
    ['SELECT é AND ü', ['select', 'é', 'and', 'ü']],
  ])('%s', (sql, expected) => {
    expect(words(sql)).toEqual(expected);
  });

  it('gives each token its index in the text', () => {
    expect(sqlTokens("SELECT 'x', a AND b").map((token) => token.start)).toEqual([0, 7, 10, 12, 14, 18]);
  });
});

const chain = (terms: number, operator: string) => Array(terms).fill('x = 1').join(` ${operator} `);
/** Moves estimated for one flat chain of `terms`: Σ (ANDs before + 2). */
const flat = (terms: number) => ((terms - 1) * (terms - 2)) / 2 + 2 * (terms - 1);

describe('AND and OR chains', () => {
  it.each([
    ['one AND chain of 100', `SELECT 1 WHERE ${chain(100, 'AND')}`, flat(100)],
    ['one OR chain of 100', `SELECT 1 WHERE ${chain(100, 'OR')}`, flat(100)],
    ['no chain', 'SELECT 1', 0],
    // An OR ends the AND chains beside it: 50 chains of 2, one OR chain of 50.
    ['ANDs between ORs', `SELECT 1 WHERE ${Array(50).fill('a AND b').join(' OR ')}`, 50 * 2 + flat(50)],
    // Separate expressions: select items, arguments, CASE branches.
    ['ANDs in separate items', `SELECT ${Array(50).fill('a AND b').join(', ')}`, 50 * 2],
    [
      'ANDs in CASE branches',
      `SELECT CASE ${Array(50).fill('WHEN a AND b THEN c AND d').join(' ')} END`,
      100 * 2,
    ],
    ['statements apart', `SELECT ${chain(100, 'AND')}; SELECT ${chain(100, 'AND')}`, 2 * flat(100)],
  ])('%s', (_name, sql, moves) => {
    expect(parseCost(sql).cost.conjunctionMoves).toBe(moves);
  });

  it('counts a chain across brackets: DuckDB merges (a AND b) AND c into one', () => {
    // Each group's 49 ANDs join the outer chain; each outer AND moves everything before it.
    const grouped = `SELECT 1 WHERE ${Array(40)
      .fill(`(${chain(50, 'AND')})`)
      .join(' AND ')}`;
    const { conjunctionMoves } = parseCost(grouped).cost;
    expect(conjunctionMoves).toBeGreaterThan(39 * ((40 * 49) / 2));
    expect(conjunctionMoves).toBeLessThan(flat(40 * 50));
    // Nesting each level inside the next is one chain, flat: the same as writing it flat.
    let nested = 'x = 1';
    for (let i = 0; i < 200; i++) nested = `(${nested}) AND x = 1`;
    expect(parseCost(`SELECT 1 WHERE ${nested}`).cost.conjunctionMoves).toBeGreaterThanOrEqual(flat(201));
  });

  it('refuses past its budget, at the AND where the budget ran out', () => {
    let longest = 2;
    while (flat(longest + 1) <= PARSE_BUDGET.conjunctionMoves) longest++;
    expect(longest).toBeGreaterThanOrEqual(2_800);
    const sql = `SELECT 1 WHERE ${chain(longest, 'AND')}`;
    expect(parseCost(sql).refusal).toBeUndefined();
    const over = parseCost(`${sql} AND x = 1`);
    expect(over.refusal?.message).toMatch(/^this SQL joins too many conditions with AND or OR/);
    expect(over.refusal?.position).toBe(sql.length + 1);
  });
});

describe('copies', () => {
  it.each([
    ['a searched CASE copies nothing', 'SELECT CASE WHEN x = 1 THEN 1 WHEN x = 2 THEN 2 END', 0],
    ['a simple CASE copies its operand into each WHEN', 'SELECT CASE x WHEN 1 THEN 1 WHEN 2 THEN 2 END', 2],
    ['of three tokens', 'SELECT CASE a + b WHEN 1 THEN 1 WHEN 2 THEN 2 WHEN 3 THEN 3 END', 9],
    [
      'nested in its operand',
      'SELECT CASE CASE x WHEN 1 THEN 2 END WHEN 1 THEN 1 WHEN 2 THEN 2 END',
      1 + 7 * 2,
    ],
    [
      'a named window, into each use',
      'SELECT f() OVER w, g() OVER (w ROWS 1 PRECEDING) FROM t WINDOW w AS (PARTITION BY a ORDER BY b)',
      2 * 8,
    ],
    ['an inline window copies nothing', 'SELECT f() OVER (PARTITION BY a), g() OVER () FROM t', 0],
    [
      'a window built on another',
      'SELECT f() OVER w2 FROM t WINDOW w1 AS (PARTITION BY a), w2 AS (w1 ORDER BY b)',
      2 * (5 + 6),
    ],
  ])('%s', (_name, sql, copies) => {
    expect(parseCost(sql).cost.copiedTokens).toBe(copies);
  });

  it('refuses a simple CASE whose copies are past the budget, at its CASE', () => {
    const operand = `[${Array(200).fill('1').join(', ')}]`;
    const whens = Array(200)
      .fill(0)
      .map((_, i) => `WHEN [${i}] THEN ${i}`)
      .join(' ');
    const sql = `SELECT 1, CASE ${operand} ${whens} END`;
    const { refusal } = parseCost(sql);
    expect(refusal?.message).toMatch(/^a CASE with an operand \(CASE x WHEN …\) makes DuckDB's parser copy/);
    expect(refusal?.position).toBe(sql.indexOf('CASE'));
  });

  it('refuses named windows whose copies are past the budget', () => {
    const uses = Array(400).fill('sum(x) OVER w').join(', ');
    const sql = `SELECT ${uses} FROM t WINDOW w AS (PARTITION BY ${Array(200).fill('a').join(', ')})`;
    expect(parseCost(sql).refusal?.message).toMatch(/^each use of a named window \(OVER w\)/);
  });
});

/** Column indexes DuckDB writes into the grouping sets of `sql`'s tree. */
async function duckdbIndexes(database: Database, sql: string): Promise<number> {
  const [row] = await database.read((session) =>
    session.all<{ tree: string }>('SELECT json_serialize_sql(?::VARCHAR) AS tree', [sql]),
  );
  const tree = JSON.parse(row?.tree ?? 'null');
  let count = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'group_sets') for (const set of inner as number[][]) count += set.length;
        else visit(inner);
      }
    }
  };
  visit(tree);
  return count;
}

describe('grouping sets', () => {
  let database: Database;
  beforeAll(async () => {
    database = await Database.open({ path: ':memory:', catalogReaders: 1, resultReaders: 1 });
  });
  afterAll(() => database.close());

  const columns = (n: number, prefix = 'c') =>
    Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(', ');

  it.each([
    ['GROUP BY a, b', 'SELECT 1 GROUP BY a, b', 2],
    ['ROLLUP', 'SELECT 1 GROUP BY ROLLUP (a, b, c)', 4 * 3],
    ['CUBE', 'SELECT 1 GROUP BY CUBE (a, b)', 4 * 2],
    ['GROUPING SETS', 'SELECT 1 GROUP BY GROUPING SETS ((a, b), (c), ())', 3 * 2],
    ['a column and a ROLLUP', 'SELECT 1 GROUP BY a, ROLLUP (b, c)', 3 * 3],
    ['two ROLLUPs multiply', 'SELECT 1 GROUP BY ROLLUP (a, b), ROLLUP (c, d)', 9 * 4],
    ['nested', 'SELECT 1 GROUP BY GROUPING SETS (ROLLUP (a, b), CUBE (c, d), e)', (3 + 4 + 1) * 2],
    ['ROLLUP of 40', `SELECT 1 GROUP BY ROLLUP (${columns(40)})`, 41 * 40],
    ['CUBE of 10', `SELECT 1 GROUP BY CUBE (${columns(10)})`, 1024 * 10],
    ['in a subquery', 'SELECT (SELECT 1 GROUP BY ROLLUP (a, b)) GROUP BY CUBE (c)', 3 * 2 + 2],
    ['before HAVING and ORDER BY', 'SELECT 1 GROUP BY ROLLUP (a) HAVING x ORDER BY y, z', 2],
  ])('%s: estimated at least as DuckDB writes it', async (_name, sql, estimate) => {
    const { groupingIndexes } = parseCost(sql).cost;
    expect(groupingIndexes).toBe(estimate);
    expect(groupingIndexes).toBeGreaterThanOrEqual(await duckdbIndexes(database, sql));
  });

  it.each([
    ['a ROLLUP of 1,000 columns (500,500 indexes)', `SELECT 1 GROUP BY ROLLUP (${columns(1_000)})`],
    ['a CUBE of 20 columns (2^20 sets)', `SELECT 1 GROUP BY CUBE (${columns(20)})`],
    [
      'two ROLLUPs of 100 columns (10,201 sets of up to 200)',
      `SELECT 1 GROUP BY ROLLUP (${columns(100)}), ROLLUP (${columns(100, 'd')})`,
    ],
    ['a CUBE of 2,000 columns (2^2000 sets)', `SELECT 1 GROUP BY CUBE (${columns(2_000)})`],
  ])('refuses %s, at its GROUP BY', (_name, sql) => {
    const { refusal } = parseCost(sql);
    expect(refusal?.message).toMatch(/^ROLLUP, CUBE and GROUPING SETS here make DuckDB's parser write out/);
    expect(refusal?.position).toBe(sql.indexOf('GROUP BY'));
  });
});
