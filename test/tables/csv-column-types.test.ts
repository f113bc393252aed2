import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import { replaceTableWithCsv } from '../../src/tables/csv-loader.js';
import { tempDir } from '../support/service.js';

let database: Database;
let dir: string;

beforeAll(async () => {
  database = await Database.open({ path: ':memory:' });
  dir = tempDir('csv-types-');
});
afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let jobs = 0;

/** Loads a one-column CSV of `values` and returns the column's type and values as text. */
async function load(values: string[]): Promise<{ type: string; text: (string | null)[] }> {
  const file = path.join(dir, `c${++jobs}.csv`);
  const quote = (v: string) => (/[",\n]/.test(v) || v === '' ? `"${v.replaceAll('"', '""')}"` : v);
  fs.writeFileSync(file, `v\n${values.map(quote).join('\n')}\n`);
  const table = `t${jobs}`;
  const loaded = await replaceTableWithCsv(
    database,
    { file, columnNames: ['v'], namespace: 'types', table, jobId: `job${jobs}` },
    async () => undefined,
  );
  const rows = await database.read((s) =>
    s.all<{ v: string | null }>(`SELECT CAST(v AS VARCHAR) AS v FROM types.${table}`),
  );
  return { type: loaded.columns[0]?.type ?? '', text: rows.map((r) => r.v) };
}

describe('CSV type inference', () => {
  const cases: [string, string[], string][] = [
    ['integers', ['1', '-2', '0', '9223372036854775807'], 'BIGINT'],
    ['integers beyond 64 bits', ['1', '170141183460469231731687303715884105727'], 'HUGEINT'],
    [
      'integers beyond 128 bits stay exact as text',
      ['1', '1701411834604692317316873037158841057270'],
      'VARCHAR',
    ],
    ['decimals', ['1.5', '-0.25', '3'], 'DOUBLE'],
    ['exponents and leading points', ['1e3', '.5', '-2.5E-3'], 'DOUBLE'],
    ['more digits than a double holds', ['0.1234567890123456789', '1.5'], 'DECIMAL(20,19)'],
    ['negative zero keeps its sign as a double', ['1', '-0'], 'DOUBLE'],
    ['booleans in any case', ['true', 'FALSE', 'True'], 'BOOLEAN'],
    ['dates', ['2024-01-05', '2024-02-29'], 'DATE'],
    [
      'timestamps, T, Z and UTC',
      [
        '2024-01-05 10:00:00',
        '2024-01-05T10:00:00.123456',
        '2024-01-05 10:00:00Z',
        '2024-01-05 10:00:00 UTC',
      ],
      'TIMESTAMP',
    ],
  ];
  for (const [name, values, type] of cases) {
    it(`${name}: ${type}`, async () => {
      expect((await load(values)).type).toBe(type);
    });
  }

  const lossy: [string, string[]][] = [
    ['leading zeros', ['1', '007']],
    ['a plus sign', ['1', '+5']],
    ['surrounding spaces', ['1', ' 5']],
    ['digit separators', ['1', '1_000']],
    ['hex', ['1', '0x10']],
    ['infinity and NaN', ['1.5', 'inf', 'NaN']],
    ['a double overflow', ['1.5', '1e400']],
    ['a timestamp with an offset', ['2024-01-05 10:00:00', '2024-01-05 10:00:00+02:00']],
    ['nanoseconds', ['2024-01-05 10:00:00.123456789']],
    ['an impossible date', ['2024-01-05', '2024-02-30']],
    ['t and f', ['t', 'f']],
    ['0 and 1 with true', ['true', '1']],
  ];
  for (const [name, values] of lossy) {
    it(`keeps ${name} as text, exactly`, async () => {
      const { type, text } = await load(values);
      expect(type).toBe('VARCHAR');
      expect(text).toEqual(values);
    });
  }

  it('widens after the sample: a text value at row 30,001 makes the column VARCHAR', async () => {
    const values = [...Array.from({ length: 30_000 }, (_, i) => String(i)), 'late text'];
    const { type, text } = await load(values);
    expect(type).toBe('VARCHAR');
    expect(text).toEqual(values);
  });

  it('widens after the sample: a long decimal at row 30,001 makes the column DECIMAL', async () => {
    const values = [...Array.from({ length: 30_000 }, (_, i) => `${i}.5`), '1.000000000000000000001'];
    const { type, text } = await load(values);
    // 29999 has five integer digits.
    expect(type).toBe('DECIMAL(26,21)');
    expect(text.at(-1)).toBe('1.000000000000000000001');
  });

  it('an all-NULL column is VARCHAR', async () => {
    expect((await load(['', ''].map(() => ''))).type).toBe('VARCHAR');
  });
});
