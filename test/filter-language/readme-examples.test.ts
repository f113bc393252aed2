/**
 * Runs every example of the README's "Filter and sort language" section: the sample result is
 * read from the README itself and loaded into DuckDB, then each `filters`, `sort_by` and
 * `columns` example must give the rows, order or columns written next to it, and each error
 * example exactly the message shown.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compileFilters,
  compileSortBy,
  QueryLanguageError,
  quoteIdentifier,
  type ResultColumn,
  resolveColumns,
} from '../../src/filter-language/index.js';
import { openDatabase, type TestDatabase } from './support/duckdb.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const SECTION = README.slice(
  README.indexOf('<!-- filter-language:start -->'),
  README.indexOf('<!-- filter-language:end -->'),
);

/** The section's tables: header cells and body rows, cells trimmed. */
function tables(markdown: string): { header: string[]; rows: string[][] }[] {
  const found: { header: string[]; rows: string[][] }[] = [];
  let lines: string[] = [];
  for (const line of [...markdown.split('\n'), '']) {
    if (line.startsWith('|')) {
      lines.push(line);
      continue;
    }
    if (lines.length >= 2) {
      const [header = [], , ...rows] = lines.map(cells);
      found.push({ header, rows });
    }
    lines = [];
  }
  return found;
}

/** Splits a table row on the pipes that are outside code spans. */
function cells(line: string): string[] {
  const result: string[] = [];
  let current = '';
  let inCode = false;
  for (const c of line.slice(1, line.trimEnd().length - 1)) {
    if (c === '`') {
      inCode = !inCode;
    }
    if (c === '|' && !inCode) {
      result.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  result.push(current.trim());
  return result;
}

/** The text of the one code span a cell holds. */
function code(cell: string): string {
  const match = /^`(.*)`$/.exec(cell);
  if (match?.[1] === undefined) {
    throw new Error(`expected a code span: ${cell}`);
  }
  return match[1];
}

const codes = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1] as string);
const names = (cell: string) => (cell === 'none' ? [] : cell.split(', '));

const ALL = tables(SECTION);
const table = (first: string, second?: string) => {
  const found = ALL.find((t) => t.header[0] === first && (second === undefined || t.header[1] === second));
  if (found === undefined) {
    throw new Error(`README: no table headed ${first}`);
  }
  return found;
};

const sample = ALL.find((t) => t.header.every((h) => /^`.+` \(.+\)$/.test(h)));
if (sample === undefined) {
  throw new Error('README: no sample result table');
}
const COLUMNS: ResultColumn[] = sample.header.map((h) => {
  const [, name = '', type = ''] = /^`(.+)` \((.+)\)$/.exec(h) ?? [];
  return { name, type };
});

let db: TestDatabase;

beforeAll(async () => {
  db = await openDatabase();
  const definitions = COLUMNS.map((c) => `${quoteIdentifier(c.name)} ${c.type.toUpperCase()}`);
  await db.rows(`CREATE TABLE sample (ordinal INTEGER, ${definitions.join(', ')})`);
  const placeholders = COLUMNS.map((c) => `CAST(? AS ${c.type.toUpperCase()})`).join(', ');
  for (const [ordinal, row] of sample.rows.entries()) {
    await db.rows(`INSERT INTO sample VALUES (?, ${placeholders})`, [
      ordinal,
      ...row.map((cell) => (cell === 'NULL' ? null : cell)),
    ]);
  }
});

afterAll(() => db?.close());

const nameColumn = quoteIdentifier('avs_name');

describe('README: filters examples', () => {
  const { rows } = table('`filters`', 'rows selected (`avs_name`)');

  it('has examples', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
  });

  it.each(rows.map(([filters = '', expected = '']) => [code(filters), names(expected)] as const))(
    '%s',
    async (filters, expected) => {
      const { sql, params } = compileFilters(filters, COLUMNS);
      const selected = await db.rows(
        `SELECT ${nameColumn} AS name FROM sample WHERE ${sql} ORDER BY ordinal`,
        params,
      );
      expect(selected.map((row) => row.name)).toEqual(expected);
    },
  );
});

describe('README: sort_by examples', () => {
  const { rows } = table('`sort_by`');

  it.each(rows.map(([sortBy = '', expected = '']) => [code(sortBy), names(expected)] as const))(
    '%s',
    async (sortBy, expected) => {
      // The results layer breaks ties on the row ordinal, as here.
      const orderBy = `${compileSortBy(sortBy, COLUMNS)}, ordinal`;
      const sorted = await db.rows(`SELECT ${nameColumn} AS name FROM sample ORDER BY ${orderBy}`);
      expect(sorted.map((row) => row.name)).toEqual(expected);
    },
  );
});

describe('README: columns examples', () => {
  const { rows } = table('`columns`');

  it.each(rows.map(([columns = '', expected = '']) => [code(columns), codes(expected)] as const))(
    '%s',
    (columns, expected) => {
      expect(resolveColumns(columns, COLUMNS).map((c) => c.name)).toEqual(expected);
    },
  );
});

describe('README: error examples', () => {
  const { rows } = table('parameter', 'value');

  it.each(
    rows.map(
      ([parameter = '', value = '', message = '']) => [code(parameter), code(value), code(message)] as const,
    ),
  )('%s: %s', (parameter, value, message) => {
    const run = {
      filters: () => compileFilters(value, COLUMNS),
      sort_by: () => compileSortBy(value, COLUMNS),
      columns: () => resolveColumns(value, COLUMNS),
    }[parameter];
    if (run === undefined) {
      throw new Error(`unknown parameter ${parameter}`);
    }
    expect(run).toThrow(QueryLanguageError);
    expect(run).toThrow(message);
    try {
      run();
    } catch (error) {
      expect((error as Error).message).toBe(message);
    }
  });
});
