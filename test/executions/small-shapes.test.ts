import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { outermostLimit, SMALL_ROWS, SMALL_VALUES, SmallShapes } from '../../src/executions/small-result.js';

/** Which runs are held in memory first (src/executions/small-result.ts). */

/** Users' SQL as the sandbox hands it to the run: DuckDB's own rewrite of the parsed tree. */
async function rewritten(sqls: readonly string[]): Promise<string[]> {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  const texts: string[] = [];
  for (const sql of sqls) {
    const literal = `'${sql.replaceAll("'", "''")}'`;
    const reader = await connection.runAndReadAll(
      `SELECT json_deserialize_sql(json_serialize_sql(${literal}))`,
    );
    texts.push(String(reader.getRows()[0]?.[0]));
  }
  return texts;
}

describe('the outermost LIMIT of a run', () => {
  it('is read from the end of the rewritten SQL, and only the outermost', async () => {
    const texts = await rewritten([
      'select * from t limit 100 -- a comment',
      'SELECT * FROM t ORDER BY x LIMIT 20 OFFSET 40',
      'SELECT * FROM t UNION ALL SELECT * FROM u LIMIT 7',
      'WITH a AS (SELECT 1 AS x) SELECT * FROM a ORDER BY 1 LIMIT 3',
      'SELECT * FROM (SELECT * FROM t LIMIT 5)',
      'SELECT * FROM t WHERE x IN (SELECT y FROM u LIMIT 5)',
      'SELECT * FROM t LIMIT 10%',
      'SELECT * FROM t LIMIT 5 + 5',
      "SELECT 'LIMIT 5'",
      'SELECT * FROM t',
    ]);
    expect(texts.map(outermostLimit)).toEqual([
      100,
      20,
      7,
      3,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('SmallShapes', () => {
  const small = [{ name: 'n', type: 'bigint' }];
  it('expects a small result from a text bounded by its LIMIT, or whose last run was small', () => {
    const shapes = new SmallShapes();
    expect(shapes.expectsSmall('SELECT * FROM t LIMIT 100')).toBe(true);
    expect(shapes.expectsSmall(`SELECT * FROM t LIMIT ${SMALL_ROWS + 1}`)).toBe(false);
    expect(shapes.expectsSmall('SELECT * FROM t')).toBe(false);
    shapes.note('SELECT * FROM t', small, 10, false);
    expect(shapes.expectsSmall('SELECT * FROM t')).toBe(true);
    shapes.note('SELECT * FROM t', small, SMALL_ROWS + 1, false);
    expect(shapes.expectsSmall('SELECT * FROM t')).toBe(false);
  });

  it('remembers a text that was not small after all, its LIMIT notwithstanding', () => {
    const shapes = new SmallShapes();
    shapes.notSmall('SELECT * FROM t LIMIT 100');
    expect(shapes.expectsSmall('SELECT * FROM t LIMIT 100')).toBe(false);
    shapes.note('SELECT x FROM t LIMIT 5', [{ name: 'x', type: 'float' }], 5, false);
    expect(shapes.expectsSmall('SELECT x FROM t LIMIT 5')).toBe(false);
    shapes.note('SELECT x FROM t LIMIT 6', small, 6, true);
    expect(shapes.expectsSmall('SELECT x FROM t LIMIT 6')).toBe(false);
    // Few rows, but too many values to render on the event loop.
    const wide = Array.from({ length: 30 }, (_, i) => ({ name: `c${i}`, type: 'bigint' }));
    shapes.note('SELECT * FROM wide', wide, SMALL_VALUES / 30 + 1, false);
    expect(shapes.expectsSmall('SELECT * FROM wide')).toBe(false);
    shapes.note('SELECT * FROM wide', wide, SMALL_VALUES / 40, false);
    expect(shapes.expectsSmall('SELECT * FROM wide')).toBe(true);
  });
});
