import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isTreeNumber,
  readTree,
  type TreeValue,
  treeNumberText,
  writeTree,
} from '../../src/queries/sandbox/parse-tree.js';
import type { Database } from '../../src/storage/database.js';
import { HOSTILE_SQL } from './support/hostile-sql.js';
import { openFixture } from './support/sandbox-fixture.js';
import { VALID_SQL } from './support/valid-sql.js';

/** Reading and writing DuckDB's parse tree without losing a digit. */

const tree = (json: string): TreeValue => {
  const read = readTree(json, 100);
  if (!('tree' in read)) throw new Error(`refused: ${read.refused}`);
  return read.tree;
};

describe('readTree and writeTree', () => {
  it('keep every number as written', () => {
    const json =
      '{"a":9007199254740993,"b":[18446744073709551615,-9223372036854775808,1.5e300,0.0,-1,Infinity,-Infinity,NaN],"c":{"upper":0,"lower":9223372036854775808}}';
    const read = tree(json) as { a: TreeValue };
    expect(isTreeNumber(read.a) && treeNumberText(read.a)).toBe('9007199254740993');
    expect(writeTree(read)).toBe(json);
  });

  it('leave strings, including ones that look like numbers or escapes, as they were', () => {
    const json = String.raw`{"s":"9007199254740993","t":"\\u0000123","u":"a\"b\\","v":"é😀\n","w":true,"x":false,"y":null,"z":[]}`;
    const read = tree(json) as Record<string, TreeValue>;
    expect(read.s).toBe('9007199254740993');
    expect(read.t).toBe('\\u0000123');
    expect(writeTree(read)).toBe(json);
  });

  it('refuse a NUL in a string and nesting past the limit', () => {
    expect(readTree(String.raw`{"a":"x\u0000"}`, 10)).toEqual({ refused: 'NUL' });
    expect(readTree(`${'['.repeat(11)}${']'.repeat(11)}`, 10)).toEqual({ refused: 'too deep' });
    expect(readTree(`${'['.repeat(10)}${']'.repeat(10)}`, 10)).toEqual({ tree: expect.any(Array) });
    expect(readTree(`{"a":"[[[[[[[[[[[["}`, 2)).toEqual({ tree: { a: '[[[[[[[[[[[[' } });
  });
});

describe('trees DuckDB writes', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openFixture();
  });
  afterAll(() => database.close());

  it('come back byte for byte, for every query of the test corpora', async () => {
    const queries = [
      ...VALID_SQL,
      ...HOSTILE_SQL.map((entry) => entry.sql).filter((sql) => sql.length < 10_000),
    ];
    await database.read(async (session) => {
      for (const sql of queries) {
        if (sql.includes('\u0000')) continue;
        const [row] = await session.all<{ tree: string }>('SELECT json_serialize_sql(?::VARCHAR) AS tree', [
          sql,
        ]);
        const json = (row as { tree: string }).tree;
        const read = readTree(json, 10_000);
        if ('tree' in read) expect(writeTree(read.tree)).toBe(json);
      }
    });
  });
});
