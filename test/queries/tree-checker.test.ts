import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTree, type TreeObject, type TreeValue } from '../../src/queries/sandbox/parse-tree.js';
import { SqlRefusal } from '../../src/queries/sandbox/refusals.js';
import { checkStatement } from '../../src/queries/sandbox/tree-checker.js';
import type { Database } from '../../src/storage/database.js';
import { openFixture } from './support/sandbox-fixture.js';

/**
 * The walk refuses what it does not know: real trees from DuckDB, each changed in one place
 * the way a new DuckDB version or an unexpected construct would change it.
 */

let database: Database;

beforeAll(async () => {
  database = await openFixture();
});

afterAll(() => database.close());

async function statementOf(sql: string): Promise<TreeObject> {
  const [row] = await database.read((session) =>
    session.all<{ tree: string }>('SELECT json_serialize_sql(?::VARCHAR) AS tree', [sql]),
  );
  const read = readTree((row as { tree: string }).tree, 1_000);
  if (!('tree' in read)) throw new Error('refused');
  return ((read.tree as TreeObject).statements as TreeValue[])[0] as TreeObject;
}

const node = (statement: TreeObject) => statement.node as TreeObject;
const firstItem = (statement: TreeObject) => (node(statement).select_list as TreeObject[])[0] as TreeObject;

function refusal(statement: TreeObject): string {
  try {
    checkStatement(statement);
  } catch (error) {
    if (error instanceof SqlRefusal) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('the tree walk', () => {
  it('accepts the tree as DuckDB wrote it', async () => {
    expect(checkStatement(await statementOf('SELECT abs(1) FROM t'))).toHaveLength(1);
  });

  it.each(['surprise', 'constructor', '__proto__', 'toString'])(
    'refuses a field it does not know: %s',
    async (key) => {
      const statement = await statementOf('SELECT abs(1)');
      Object.defineProperty(firstItem(statement), key, { value: 1, enumerable: true });
      expect(refusal(statement)).toBe(`unsupported SQL construct: parse-tree field "${key}"`);
    },
  );

  it.each([
    [
      'an expression class',
      (s: TreeObject) => Object.assign(firstItem(s), { class: 'LAMBDA_REF' }),
      'expression of kind LAMBDA_REF',
    ],
    [
      'a table reference type',
      (s: TreeObject) => Object.assign(node(s).from_table as TreeObject, { type: 'COLUMN_DATA' }),
      'table reference of kind COLUMN_DATA',
    ],
    [
      'a query node type',
      (s: TreeObject) => Object.assign(node(s), { type: 'CTE_NODE' }),
      'query of kind CTE_NODE',
    ],
    [
      'a result modifier type',
      (s: TreeObject) => Object.assign(node(s), { modifiers: [{ type: 'SAMPLE_MODIFIER' }] }),
      'result modifier of kind SAMPLE_MODIFIER',
    ],
  ])('refuses %s it does not know', async (_name, change, message) => {
    const statement = await statementOf('SELECT abs(1) FROM t');
    change(statement);
    expect(refusal(statement)).toBe(`unsupported SQL construct: ${message}`);
  });

  it('refuses a field holding the wrong kind of value', async () => {
    const statement = await statementOf('SELECT abs(1)');
    Object.assign(firstItem(statement), { children: { class: 'CONSTANT' } });
    expect(refusal(statement)).toBe('unsupported SQL construct: an unexpected children in the parse tree');
  });

  it('checks a function’s name wherever the function sits', async () => {
    const statement = await statementOf('SELECT abs(1)');
    Object.assign(firstItem(statement), { function_name: 'current_setting' });
    expect(refusal(statement)).toBe(
      'function current_setting is not available in queries: it reads the database settings',
    );
  });
});
