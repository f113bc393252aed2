/**
 * Tries to break out of every position a client controls (string literals, LIKE patterns, IN
 * lists, BETWEEN bounds, quoted and bare names, numbers, hex, sort_by, columns) and checks,
 * against a real DuckDB, that the query selects only the intended rows and that nothing else
 * in the database changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compileFilters,
  compileSortBy,
  parseFilters,
  QueryLanguageError,
  quoteIdentifier,
  resolveColumns,
} from '../../src/filter-language/index.js';
import { openDatabase, type TestDatabase } from './support/duckdb.js';
import { evaluate, fromChecked, likeMatches } from './support/evaluate.js';
import type { FixtureColumn, FixtureRow } from './support/fixture.js';
import { expectOnlyTrustedSql } from './support/sql-shape.js';

const PAYLOADS: readonly string[] = [
  "'",
  "''",
  "\\'",
  '\\',
  '"',
  '""',
  '\\"',
  "x' OR '1'='1",
  "x' OR 1=1 --",
  "'; DROP TABLE victims; --",
  '1; DROP TABLE victims',
  'x" OR "1"="1',
  '*/ OR 1=1 /*',
  '-- comment',
  '/* comment */',
  "' UNION SELECT secret FROM secrets --",
  ') UNION SELECT secret FROM secrets --',
  'UNION ALL SELECT * FROM secrets',
  '\u2019 OR 1=1 --',
  '\u2018x\u2019',
  '\u201cname\u201d',
  '\uff07 OR 1=1',
  '\u02bc OR 1=1',
  'a\u0000b',
  '\u0000',
  "\u0000' OR 1=1 --",
  "' ; SELECT 1 ; '",
  '$1',
  '?',
  '$$ OR 1=1 $$',
  "E'\\x27'",
  '%',
  '_',
  '\\%',
  '0x27',
  '\r\n OR 1=1',
  "') OR ('1'='1",
  'name',
  'NULL',
  'x'.repeat(1300),
];

const EVIL_COLUMN = 'evil" ; DROP TABLE secrets; -- \'';

const VICTIM_COLUMNS: readonly FixtureColumn[] = [
  { name: 'id', type: 'integer', kind: 'exact', scale: 0, insert: '?', pool: [] },
  { name: 'name', type: 'varchar', kind: 'text', insert: '?', pool: [] },
  { name: 'amount', type: 'bigint', kind: 'exact', scale: 0, insert: '?', pool: [] },
  { name: EVIL_COLUMN, type: 'varchar', kind: 'text', insert: '?', pool: [] },
];

const victimColumn = (name: string): FixtureColumn => {
  const column = VICTIM_COLUMNS.find((c) => c.name === name);
  if (column === undefined) {
    throw new Error(`no column ${name}`);
  }
  return column;
};

/** One row per payload, whose `name` and evil column are the payload itself. */
const VICTIMS: readonly FixtureRow[] = PAYLOADS.map((payload, i) => ({
  id: BigInt(i),
  name: payload,
  amount: BigInt(i * 10),
  [EVIL_COLUMN]: payload,
}));

const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;
// Written here by hand, not with the code under test, so that the fixture does not share its faults.
const sqlName = (text: string) => `"${text.replaceAll('"', '""')}"`;
const clientName = (text: string) => `"${text.replaceAll('"', '\\"')}"`;

let db: TestDatabase;
let snapshot: unknown;

async function state(): Promise<unknown> {
  return {
    tables: await db.rows('SELECT table_name FROM information_schema.tables ORDER BY table_name'),
    victims: await db.rows(`SELECT * FROM victims ORDER BY id`),
    secrets: await db.rows('SELECT * FROM secrets ORDER BY secret'),
  };
}

beforeAll(async () => {
  db = await openDatabase();
  await db.rows(
    `CREATE TABLE victims (id INTEGER, name VARCHAR, amount BIGINT, ${sqlName(EVIL_COLUMN)} VARCHAR)`,
  );
  for (const row of VICTIMS) {
    await db.rows('INSERT INTO victims VALUES (?, ?, ?, ?)', [
      Number(row.id),
      row.name as string,
      Number(row.amount),
      row[EVIL_COLUMN] as string,
    ]);
  }
  await db.rows('CREATE TABLE secrets (secret VARCHAR)');
  await db.rows("INSERT INTO secrets VALUES ('the-secret')");
  snapshot = await state();
});

afterAll(async () => {
  if (db !== undefined) {
    expect(await state()).toEqual(snapshot);
    db.close();
  }
});

async function selectedIds(filters: string): Promise<number[]> {
  const compiled = compileFilters(filters, VICTIM_COLUMNS);
  expectOnlyTrustedSql(
    compiled,
    VICTIM_COLUMNS.map((c) => c.name),
  );
  const rows = await db.rows(`SELECT id FROM victims WHERE ${compiled.sql} ORDER BY id`, compiled.params);
  return rows.map((row) => Number(row.id));
}

const idsWhere = (predicate: (row: FixtureRow) => boolean) =>
  VICTIMS.filter(predicate).map((row) => Number(row.id));

/** Input that may or may not be valid: a clean error, or SQL selecting exactly what its tree says. */
async function expectCleanOutcome(filters: string): Promise<void> {
  let filter: ReturnType<typeof parseFilters>;
  try {
    filter = parseFilters(filters, VICTIM_COLUMNS);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryLanguageError);
    return;
  }
  const expected = idsWhere((row) => evaluate(fromChecked(filter), row, victimColumn) === true);
  expect(await selectedIds(filters)).toEqual(expected);
}

describe.each(PAYLOADS.map((payload, i) => [JSON.stringify(payload).slice(0, 40), payload, i] as const))(
  'payload %s',
  (_label, payload, index) => {
    const isPayload = (row: FixtureRow) => row.name === payload;

    it('as a string literal selects exactly its row', async () => {
      expect(await selectedIds(`name = ${sqlString(payload)}`)).toEqual(idsWhere(isPayload));
      expect(await selectedIds(`name = ${sqlString(payload)}`)).toContain(index);
      expect(await selectedIds(`name <> ${sqlString(payload)} AND amount >= 0`)).toEqual(
        idsWhere((row) => !isPayload(row)),
      );
    });

    it('in an IN list and as BETWEEN bounds selects exactly its row', async () => {
      expect(await selectedIds(`name IN (${sqlString(payload)}, 'none')`)).toEqual(idsWhere(isPayload));
      expect(await selectedIds(`name BETWEEN ${sqlString(payload)} AND ${sqlString(payload)}`)).toEqual(
        idsWhere(isPayload),
      );
    });

    it('as a LIKE pattern matches as a pattern only', async () => {
      if (payload.includes('\u0000')) {
        expect(() => compileFilters(`name LIKE ${sqlString(payload)}`, VICTIM_COLUMNS)).toThrow(
          /NUL character/,
        );
        return;
      }
      expect(await selectedIds(`name LIKE ${sqlString(payload)}`)).toEqual(
        idsWhere((row) => likeMatches(row.name as string, payload, false)),
      );
      expect(await selectedIds(`name NOT ILIKE ${sqlString(payload)}`)).toEqual(
        idsWhere((row) => !likeMatches(row.name as string, payload, true)),
      );
    });

    it('as a quoted name is only ever a name', async () => {
      for (const filters of [`${sqlName(payload)} = 'x'`, `${clientName(payload)} = 'x'`]) {
        await expectCleanOutcome(filters);
      }
      await expectCleanOutcome(`${sqlName(EVIL_COLUMN)} = ${sqlString(payload)}`);
      expect(await selectedIds(`${sqlName(EVIL_COLUMN)} = ${sqlString(payload)}`)).toEqual(
        idsWhere(isPayload),
      );
    });

    it('written bare where a name, a value, a number or hex digits go is an error or just that', async () => {
      for (const filters of [
        `${payload} = 'x'`,
        `name = ${payload}`,
        `amount = ${payload}`,
        `amount = '${payload}'`,
        `name = 0x${payload}`,
        `name IN (${payload})`,
        `name = 'a' AND ${payload}`,
        `(${payload})`,
        payload,
      ]) {
        await expectCleanOutcome(filters);
      }
    });

    it('in sort_by and columns is only ever a name', async () => {
      for (const text of [payload, sqlName(payload), clientName(payload), `name DESC, ${payload}`]) {
        let orderBy: string;
        try {
          orderBy = compileSortBy(text, VICTIM_COLUMNS);
        } catch (error) {
          expect(error).toBeInstanceOf(QueryLanguageError);
          continue;
        }
        const rows = await db.rows(`SELECT id FROM victims ORDER BY ${orderBy}, id`);
        expect(rows).toHaveLength(VICTIMS.length);
      }
      for (const text of [payload, sqlName(payload), clientName(payload), `name, ${payload}`]) {
        try {
          const columns = resolveColumns(text, VICTIM_COLUMNS);
          for (const column of columns) {
            expect(VICTIM_COLUMNS).toContain(column);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(QueryLanguageError);
        }
      }
    });
  },
);

describe('names that are themselves hostile', () => {
  it('a column whose name breaks out of naive quoting is quoted by the one function', async () => {
    expect(quoteIdentifier(EVIL_COLUMN)).toBe('"evil"" ; DROP TABLE secrets; -- \'"');
    const sortBy = compileSortBy(`${sqlName(EVIL_COLUMN)} DESC`, VICTIM_COLUMNS);
    expect(sortBy).toBe(`${quoteIdentifier(EVIL_COLUMN)} DESC`);
    const rows = await db.rows(`SELECT id FROM victims ORDER BY ${sortBy}, id`);
    expect(rows).toHaveLength(VICTIMS.length);
    expect(resolveColumns(clientName(EVIL_COLUMN), VICTIM_COLUMNS)).toEqual([victimColumn(EVIL_COLUMN)]);
  });

  it('a very long name is refused cleanly', () => {
    expect(() => compileFilters(`${sqlName('y'.repeat(4000))} = 1`, VICTIM_COLUMNS)).toThrow(
      /unknown column "y{40}…"/,
    );
    expect(() => compileFilters(`${sqlName('y'.repeat(5000))} = 1`, VICTIM_COLUMNS)).toThrow(
      /longer than 4096 bytes/,
    );
    expect(() => compileSortBy('z'.repeat(5000), VICTIM_COLUMNS)).toThrow(QueryLanguageError);
    expect(() => resolveColumns('z'.repeat(5000), VICTIM_COLUMNS)).toThrow(QueryLanguageError);
  });
});
