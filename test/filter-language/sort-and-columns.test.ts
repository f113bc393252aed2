import { describe, expect, it } from 'vitest';
import {
  compileSortBy,
  QueryLanguageError,
  quoteIdentifier,
  resolveColumns,
} from '../../src/filter-language/index.js';
import { quoteIdentifier as storageQuoteIdentifier } from '../../src/storage/sql.js';
import { COLUMNS } from './support/columns.js';

const VALID = COLUMNS.map((c) =>
  c.name === 'special, "col"' ? '"special, ""col"""' : c.name === 'in' ? '"in"' : c.name,
).join(', ');

function errorMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof QueryLanguageError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('accepted');
}

describe('quoteIdentifier', () => {
  it.each([
    ['avs_name', '"avs_name"'],
    ['total_TVL', '"total_TVL"'],
    ['special, "col"', '"special, ""col"""'],
    ['"', '""""'],
    ["it's; DROP TABLE x --", '"it\'s; DROP TABLE x --"'],
  ])('%s → %s', (name, quoted) => {
    expect(quoteIdentifier(name)).toBe(quoted);
  });

  it('refuses a NUL, which DuckDB would read as the end of the statement', () => {
    expect(() => quoteIdentifier('a\u0000b')).toThrow('identifier contains a NUL character');
  });

  it('is the one quoter: storage uses the same function', () => {
    expect(storageQuoteIdentifier).toBe(quoteIdentifier);
  });
});

describe('compileSortBy', () => {
  it.each([
    ['total_TVL DESC NULLS LAST, avs_name', '"total_TVL" DESC NULLS LAST, "avs_name" ASC'],
    ['total_tvl', '"total_TVL" ASC'],
    ['TOTAL_TVL desc', '"total_TVL" DESC'],
    ['total_tvl aSc nUlLs FiRsT', '"total_TVL" ASC NULLS FIRST'],
    ['num_operators nulls last', '"num_operators" ASC NULLS LAST'],
    [
      'num_operators DESC, total_TVL ASC, avs_name desc',
      '"num_operators" DESC, "total_TVL" ASC, "avs_name" DESC',
    ],
    ['"special, ""col""" DESC', '"special, ""col""" DESC'],
    ['"special, \\"col\\"" DESC', '"special, ""col""" DESC'],
    ['"in" desc', '"in" DESC'],
    ['in desc', '"in" DESC'],
    ['  avs_name\t,\nnum_operators  ', '"avs_name" ASC, "num_operators" ASC'],
    ['avs_name, avs_name DESC', '"avs_name" ASC, "avs_name" DESC'],
  ])('%s', (sortBy, sql) => {
    expect(compileSortBy(sortBy, COLUMNS)).toBe(sql);
  });

  it.each([
    ['', 'sort_by: expected a column name, found the end at position 0'],
    ['foo DESC', `sort_by: unknown column "foo" at position 0; valid columns: ${VALID}`],
    ['avs_name,', "sort_by: expected a column name after ',', found the end at position 9"],
    ['avs_name,,num_operators', "sort_by: expected a column name after ',', found ',' at position 9"],
    [
      'avs_name descending',
      "sort_by: expected ASC, DESC, NULLS FIRST, NULLS LAST or ',' after avs_name, found 'descending' at position 9",
    ],
    [
      'avs_name DESC ASC',
      "sort_by: expected NULLS FIRST, NULLS LAST or ',' after avs_name, found 'ASC' at position 14",
    ],
    ['avs_name NULLS', 'sort_by: expected FIRST or LAST after NULLS, found the end at position 14'],
    ['avs_name NULLS LAST DESC', "sort_by: expected ',' after avs_name, found 'DESC' at position 20"],
    ['1', "sort_by: expected a column name, found '1' at position 0"],
    [
      "'avs_name'",
      'sort_by: expected a column name, found \'avs_name\' at position 0; double-quote names: "my column"',
    ],
    [
      'lower(avs_name)',
      "sort_by: expected a column name, found 'lower(' at position 0; sort_by takes column names only",
    ],
    [
      't.avs_name',
      "sort_by: expected a column name, found 't.' at position 0; sort_by takes column names only",
    ],
    [
      'avs_name; DROP TABLE x',
      "sort_by: unexpected character ';' at position 8; semicolons are not part of the language",
    ],
    ['avs_name -- comment', "sort_by: unexpected character '-' at position 9; arithmetic is not supported"],
    [`${'x'.repeat(4097)}`, 'sort_by: text longer than 4096 bytes at position 4096; shorten the expression'],
  ])('refuses %s', (sortBy, message) => {
    expect(errorMessage(() => compileSortBy(sortBy, COLUMNS))).toBe(message);
  });
});

describe('resolveColumns', () => {
  const names = (columns: string) => resolveColumns(columns, COLUMNS).map((c) => c.name);

  it.each([
    ['avs_name,total_TVL', ['avs_name', 'total_TVL']],
    ['total_tvl, AVS_NAME', ['total_TVL', 'avs_name']],
    ['"total_tvl"', ['total_TVL']],
    ['"special, ""col""",avs_name', ['special, "col"', 'avs_name']],
    ['"special, \\"col\\"" , avs_name', ['special, "col"', 'avs_name']],
    ['in', ['in']],
    ['  num_operators  ', ['num_operators']],
  ])('%s', (columns, expected) => {
    expect(names(columns)).toEqual(expected);
  });

  it('returns the result columns themselves, in request order', () => {
    const resolved = resolveColumns('total_tvl,avs_name', COLUMNS);
    expect(resolved[0]).toBe(COLUMNS.find((c) => c.name === 'total_TVL'));
    expect(resolved[1]).toBe(COLUMNS[0]);
  });

  it('takes a bare name with spaces whole, as the TypeScript client sends it', () => {
    const columns = [{ name: 'avs name', type: 'varchar' }, ...COLUMNS];
    expect(resolveColumns('AVS NAME,avs_name', columns).map((c) => c.name)).toEqual(['avs name', 'avs_name']);
  });

  it.each([
    ['', 'columns: expected a column name at position 0'],
    ['avs_name,', "columns: expected a column name after ',' at position 9"],
    ['avs_name,,total_TVL', "columns: expected a column name after ',' at position 9"],
    ['foo', `columns: unknown column "foo" at position 0; valid columns: ${VALID}`],
    ['avs_name, AVS_NAME', 'columns: column avs_name is listed twice at position 10'],
    ['"avs_name" x', "columns: expected ',' after avs_name, found 'x' at position 11"],
    [
      'a"b',
      'columns: unexpected \'"\' in \'a"b\' at position 1; double-quote the whole name, writing "" for a quote inside',
    ],
    [
      '"avs_name',
      'columns: unterminated column name at position 0; close it with ", and write "" or \\" for a quote inside it',
    ],
    ['""', 'columns: empty column name "" at position 0'],
  ])('refuses %s', (columns, message) => {
    expect(errorMessage(() => resolveColumns(columns, COLUMNS))).toBe(message);
  });
});
