import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { PARSE_BUDGET, parseCost } from '../../src/queries/sandbox/parse-cost.js';
import { SqlRefusal } from '../../src/queries/sandbox/refusals.js';
import { MAX_SQL_BYTES } from '../../src/queries/sandbox/sandbox-sql.js';
import { type CheckWork, SqlCheck } from '../../src/queries/sandbox/sql-check.js';
import { Database } from '../../src/storage/database.js';
import { HOSTILE_SHAPES } from './support/hostile-shapes.js';
import { ALICE, openFixture, sandboxFor } from './support/sandbox-fixture.js';

/**
 * Hostile shapes of SQL (support/hostile-shapes.ts) as long as the sandbox accepts: each is
 * refused with a message saying what to change, or checked with work linear in its length.
 * Work is counted, not timed: the characters of tree a check reads and writes (the parse, the
 * named items, the rewritten SQL's parse) per byte of SQL at 64 KiB stay within 10% of the same
 * shape's at 16 KiB, and DuckDB's own parse work, estimated before parsing (parse-cost.ts, its
 * estimates pinned in parse-cost.test.ts), stays within its budget. The shapes DuckDB parses
 * in more than linear work are refused before it parses them.
 */

const SMALL = 16 * 1024;

/** SqlCheck run here (not on a worker), to read its work. */
let parser: Database;
/** The service's way: the fixture's checker on a worker thread, tables resolved on a reader. */
let fixture: Database;

beforeAll(async () => {
  parser = await Database.open({
    path: ':memory:',
    catalogReaders: 1,
    resultReaders: 1,
    allowedDirectories: [],
  });
  fixture = await openFixture();
});

afterAll(async () => {
  await parser.close();
  await fixture.close();
});

/** The check's work, or its refusal. */
async function check(sql: string): Promise<CheckWork | SqlRefusal> {
  try {
    const checking = await parser.read((session) => SqlCheck.begin(session, sql));
    await parser.read((session) => checking.finish(session, []));
    return checking.work;
  } catch (error) {
    if (error instanceof SqlRefusal) return error;
    throw error;
  }
}

/** Characters of tree read and written per byte of SQL. */
const perByte = (work: CheckWork) =>
  (work.treeChars + work.itemChars + work.rewrittenTreeChars) / work.sqlBytes;

describe('hostile shapes of SQL at 64 KiB', () => {
  for (const shape of HOSTILE_SHAPES) {
    const sql = shape.make(MAX_SQL_BYTES);
    const outcome = shape.outcome;
    if ('linear' in outcome) {
      it(`${shape.name}: accepted, its work linear in its length`, async () => {
        const large = await check(sql);
        const small = await check(shape.make(SMALL));
        if (large instanceof SqlRefusal || small instanceof SqlRefusal) throw large;
        expect(large.sqlBytes).toBeGreaterThanOrEqual(small.sqlBytes);
        expect(perByte(large)).toBeLessThanOrEqual(1.1 * perByte(small) + 0.1);
        expect(perByte(large)).toBeLessThan(300);
        for (const key of Object.keys(PARSE_BUDGET) as (keyof typeof PARSE_BUDGET)[]) {
          expect(large.parse[key]).toBeLessThanOrEqual(PARSE_BUDGET[key]);
        }
        await sandboxFor(fixture, ALICE, sql);
      });
    } else {
      it(`${shape.name}: refused ${outcome.beforeParsing ? 'before' : 'after'} DuckDB parses it`, async () => {
        expect(Buffer.byteLength(sql)).toBeLessThanOrEqual(MAX_SQL_BYTES);
        expect(parseCost(sql).refusal !== undefined).toBe(outcome.beforeParsing);
        const refusal = await check(sql);
        expect(refusal).toBeInstanceOf(SqlRefusal);
        expect((refusal as SqlRefusal).message).toMatch(outcome.refused);
        const answer = await sandboxFor(fixture, ALICE, sql).then(
          () => new Error('accepted'),
          (error: unknown) => error,
        );
        expect(answer).toBeInstanceOf(ApiError);
        expect((answer as ApiError).status).toBe(400);
        expect((answer as ApiError).message).toMatch(outcome.refused);
      });
    }
  }
});
