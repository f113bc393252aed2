import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import { tempDir } from '../support/service.js';

/**
 * Issue 22, item 5: shutdown keeps its deadline after large writes. The final CHECKPOINT runs
 * only for a small WAL and is given a time (DuckDB's own at close is turned off: it ran on the
 * event loop's thread for as long as it took); a large WAL is left, and the next open replays it.
 */

/** A database whose WAL holds `inserts` writes of 1,000 rows (about 38 KB each). */
async function withWal(file: string, inserts: number): Promise<Database> {
  const database = await Database.open({ path: file });
  // No automatic checkpoint: everything stays in the WAL until close.
  await database.outsideTransaction((s) => s.run("SET checkpoint_threshold = '10GB'"));
  await database.write((s) => s.run('CREATE TABLE t (id BIGINT, h VARCHAR)'));
  // Small writes, each under DuckDB's size for writing straight to the file: all in the WAL.
  for (let i = 0; i < inserts; i++) {
    await database.write((s) =>
      s.run(`INSERT INTO t SELECT range + ${i * 1000}, md5(range::VARCHAR) FROM range(1000)`),
    );
  }
  return database;
}

async function rows(file: string): Promise<number> {
  const reopened = await Database.open({ path: file });
  try {
    const [row] = await reopened.read((s) => s.all<{ n: bigint }>('SELECT count(*) AS n FROM t'));
    return Number(row?.n);
  } finally {
    await reopened.close();
  }
}

describe('closing the database', () => {
  it('leaves a large WAL for the next open, and loses nothing', async () => {
    const file = path.join(tempDir('close-'), 'db.duckdb');
    const database = await withWal(file, 40);
    const wal = fs.statSync(`${file}.wal`).size;
    expect(wal).toBeGreaterThan(1_100_000);
    await database.close(5_000, 30_000);
    expect(fs.statSync(`${file}.wal`).size).toBe(wal);
    expect(await rows(file)).toBe(40_000);
  });

  it('skips the checkpoint when given no time for it', async () => {
    const file = path.join(tempDir('close-'), 'db.duckdb');
    const database = await withWal(file, 5);
    const wal = fs.statSync(`${file}.wal`).size;
    await database.close(5_000, 0);
    expect(fs.statSync(`${file}.wal`).size).toBe(wal);
    expect(await rows(file)).toBe(5_000);
  });

  it('checkpoints a small WAL within its time', async () => {
    const file = path.join(tempDir('close-'), 'db.duckdb');
    const database = await withWal(file, 5);
    expect(fs.statSync(`${file}.wal`).size).toBeLessThan(1_000_000);
    await database.close(5_000, 30_000);
    expect(fs.existsSync(`${file}.wal`)).toBe(false);
    expect(await rows(file)).toBe(5_000);
  });
});
