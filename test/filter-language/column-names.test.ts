/**
 * Every column name an upload accepts can be named in `columns`, `filters` and `sort_by`: alone,
 * several in one parameter, as the official TypeScript client quotes it and as SQL does. Names
 * that end in a backslash above all (issue 16): `"x\"` must name `x\`, not read on. The result
 * also holds each name without its trailing backslashes, so a misreading shows.
 */
import { validateAndBuildGetResultParams } from '@duneanalytics/client-sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileSortBy,
  type Filter,
  parseFilters,
  QueryLanguageError,
  quoteIdentifier,
  type ResultColumn,
  resolveColumns,
} from '../../src/filter-language/index.js';
import { clientQuoted, spellings, sqlQuoted, uploadableNames } from '../support/column-names.js';

const RUNS = 400;

/** The names as varchar columns, plus each one's stem (without trailing backslashes) where that is another name. */
function resultOf(names: readonly string[]): ResultColumn[] {
  const folded = new Set(names.map((name) => name.toLowerCase()));
  const stems = names
    .map((name) => name.replace(/\\+$/, ''))
    .filter((stem) => stem !== '' && !folded.has(stem.toLowerCase()));
  return [...new Set([...names, ...stems])].map((name) => ({ name, type: 'varchar' }));
}

/** The columns a checked filter compares, in order. */
function comparedColumns(filter: Filter): string[] {
  if ('operands' in filter) {
    return filter.operands.flatMap(comparedColumns);
  }
  return 'operand' in filter ? comparedColumns(filter.operand) : [filter.column.name];
}

function explain<T>(parameter: string, text: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    const message = error instanceof QueryLanguageError ? error.message : String(error);
    throw new Error(`${parameter}=${JSON.stringify(text)} was refused: ${message}`);
  }
}

describe('column names an upload accepts', () => {
  it.each([
    ['x\\', '"x\\"'],
    ['a"b\\', '"a\\"b\\"'],
    ['a"b\\', '"a""b\\"'],
    ['risk "tier", v2\\', '"risk \\"tier\\", v2\\"'],
    ['a\\"b', '"a\\\\"b"'],
    ['p\\" = 1\\', '"p\\\\" = 1\\"'],
  ])('%s is named by %s in columns, filters and sort_by', (name, spelling) => {
    const columns = resultOf([name, 'x', 'a', 'other']);
    expect(resolveColumns(`${spelling}, other`, columns).map((c) => c.name)).toEqual([name, 'other']);
    expect(comparedColumns(parseFilters(`${spelling} = 'v' AND other IS NULL`, columns))).toEqual([
      name,
      'other',
    ]);
    expect(compileSortBy(`${spelling} DESC, other`, columns)).toBe(
      `${quoteIdentifier(name)} DESC, "other" ASC`,
    );
  });

  it(`are each named alone in every form of the three parameters (${RUNS} sets)`, () => {
    fc.assert(
      fc.property(uploadableNames, (names) => {
        const columns = resultOf(names);
        for (const name of names) {
          for (const spelling of spellings(name)) {
            const selected = explain('columns', spelling, () => resolveColumns(spelling, columns));
            expect(selected.map((c) => c.name)).toEqual([name]);
            const sortBy = `${spelling} desc nulls first`;
            expect(explain('sort_by', sortBy, () => compileSortBy(sortBy, columns))).toBe(
              `${quoteIdentifier(name)} DESC NULLS FIRST`,
            );
            for (const filters of [
              `${spelling} = 'v'`,
              `NOT ${spelling} IN ('a', 'b')`,
              `${spelling} NOT LIKE 'a%'`,
              `${spelling} BETWEEN 'a' AND 'b'`,
              `(${spelling} IS NOT NULL)`,
            ]) {
              const filter = explain('filters', filters, () => parseFilters(filters, columns));
              expect(comparedColumns(filter)).toEqual([name]);
            }
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it(`are named together in one parameter, in any order (${RUNS} sets)`, () => {
    fc.assert(
      fc.property(uploadableNames, fc.boolean(), (names, reversed) => {
        const order = reversed ? [...names].reverse() : names;
        const columns = resultOf(names);
        const list = order.map(clientQuoted).join(', ');
        expect(explain('columns', list, () => resolveColumns(list, columns)).map((c) => c.name)).toEqual(
          order,
        );
        // In filters and sort_by a name ending in `\` is followed by more text that may look like a
        // name's end; with `""` for quotes every `\"` ends a name, and every order reads as meant.
        const sqlOrder = order.filter((name) => !name.includes('\\"'));
        fc.pre(sqlOrder.length > 0);
        const sortBy = sqlOrder.map((name) => `${sqlQuoted(name)} DESC`).join(',');
        expect(explain('sort_by', sortBy, () => compileSortBy(sortBy, columns))).toBe(
          sqlOrder.map((name) => `${quoteIdentifier(name)} DESC`).join(', '),
        );
        const filters = sqlOrder.map((name, i) => `${sqlQuoted(name)} = 'v${i}'`).join(' OR ');
        expect(comparedColumns(explain('filters', filters, () => parseFilters(filters, columns)))).toEqual(
          sqlOrder,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it(`reach the service as the TypeScript client sends columns (${RUNS} sets)`, () => {
    fc.assert(
      fc.property(uploadableNames, (names) => {
        // The client quotes only names that hold a quote, so a bare one cannot hold a comma or
        // start or end with a space: those it cannot send, whatever the service does.
        const sendable = names.filter(
          (name) => name.includes('"') || (!name.includes(',') && name === name.trim()),
        );
        fc.pre(sendable.length > 0);
        const { columns: sent } = validateAndBuildGetResultParams({ columns: sendable });
        const selected = explain('columns', String(sent), () =>
          resolveColumns(String(sent), resultOf(names)),
        );
        expect(selected.map((c) => c.name)).toEqual(sendable);
      }),
      { numRuns: RUNS },
    );
  });
});
