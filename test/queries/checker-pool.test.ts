import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { SqlChecker, type SqlCheckerOptions } from '../../src/queries/sandbox/checker-pool.js';
import { SqlRefusal } from '../../src/queries/sandbox/refusals.js';
import { MAX_SQL_BYTES } from '../../src/queries/sandbox/sandbox-sql.js';
import { fill } from './support/hostile-shapes.js';

/**
 * The sandbox's checker (src/queries/sandbox/checker-pool.ts): its real worker thread checking
 * SQL off the event loop, the bounds in front of it, and what a check gets when a worker
 * fails. Failures the real worker cannot be made to have on demand (ending, throwing, hanging,
 * running out of memory) come from a scripted worker speaking the same messages
 * (support/scripted-check-worker.mjs).
 */

const SCRIPTED = path.join(import.meta.dirname, 'support', 'scripted-check-worker.mjs');
const BROKEN = path.join(import.meta.dirname, 'support', 'broken-check-worker.mjs');

const checkers: SqlChecker[] = [];
afterEach(async () => {
  await Promise.all(checkers.splice(0).map((checker) => checker.close()));
});

function checker(options: Partial<SqlCheckerOptions> = {}): SqlChecker {
  const made = new SqlChecker({ workers: 1, maxWaiting: 100, maxWaitMs: 60_000, ...options });
  checkers.push(made);
  return made;
}

const noTables = async () => [];
/** What a check ended with: its SQL, or its error. */
const outcome = (checking: Promise<string>) =>
  checking.then(
    (sql) => sql,
    (error: unknown) => error,
  );

function expectUnavailable(error: unknown, message: RegExp): void {
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(503);
  expect((error as ApiError).headers).toEqual({ 'Retry-After': '1' });
  expect((error as ApiError).message).toMatch(message);
}

/** CPU ticks (1/100 s) of this process's main thread, and of the whole process. */
function cpuTicks(): { main: number; all: number } {
  const fields = (file: string) => fs.readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = (stat: string[]) => Number(stat[11]) + Number(stat[12]);
  return {
    main: ticks(fields(`/proc/self/task/${process.pid}/stat`)),
    all: ticks(fields('/proc/self/stat')),
  };
}

const LARGE_IN_LIST = fill(MAX_SQL_BYTES, 'SELECT 1 WHERE 1 IN (', (i) => String(i), ', ', ')');

describe('the real worker', () => {
  it('checks SQL on its own thread: the event loop does a small part of the work', async () => {
    const pool = checker();
    await pool.check('SELECT 1', noTables);
    const before = cpuTicks();
    for (let i = 0; i < 4; i++) await pool.check(LARGE_IN_LIST, noTables);
    const after = cpuTicks();
    // On the event loop these checks cost it most of their CPU (reading and walking 1.8 MB
    // trees twice); here it only passes messages.
    expect(after.all - before.all).toBeGreaterThan(20);
    expect((after.main - before.main) / (after.all - before.all)).toBeLessThan(0.1);
  });

  it('runs below the event loop’s priority: its thread at nice 10', async () => {
    const niceThreads = () =>
      fs
        .readdirSync('/proc/self/task')
        .filter(
          (thread) =>
            fs.readFileSync(`/proc/self/task/${thread}/stat`, 'utf8').split(') ')[1]?.split(' ')[16] === '10',
        );
    const before = niceThreads();
    await checker().check('SELECT 1', noTables);
    const added = niceThreads().filter((thread) => !before.includes(thread));
    expect(added).toHaveLength(1);
    expect(added[0]).not.toBe(String(process.pid));
  });

  it('refuses checks past the queue’s bound at once, and checks the others', async () => {
    const pool = checker({ maxWaiting: 2 });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => outcome(pool.check('SELECT 1', noTables))),
    );
    expect(answers.slice(0, 2)).toEqual(['SELECT 1', 'SELECT 1']);
    for (const answer of answers.slice(2)) {
      expectUnavailable(answer, /^too many SQL checks are waiting \(2\); try again in a moment$/);
    }
  });

  it('refuses a check that waited too long for a worker', async () => {
    const pool = checker({ maxWaitMs: 1 });
    // The worker starts (a few hundred milliseconds) while this one waits.
    expectUnavailable(
      await outcome(pool.check('SELECT 1', noTables)),
      /^the SQL checker is busy: this check waited 0.001 s for a worker; try again in a moment$/,
    );
    pool.warm();
    while (pool.load.workers === 0 || (await outcome(pool.check('SELECT 1', noTables))) !== 'SELECT 1') {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The first is taken by the idle worker at once; the second waits behind it.
    const [first, second] = await Promise.all([
      outcome(pool.check(LARGE_IN_LIST, noTables)),
      outcome(pool.check('SELECT 2', noTables)),
    ]);
    expect(typeof first).toBe('string');
    expectUnavailable(second, /waited 0.001 s for a worker/);
  });

  it('fails what waits when closed, and every check after', async () => {
    const pool = checker();
    const waiting = outcome(pool.check('SELECT 1', noTables));
    await pool.close();
    expectUnavailable(await waiting, /^the service is shutting down$/);
    expectUnavailable(await outcome(pool.check('SELECT 1', noTables)), /^the service is shutting down$/);
  });

  it('lets a check running when closed end before its worker does', async () => {
    const pool = checker();
    await pool.check('SELECT 1', noTables);
    const running = outcome(pool.check(LARGE_IN_LIST, noTables));
    await pool.close();
    // Either finished or interrupted by the worker's DuckDB closing: an answer, not a crash.
    const answer = await running;
    if (typeof answer !== 'string') expectUnavailable(answer, /^the service is shutting down$/);
    expect(pool.load).toMatchObject({ waiting: 0, running: 0, workers: 0 });
  });
});

describe('checks kept for SQL that comes again', () => {
  const SQL = 'SELECT count(*) AS n FROM trades';
  /** Resolves every table to `schema.table`, counting its calls. */
  function resolver(schema: string, table: string) {
    const calls: string[][] = [];
    const resolve = async (tables: { folded: { table: string } }[]) => {
      calls.push(tables.map((t) => t.folded.table));
      return tables.map(() => ({ schema, table }));
    };
    return { resolve, calls };
  }

  it('answers the same text whose tables resolve as before without a worker', async () => {
    const pool = checker();
    const first = resolver('alice', 'dataset_trades');
    const checked = await pool.check(SQL, first.resolve);
    expect(checked).toContain('alice.dataset_trades');
    expect(pool.load).toMatchObject({ sent: 1, kept: 1 });
    const again = resolver('alice', 'dataset_trades');
    expect(await pool.check(SQL, again.resolve)).toBe(checked);
    // Resolved again, with the tables the first check named; no worker asked.
    expect(again.calls).toEqual([['trades']]);
    expect(pool.load).toMatchObject({ sent: 1, kept: 1 });
  });

  it('checks again when a table resolves to another, and refuses what no longer resolves', async () => {
    const pool = checker();
    const alice = await pool.check(SQL, resolver('alice', 'dataset_trades').resolve);
    const bob = await pool.check(SQL, resolver('bob', 'dataset_trades').resolve);
    expect(bob).toContain('bob.dataset_trades');
    expect(bob).not.toBe(alice);
    expect(pool.load).toMatchObject({ sent: 2 });
    const gone = async () => {
      throw new SqlRefusal('table trades does not exist', 21, 'byte', 'unknown-table');
    };
    const refused = await outcome(pool.check(SQL, gone));
    expect(refused).toBeInstanceOf(SqlRefusal);
    expect((refused as SqlRefusal).message).toBe('table trades does not exist');
  });

  it('keeps no refusal, and keeps texts checked with other options apart', async () => {
    const pool = checker();
    const attach = "ATTACH 'x.db'";
    expect(await outcome(pool.check(attach, noTables))).toBeInstanceOf(SqlRefusal);
    expect(await outcome(pool.check(attach, noTables))).toBeInstanceOf(SqlRefusal);
    expect(pool.load).toMatchObject({ sent: 2, kept: 0 });
    expect(await pool.check('SELECT $1', noTables, { parameters: true })).toContain('$1');
    expect(await outcome(pool.check('SELECT $1', noTables))).toBeInstanceOf(SqlRefusal);
    expect(pool.load).toMatchObject({ sent: 4, kept: 1 });
  });
});

describe('a worker that fails', () => {
  it('ends during a check: the check gets a 503, the next a new worker', async () => {
    const pool = checker({ workerFile: SCRIPTED });
    expectUnavailable(
      await outcome(pool.check('exit', noTables)),
      /^the SQL check stopped \(the worker ended with code 3\); try again$/,
    );
    expect(await pool.check('SELECT 1', noTables)).toBe('SELECT 1');
  });

  it('throws: the same', async () => {
    const pool = checker({ workerFile: SCRIPTED });
    expectUnavailable(
      await outcome(pool.check('throw', noTables)),
      /^the SQL check stopped \(a bug in the worker\); try again$/,
    );
    expect(await pool.check('SELECT 1', noTables)).toBe('SELECT 1');
  });

  it('never answers: the check gets a 503 at the run limit, and another worker takes the next', async () => {
    const pool = checker({ workerFile: SCRIPTED, runLimitMs: 200 });
    expectUnavailable(
      await outcome(pool.check('hang', noTables)),
      /^checking this SQL took more than 0.2 s; try again later$/,
    );
    expect(await pool.check('SELECT 1', noTables)).toBe('SELECT 1');
    expect(pool.load).toMatchObject({ waiting: 0, running: 0, workers: 1 });
  });

  it('runs out of memory: a refusal of the SQL, and the next check a new worker', async () => {
    const pool = checker({ workerFile: SCRIPTED, workerHeapMb: 16 });
    const answer = await outcome(pool.check('oom', noTables));
    expect(answer).toBeInstanceOf(SqlRefusal);
    expect((answer as SqlRefusal).message).toBe(
      'this SQL is too large to check: checking it ran out of memory',
    );
    expect(await pool.check('SELECT 1', noTables)).toBe('SELECT 1');
  });

  it('cannot start: every check waiting gets a 503 saying so, and a later one tries again', async () => {
    const pool = checker({ workerFile: BROKEN });
    const answers = await Promise.all([
      outcome(pool.check('SELECT 1', noTables)),
      outcome(pool.check('SELECT 2', noTables)),
    ]);
    for (const answer of answers) {
      expectUnavailable(answer, /^the SQL checker could not start: cannot load the check worker$/);
    }
    expectUnavailable(await outcome(pool.check('SELECT 3', noTables)), /could not start/);
  });
});

describe('table names', () => {
  it('are resolved on this thread between the two halves of a check', async () => {
    const pool = checker({ workerFile: SCRIPTED });
    const asked: unknown[] = [];
    const sql = await pool.check('tables', async (tables) => {
      asked.push(...tables);
      return [{ schema: 'alice', table: 'dataset_t' }];
    });
    expect(asked).toEqual([
      { written: { schema: 'alice', table: 't' }, folded: { schema: 'alice', table: 't' }, location: 14 },
    ]);
    expect(sql).toBe('SELECT * FROM alice.dataset_t');
  });

  it('refused by the resolver end the check with the resolver’s error, and the worker takes the next', async () => {
    const pool = checker({ workerFile: SCRIPTED });
    const refusal = new SqlRefusal('table alice.t does not exist', 14);
    expect(
      await outcome(
        pool.check('tables', async () => {
          throw refusal;
        }),
      ),
    ).toBe(refusal);
    expect(await pool.check('SELECT 1', noTables)).toBe('SELECT 1');
    expect(pool.load.workers).toBe(1);
  });
});
