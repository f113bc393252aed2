import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import {
  CsvReadError,
  InterruptedError,
  OutOfMemoryError,
  RaisedError,
  raise,
  StorageError,
} from '../../src/storage/storage-error.js';
import { readCsv } from '../../src/tables/csv-dialect.js';
import { tempDir } from '../support/service.js';

/**
 * storage-error.ts is the one place that reads DuckDB's error texts. Each text it relies on
 * is produced here by a real DuckDB, so an upgrade that rewords one fails here, not in a
 * client's answer.
 */

let database: Database;
let dir: string;

beforeAll(async () => {
  database = await Database.open({
    path: ':memory:',
    catalogReaders: 1,
    resultReaders: 1,
    settings: { memory_limit: '300MB', threads: '2' },
  });
  dir = tempDir('storage-error-');
});
afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function failure(sql: string): Promise<unknown> {
  try {
    await database.read((s) => s.run(sql));
  } catch (error) {
    return error;
  }
  throw new Error(`no error from ${sql}`);
}

function csv(name: string, bytes: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

const reading = (file: string, fieldCount = 2, lineEnd: 'lf' | 'crlf' = 'lf') =>
  `SELECT * FROM ${readCsv({ parts: [{ file, firstLine: 2 }], fieldCount, lineEnd })}`;

describe('DuckDB errors become types', () => {
  const csvCases: [string, string | Buffer, string, number | undefined][] = [
    ['too many fields', 'a,b\n1,2\n3,4,5\n', 'field-count', 3],
    ['too few fields', 'a,b\n1,2\n3\n', 'field-count', 3],
    ['an unterminated quote', 'a,b\n1,2\n3,"4\n', 'unterminated-quote', 3],
    ['a line over max_line_size', `a,b\n1,${'x'.repeat(2_100_000)}\n`, 'line-too-long', 2],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('a,b\n1,'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]),
      'encoding',
      2,
    ],
  ];
  for (const [name, body, problem, line] of csvCases) {
    it(`a CSV with ${name}: CsvReadError ${problem}`, async () => {
      const error = await failure(reading(csv(`${problem}.csv`, body)));
      expect(error).toBeInstanceOf(CsvReadError);
      expect(error).toMatchObject({ problem, line });
    });
  }

  it('a CSV mixing line ends: CsvReadError line-ends, without a line', async () => {
    const error = await failure(reading(csv('mixed.csv', 'a,b\r\n1,2\r\n3,4\n5,6\r\n'), 2, 'crlf'));
    expect(error).toBeInstanceOf(CsvReadError);
    expect(error).toMatchObject({ problem: 'line-ends', line: undefined });
  });

  it('a record longer than the reader buffer (32 MiB): CsvReadError line-too-long, not a silent skip', async () => {
    const error = await failure(reading(csv('huge.csv', `a,b\n1,2\n3,${'x'.repeat(34_000_000)}\n5,6\n`)));
    expect(error).toBeInstanceOf(CsvReadError);
    expect(error).toMatchObject({ problem: 'line-too-long' });
  });

  it('raise(payload): RaisedError with the payload, whatever DuckDB wraps around it', async () => {
    const error = await failure(`SELECT CASE WHEN range = 3 THEN ${raise('widen:3')} END FROM range(10)`);
    expect(error).toBeInstanceOf(RaisedError);
    expect((error as RaisedError).payload).toBe('widen:3');
    expect(() => raise("it's")).toThrow();
  });

  it('an interrupted statement: InterruptedError', async () => {
    const error = await database
      .dedicated(async (session) => {
        const running = session.run('SELECT count(*) FROM range(100000000000) a');
        setTimeout(() => session.interrupt(), 100);
        await running;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
  });

  it('DuckDB out of memory: OutOfMemoryError', async () => {
    const error = await failure('SELECT list(range) FROM range(200000000)');
    expect(error).toBeInstanceOf(OutOfMemoryError);
  });

  it('anything else stays a plain StorageError', async () => {
    const error = await failure('SELECT * FROM no_such_table');
    expect(error).toBeInstanceOf(StorageError);
    expect(error).not.toBeInstanceOf(CsvReadError);
  });
});
