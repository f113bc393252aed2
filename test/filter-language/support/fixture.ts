/**
 * A small result with one column of every kind the language treats differently, and rows
 * whose values sit on the edges (type limits, NULL, NaN, quotes, LIKE wildcards). The property
 * and injection tests run compiled filters against it in DuckDB and against `evaluate`.
 */
import { quoteIdentifier, type ResultColumn } from '../../../src/filter-language/index.js';
import type { TestDatabase } from './duckdb.js';

export type ValueKind = 'exact' | 'double' | 'text' | 'boolean' | 'date' | 'timestamp' | 'bytes';

/** Exact values are units of 10^-scale (bigint); bytes are lowercase hex; dates and timestamps normalised text. */
export type CellValue = bigint | number | string | boolean;

export interface FixtureColumn extends ResultColumn {
  kind: ValueKind;
  /** Exact columns: the scale of their units and the range of their type. */
  scale?: number;
  min?: bigint;
  max?: bigint;
  /** How an inserted value is written: `?` is its parameter. */
  insert: string;
  pool: readonly CellValue[];
}

const big = (bits: number) => 2n ** BigInt(bits);

export const FIXTURE_COLUMNS: readonly FixtureColumn[] = [
  {
    name: 'id',
    type: 'integer',
    kind: 'exact',
    scale: 0,
    min: -big(31),
    max: big(31) - 1n,
    insert: 'CAST(? AS INTEGER)',
    pool: [],
  },
  {
    name: 'i',
    type: 'bigint',
    kind: 'exact',
    scale: 0,
    min: -big(63),
    max: big(63) - 1n,
    insert: 'CAST(? AS BIGINT)',
    pool: [0n, 1n, -1n, 42n, big(53) + 1n, big(53), -big(63), big(63) - 1n, 1000n],
  },
  {
    name: 'ti',
    type: 'tinyint',
    kind: 'exact',
    scale: 0,
    min: -128n,
    max: 127n,
    insert: 'CAST(? AS TINYINT)',
    pool: [0n, 127n, -128n, 5n, -5n],
  },
  {
    name: 'h',
    type: 'hugeint',
    kind: 'exact',
    scale: 0,
    min: -big(127),
    max: big(127) - 1n,
    insert: 'CAST(? AS HUGEINT)',
    pool: [0n, big(100), -big(127), big(127) - 1n, 7n, big(64) + 1n],
  },
  {
    name: 'n',
    type: 'bignum',
    kind: 'exact',
    scale: 0,
    insert: 'CAST(? AS BIGNUM)',
    pool: [0n, big(255), -big(255), 10n ** 70n + 1n, 3n, big(256) - 1n],
  },
  {
    name: 'd',
    type: 'double',
    kind: 'double',
    insert: 'CAST(? AS DOUBLE)',
    pool: [
      0,
      -0,
      0.1,
      1.5,
      -2.25,
      1e300,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.NaN,
      2 ** 53 + 2,
      42,
    ],
  },
  {
    name: 'm',
    type: 'decimal(18,4)',
    kind: 'exact',
    scale: 4,
    min: -(10n ** 18n - 1n),
    max: 10n ** 18n - 1n,
    insert: 'CAST(? AS DECIMAL(18,4))',
    pool: [0n, 15000n, -1n, 10n ** 18n - 1n, 10000n, 420000n, -(10n ** 18n - 1n)],
  },
  {
    name: 's',
    type: 'varchar',
    kind: 'text',
    insert: '?',
    pool: [
      '',
      'a',
      'A',
      'abc',
      "it's",
      'a%b',
      'a_b',
      'x\\y',
      '"q"',
      'é',
      'É',
      'z',
      'Ab',
      '0x12',
      '5',
      'a\u0000b',
      "'; --",
    ],
  },
  { name: 'Odd "name", x', type: 'varchar', kind: 'text', insert: '?', pool: ['p', 'q', 'P', "p'q"] },
  { name: 'b', type: 'boolean', kind: 'boolean', insert: '?', pool: [true, false] },
  {
    name: 'dt',
    type: 'date',
    kind: 'date',
    insert: 'CAST(? AS DATE)',
    pool: ['2024-01-01', '2024-02-29', '1999-12-31', '0001-01-01', '9999-12-31'],
  },
  {
    name: 'ts',
    type: 'timestamp',
    kind: 'timestamp',
    insert: 'CAST(? AS TIMESTAMP)',
    pool: [
      '2024-01-01 00:00:00.000000',
      '2024-01-01 12:30:00.500000',
      '1970-01-01 00:00:00.000000',
      '2024-02-29 23:59:59.999999',
      '2024-01-01 12:30:00.000001',
    ],
  },
  {
    name: 'bl',
    type: 'blob',
    kind: 'bytes',
    insert: 'from_hex(?)',
    pool: ['', '00', 'ab', 'abcd', 'ff', '0001'],
  },
  {
    name: 'addr',
    type: 'varchar',
    kind: 'text',
    insert: '?',
    pool: [
      '0x870679e138bcdf293b7ff14dd44b70fc97e12fc0',
      '0x0000000000000000000000000000000000000001',
      '0xabc',
    ],
  },
  {
    name: 'tm',
    type: 'time',
    kind: 'text',
    insert: 'CAST(? AS TIME)',
    pool: ['00:00:00', '12:00:00', '23:59:59'],
  },
];

export const FIXTURE_TABLE = 'fixture';
export const FIXTURE_ROW_COUNT = 48;

export type FixtureRow = Record<string, CellValue | null>;

/** Deterministic rows in which every pool value, and NULL, occurs in every column. */
export const FIXTURE_ROWS: readonly FixtureRow[] = Array.from({ length: FIXTURE_ROW_COUNT }, (_, r) => {
  const row: FixtureRow = {};
  FIXTURE_COLUMNS.forEach((column, c) => {
    if (column.name === 'id') {
      row[column.name] = BigInt(r);
      return;
    }
    const slot = (r * (2 * c + 3) + c * 7) % (column.pool.length + 1);
    row[column.name] = slot === column.pool.length ? null : (column.pool[slot] as CellValue);
  });
  return row;
});

export function columnNamed(name: string): FixtureColumn {
  const column = FIXTURE_COLUMNS.find((c) => c.name === name);
  if (column === undefined) {
    throw new Error(`no fixture column ${name}`);
  }
  return column;
}

/** Decimal text of `units / 10^scale`, written independently of the code under test. */
export function unitsText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString();
  if (scale === 0) {
    return `${negative ? '-' : ''}${digits}`;
  }
  const padded = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
}

function insertParam(column: FixtureColumn, value: CellValue | null): string | boolean | null {
  if (value === null) {
    return null;
  }
  switch (column.kind) {
    case 'exact':
      return unitsText(value as bigint, column.scale ?? 0);
    case 'double':
      return String(value);
    default:
      return value as string | boolean;
  }
}

export async function createFixture(db: TestDatabase, table = FIXTURE_TABLE): Promise<void> {
  const columns = FIXTURE_COLUMNS.map((c) => `${quoteIdentifier(c.name)} ${c.type.toUpperCase()}`).join(', ');
  await db.rows(`CREATE TABLE ${table} (${columns})`);
  const placeholders = FIXTURE_COLUMNS.map((c) => c.insert).join(', ');
  for (const row of FIXTURE_ROWS) {
    await db.rows(
      `INSERT INTO ${table} VALUES (${placeholders})`,
      FIXTURE_COLUMNS.map((c) => insertParam(c, row[c.name] ?? null)),
    );
  }
}
