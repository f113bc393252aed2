import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Database,
  DatabaseClosingError,
  type InterruptibleSession,
  reusable,
} from '../../src/storage/database.js';
import { InterruptedError, StorageError } from '../../src/storage/storage-error.js';

/**
 * What database.ts does to save DuckDB round trips (issue 12's `SELECT 1`): results are read
 * whole as soon as the statement ends, statements marked `reusable` stay prepared on their
 * connection, and a dedicated connection serves the next caller unless it was interrupted.
 * Checked against a real DuckDB: a connection's identity is DuckDB's current_connection_id().
 */

let database: Database;

beforeEach(async () => {
  database = await Database.open({ path: ':memory:', catalogReaders: 1, resultReaders: 1 });
});
afterEach(async () => {
  await database.close();
});

const connectionId = async (session: InterruptibleSession) =>
  (await session.all<{ id: bigint }>('SELECT current_connection_id() AS id'))[0]?.id;

describe('results', () => {
  it('come whole, in order, as objects or arrays, over many chunks, with JS values', async () => {
    const rows = await database.read((s) =>
      s.all<{ i: bigint; t: string; d: number; n: null }>(
        'SELECT range AS i, range::VARCHAR AS t, range / 4 AS d, NULL AS n FROM range(5000) ORDER BY range',
      ),
    );
    expect(rows).toHaveLength(5000);
    expect(rows[4999]).toEqual({ i: 4999n, t: '4999', d: 1249.75, n: null });
    expect(rows.every((row, i) => row.i === BigInt(i))).toBe(true);
    const result = await database.read((s) => s.query('SELECT 1 AS a, 1 AS a, ?::INTEGER AS b', [7]));
    expect(result.columns).toEqual([
      { name: 'a', type: 'INTEGER' },
      { name: 'a', type: 'INTEGER' },
      { name: 'b', type: 'INTEGER' },
    ]);
    expect(result.rows).toEqual([[1, 1, 7]]);
    // Objects keep both of two same-named columns, as DuckDB's reader names them.
    expect(await database.read((s) => s.all('SELECT 1 AS a, 2 AS a'))).toEqual([{ a: 1, 'a:1': 2 }]);
    expect(await database.read((s) => s.all('SELECT 1 AS a WHERE false'))).toEqual([]);
  });
});

describe('reusable statements', () => {
  const DOUBLED = reusable('SELECT ?::INTEGER * 2 AS doubled, ?::VARCHAR AS text');

  it('give each run its own values, in turn and at once on one connection', async () => {
    await database.read(async (s) => {
      for (let i = 0; i < 5; i++)
        expect(await s.all(DOUBLED, [i, `v${i}`])).toEqual([{ doubled: i * 2, text: `v${i}` }]);
      // A second run while the first is bound prepares its own statement.
      const both = await Promise.all([s.all(DOUBLED, [10, 'a']), s.all(DOUBLED, [20, 'b'])]);
      expect(both).toEqual([[{ doubled: 20, text: 'a' }], [{ doubled: 40, text: 'b' }]]);
    });
  });

  it('fail as any statement does, and run again after', async () => {
    await database.read(async (s) => {
      await expect(s.all(DOUBLED, ['not a number', 'x'])).rejects.toBeInstanceOf(StorageError);
      expect(await s.all(DOUBLED, [3, 'y'])).toEqual([{ doubled: 6, text: 'y' }]);
    });
  });
});

describe('dedicated connections', () => {
  it('serve the next caller once the work is done', async () => {
    const first = await database.dedicated(connectionId);
    expect(await database.dedicated(connectionId)).toBe(first);
  });

  it('are not reused after an interrupt, or after the work failed', async () => {
    const interrupted = await database.dedicated(async (session) => {
      session.interrupt();
      return connectionId(session);
    });
    const next = await database.dedicated(connectionId);
    expect(next).not.toBe(interrupted);
    await expect(
      database.dedicated(async (session) => {
        await session.run('BEGIN TRANSACTION');
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await database.dedicated(connectionId)).not.toBe(next);
  });

  it('run as many at once as asked, each on its own connection', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ids = Promise.all(
      [1, 2, 3, 4, 5, 6].map(() =>
        database.dedicated(async (session) => {
          const id = await connectionId(session);
          await held;
          return id;
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect(new Set(await ids).size).toBe(6);
  });

  it('are out of reach of a caller that kept its session: the next caller is not interrupted', async () => {
    let kept: InterruptibleSession | undefined;
    const first = await database.dedicated(async (session) => {
      kept = session;
      return connectionId(session);
    });
    const second = await database.dedicated(async (session) => {
      // A stale interrupt (a cancel that came late) reaches nothing.
      kept?.interrupt();
      const [row] = await session.all<{ n: bigint }>('SELECT count(*) AS n FROM range(3000000)');
      return { id: await connectionId(session), n: row?.n };
    });
    expect(second).toEqual({ id: first, n: 3000000n });
    await expect(kept?.all('SELECT 1')).rejects.toThrow('used after its work ended');
  });

  it('are closed with the database', async () => {
    await database.dedicated(connectionId);
    await database.close();
    await expect(database.dedicated(connectionId)).rejects.toThrow();
  });
});

describe('a statement on DuckDB worker threads only (runOnWorkers)', () => {
  it('runs with its parameters, and fails as any statement does', async () => {
    await database.read((s) =>
      s.runOnWorkers('CREATE TEMP TABLE t AS SELECT range AS i FROM range(?)', [300_000]),
    );
    const [row] = await database.read((s) =>
      s.all<{ n: bigint; m: bigint }>('SELECT count(*) AS n, max(i) AS m FROM t'),
    );
    expect(row).toEqual({ n: 300_000n, m: 299_999n });
    await expect(database.read((s) => s.runOnWorkers('SELECT * FROM no_such_table'))).rejects.toThrow(
      /no_such_table/,
    );
    // Failing while it runs, not when prepared: the error is DuckDB's, and the connection serves on.
    await expect(
      database.read((s) => s.runOnWorkers("SELECT CAST('x' || range AS INTEGER) FROM range(10)")),
    ).rejects.toThrow(/Conversion Error/);
    const [one] = await database.read((s) => s.all<{ x: number }>('SELECT 1 AS x'));
    expect(one).toEqual({ x: 1 });
  });

  it('is stopped by an interrupt, and by shutdown', async () => {
    const error = await database
      .dedicated(async (session) => {
        const running = session.runOnWorkers('SELECT count(*) FROM range(100000000000) a');
        setTimeout(() => session.interrupt(), 100);
        await running;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    const running = database.read((s) => s.runOnWorkers('SELECT count(*) FROM range(100000000000) a'));
    running.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await database.close();
    await expect(running).rejects.toBeInstanceOf(DatabaseClosingError);
  });

  it('reads the pending result node-api keeps: without it the statement would wait by spinning', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const pending = await connection.start('SELECT 1');
    // What runOnWorkers reads; if a new node-api moves it, runOnWorkers still runs its
    // statement (as `run` would), but on the connection's thread again.
    expect(pending).toHaveProperty('pending_result');
    connection.closeSync();
    instance.closeSync();
  });

  it('runs as any statement where DuckDB has no worker thread', async () => {
    const single = await Database.open({
      path: ':memory:',
      catalogReaders: 1,
      resultReaders: 1,
      settings: { threads: '1' },
    });
    try {
      const [row] = await single.read(async (s) => {
        await s.runOnWorkers('CREATE TEMP TABLE u AS SELECT 42 AS x');
        return s.all<{ x: number }>('SELECT x FROM u');
      });
      expect(row).toEqual({ x: 42 });
    } finally {
      await single.close();
    }
  });
});
