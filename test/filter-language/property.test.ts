/**
 * Property tests against a real DuckDB. For random valid filters (printed in varied spellings)
 * and for random text (token soup, near misses, arbitrary Unicode), the language answers
 * either a clean QueryLanguageError or SQL that DuckDB accepts, that carries nothing of the
 * client's but column names, and whose value on every fixture row (TRUE, FALSE or NULL)
 * equals an independent evaluation in JavaScript. Filters are checked 100 at a time, in one
 * DuckDB query each, to keep 10,000 cases per property fast.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CompiledSql,
  compileFilter,
  compileFilters,
  type Filter,
  parseFilters,
  QueryLanguageError,
} from '../../src/filter-language/index.js';
import { openDatabase, type TestDatabase } from './support/duckdb.js';
import { type EvalFilter, evaluate, fromChecked, type Truth } from './support/evaluate.js';
import { createFixture, FIXTURE_COLUMNS, FIXTURE_ROWS, FIXTURE_TABLE } from './support/fixture.js';
import { anyText, genFilter, meaning, print } from './support/generators.js';
import { expectOnlyTrustedSql } from './support/sql-shape.js';

const BATCH = 100;
const RUNS = 100;
const COLUMN_NAMES = FIXTURE_COLUMNS.map((c) => c.name);

let db: TestDatabase;

beforeAll(async () => {
  db = await openDatabase();
  await createFixture(db);
});

afterAll(() => db?.close());

/** Each filter's value on each fixture row, in row order: one query for the whole batch. */
async function evaluateInDuckDb(batch: readonly CompiledSql[]): Promise<Truth[][]> {
  if (batch.length === 0) {
    return [];
  }
  const select = batch.map((compiled, i) => `${compiled.sql} AS r${i}`).join(', ');
  const rows = await db.rows(
    `SELECT ${select} FROM ${FIXTURE_TABLE} ORDER BY id`,
    batch.flatMap((compiled) => compiled.params),
  );
  return batch.map((_, i) => rows.map((row) => row[`r${i}`] as Truth));
}

interface Case {
  text: string;
  compiled: CompiledSql;
  meaning: EvalFilter;
}

async function expectSameAnswers(cases: readonly Case[]): Promise<void> {
  for (const { compiled } of cases) {
    expectOnlyTrustedSql(compiled, COLUMN_NAMES);
  }
  const answers = await evaluateInDuckDb(cases.map((c) => c.compiled));
  cases.forEach((c, i) => {
    FIXTURE_ROWS.forEach((row, r) => {
      const expected = evaluate(c.meaning, row);
      const actual = answers[i]?.[r];
      if (actual !== expected) {
        throw new Error(
          `${JSON.stringify(c.text)} on row ${r}: DuckDB says ${actual}, JavaScript ${expected}\n${c.compiled.sql}\n${JSON.stringify(c.compiled.params, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
        );
      }
    });
  });
}

function expectCleanError(text: string, error: unknown): void {
  if (!(error instanceof QueryLanguageError)) {
    throw new Error(`${JSON.stringify(text)} threw ${String(error)}`);
  }
  expect(error.parameter).toBe('filters');
  expect(error.message.startsWith('filters: ')).toBe(true);
  expect(error.message).toContain(` at position ${error.position}`);
  expect(error.position).toBeGreaterThanOrEqual(0);
  expect(error.position).toBeLessThanOrEqual([...text].length);
}

describe('property: random valid filters', () => {
  it(`compile, run in DuckDB and agree with JavaScript (${RUNS} x ${BATCH} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(genFilter, { minLength: BATCH, maxLength: BATCH }), async (filters) => {
        const cases = filters.map((filter) => {
          const text = print(filter);
          let compiled: CompiledSql;
          try {
            compiled = compileFilters(text, FIXTURE_COLUMNS);
          } catch (error) {
            throw new Error(`valid filter refused: ${JSON.stringify(text)}: ${String(error)}`);
          }
          return { text, compiled, meaning: meaning(filter) };
        });
        await expectSameAnswers(cases);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('property: random text', () => {
  const outcomes = { accepted: 0, refused: 0 };

  it(`is a clean error or SQL that agrees with JavaScript (${RUNS} x ${BATCH} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyText, { minLength: BATCH, maxLength: BATCH }), async (texts) => {
        const cases: Case[] = [];
        for (const text of texts) {
          let filter: Filter;
          try {
            filter = parseFilters(text, FIXTURE_COLUMNS);
          } catch (error) {
            expectCleanError(text, error);
            outcomes.refused++;
            continue;
          }
          outcomes.accepted++;
          cases.push({ text, compiled: compileFilter(filter), meaning: fromChecked(filter) });
        }
        await expectSameAnswers(cases);
      }),
      { numRuns: RUNS },
    );
    // The generators must exercise both outcomes, or the property says little.
    expect(outcomes.accepted).toBeGreaterThan(RUNS * BATCH * 0.05);
    expect(outcomes.refused).toBeGreaterThan(RUNS * BATCH * 0.3);
  });
});
