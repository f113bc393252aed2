import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { readResults } from '../../src/results/results-reader.js';
import { Database, type Session } from '../../src/storage/database.js';
import { StatementTimeoutError } from '../../src/storage/reader-pool.js';
import { LaneFullError } from '../../src/workload/fair-lane.js';

/**
 * DESIGN §12, issue 22: readers that one key cannot monopolise. Results work has its own pool,
 * of which one key holds at most half; the catalog's reads never wait behind it; a results
 * borrowing has a time limit.
 */

const RUNAWAY = 'SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b';

let database: Database | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

async function open(options: Partial<Parameters<typeof Database.open>[0]> = {}): Promise<Database> {
  database = await Database.open({ path: ':memory:', catalogReaders: 1, resultReaders: 4, ...options });
  return database;
}

/** A borrowing that holds its connection (after one real statement) until released. */
function holder(db: Database, key: string, log: string[]) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const done = db.readResults(key, async (session: Session) => {
    await session.run('SELECT 1');
    log.push(`${key} in`);
    await released;
    log.push(`${key} out`);
  });
  return { release, done };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Waits until `ready` holds (a loaded machine may take a while to start a statement). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ready(); i++) await settle();
  expect(ready()).toBe(true);
}

describe('the results readers', () => {
  it('give one key at most half of them, and another key one at once', async () => {
    const db = await open();
    const log: string[] = [];
    const a = [1, 2, 3, 4].map(() => holder(db, 'alice', log));
    await until(() => log.length >= 2);
    const b = holder(db, 'bob', log);
    await until(() => log.length >= 3);
    // bob got in while alice's third and fourth still wait for her own two.
    expect(log).toEqual(['alice in', 'alice in', 'bob in']);
    b.release();
    await b.done;
    for (const h of a) h.release();
    await Promise.all(a.map((h) => h.done));
    expect(log.filter((l) => l === 'alice in')).toHaveLength(4);
  });

  it("never make the catalog's reads wait", async () => {
    const db = await open();
    const log: string[] = [];
    const held = [
      holder(db, 'alice', log),
      holder(db, 'alice', log),
      holder(db, 'bob', log),
      holder(db, 'bob', log),
    ];
    await until(() => log.length === 4);
    const [row] = await db.read((s) => s.all<{ n: number }>('SELECT 42 AS n'));
    expect(row?.n).toBe(42);
    for (const h of held) h.release();
    await Promise.all(held.map((h) => h.done));
  });

  it('refuse a key with too many borrowings waiting, and only that key', async () => {
    const db = await open({ resultsQueuedPerKey: 1 });
    const log: string[] = [];
    const held = [holder(db, 'alice', log), holder(db, 'alice', log), holder(db, 'alice', log)];
    await until(() => log.length === 2);
    await expect(db.readResults('alice', (s) => s.run('SELECT 1'))).rejects.toBeInstanceOf(LaneFullError);
    await expect(readResults(db, 'alice', (s) => s.run('SELECT 1'))).rejects.toMatchObject({
      status: 429,
      message: expect.stringMatching(/this key has 1 results requests waiting/),
    });
    await db.readResults('bob', (s) => s.run('SELECT 1'));
    for (const h of held) h.release();
    await Promise.all(held.map((h) => h.done));
  });

  it('interrupt a borrowing past the time limit, and serve on with new connections', async () => {
    const db = await open({ resultsTimeoutMs: 150 });
    for (let i = 0; i < 5; i++) {
      await expect(db.readResults('alice', (s) => s.run(RUNAWAY))).rejects.toBeInstanceOf(
        StatementTimeoutError,
      );
    }
    const error = await readResults(db, 'alice', (s) => s.run(RUNAWAY)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 503,
      message: expect.stringMatching(
        /took longer than the limit of 0.15 seconds \(RESULTS_TIMEOUT_SECONDS\)/,
      ),
    });
    // Every connection of the pool still answers, none keeps an interrupt for its next statement.
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) => db.readResults(`key${n}`, (s) => s.all<{ n: number }>(`SELECT ${n} AS n`))),
    );
    expect(answers.map(([row]) => row?.n)).toEqual([1, 2, 3, 4]);
  });

  it('are interrupted at shutdown, like every read', async () => {
    const db = await open();
    const running = db.readResults('alice', (s) => s.run(RUNAWAY)).catch((e: unknown) => e);
    await settle();
    await db.close();
    database = undefined;
    expect(String(await running)).toMatch(/shutting down/);
  });
});
