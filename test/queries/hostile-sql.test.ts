import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { Database } from '../../src/storage/database.js';
import { databaseState } from './support/database-state.js';
import { HOSTILE_SQL, HOSTILE_SQL_TABLES } from './support/hostile-sql.js';
import { ALICE, FIXTURE_TABLES, openFixture, sandboxFor } from './support/sandbox-fixture.js';

/**
 * The hostile-SQL corpus against the sandbox and a real database behind the second wall:
 * each attempt is refused with a clear 400, or accepted and then fails when run; and after
 * all of them, every table, view, macro, sequence and type in the database is exactly as
 * before.
 */

let database: Database;

beforeAll(async () => {
  database = await openFixture();
});

afterAll(() => database.close());

/** Everything a query could have changed, as plain data. */
const everything = () => database.read((session) => databaseState(session));

describe('the hostile-SQL corpus', () => {
  it('has at least 60 attempts, each named once, over tables the fixture has', () => {
    expect(HOSTILE_SQL.length).toBeGreaterThanOrEqual(60);
    expect(new Set(HOSTILE_SQL.map((entry) => entry.name)).size).toBe(HOSTILE_SQL.length);
    for (const { owner, table, isPrivate } of HOSTILE_SQL_TABLES) {
      expect(FIXTURE_TABLES).toContainEqual({ namespace: owner, table, isPrivate });
    }
  });

  it('changes nothing in the database', async () => {
    const before = await everything();
    for (const entry of HOSTILE_SQL) {
      try {
        const checked = await sandboxFor(database, ALICE, entry.sql);
        await database.dedicated((session) => session.all(checked.sql)).catch(() => undefined);
      } catch {
        // Refused: nothing ran.
      }
    }
    expect(await everything()).toEqual(before);
  });

  for (const entry of HOSTILE_SQL) {
    const outcome = entry.outcome;
    if ('refused' in outcome) {
      it(`refuses ${entry.name}`, async () => {
        const error = await sandboxFor(database, ALICE, entry.sql).then(
          (checked) => new Error(`accepted as ${checked.sql}`),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(400);
        expect((error as ApiError).message).toMatch(outcome.refused);
      });
    } else {
      it(`accepts ${entry.name}, which then fails`, async () => {
        const checked = await sandboxFor(database, ALICE, entry.sql);
        await expect(database.dedicated((session) => session.all(checked.sql))).rejects.toThrow(
          outcome.fails,
        );
      });
    }
  }
});
