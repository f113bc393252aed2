import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import { tempDir } from '../support/service.js';

/**
 * Issue 22, item 5: shutdown keeps its deadline after large writes. The final CHECKPOINT is
 * given a time and then interrupted, or skipped (DuckDB's own at close is turned off: it ran
 * on the event loop's thread for as long as it took); the WAL keeps every commit, and the next
 * open replays it.
 */

async function withLargeWal(file: string): Promise<Database> {
  const database = await Database.open({ path: file });
  // No automatic checkpoint: everything stays in the WAL until close.
  await database.outsideTransaction((s) => s.run("SET checkpoint_threshold = '10GB'"));
  await database.write((s) => s.run('CREATE TABLE t (id BIGINT, h VARCHAR)'));
  // Small writes, each under DuckDB's size for writing straight to the file: all in the WAL.
  for (let i = 0; i < 40; i++) {
    await database.write((s) =>
      s.run(`INSERT INTO t SELECT range + ${i * 1000}, md5(range::VARCHAR) FROM range(1000)`),
    );
  }
  return database;
}

describe('closing the database', () => {
  it('skips the checkpoint when given no time for it, and loses nothing', async () => {
    const file = path.join(tempDir('close-'), 'db.duckdb');
    const database = await withLargeWal(file);
    const wal = fs.statSync(`${file}.wal`).size;
    expect(wal).toBeGreaterThan(1_000_000);
    await database.close(5_000, 0);
    expect(fs.statSync(`${file}.wal`).size).toBe(wal);
    const reopened = await Database.open({ path: file });
    const [row] = await reopened.read((s) => s.all<{ n: bigint }>('SELECT count(*) AS n FROM t'));
    expect(Number(row?.n)).toBe(40_000);
    await reopened.close();
    expect(fs.existsSync(`${file}.wal`)).toBe(false);
  });

  it('checkpoints within its time when it can', async () => {
    const file = path.join(tempDir('close-'), 'db.duckdb');
    const database = await withLargeWal(file);
    await database.close(5_000, 30_000);
    expect(fs.existsSync(`${file}.wal`)).toBe(false);
  });
});
