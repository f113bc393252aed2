import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import type { Execution, SnapshotColumn } from '../../src/executions/execution.js';
import { snapshotName } from '../../src/executions/snapshot.js';
import type { SqlParam } from '../../src/filter-language/index.js';
import { type PageQuery, planRows, type RowsWanted } from '../../src/results/page-query.js';
import {
  type FileFormat,
  joinRows,
  PAGE_FORMATS,
  PARQUET_FORMAT,
  type PageFormat,
} from '../../src/results/result-format.js';
import { quoteLiteral } from '../../src/storage/sql.js';
import { openDatabase, type TestDatabase } from '../filter-language/support/duckdb.js';
import { tempDir } from '../support/service.js';

/**
 * The page-query compiler: one SELECT for every format and every way of choosing rows, as
 * plain `{select, params}` (checked without a database), and, run on DuckDB, the same rows in
 * the same order whatever the format; a format's rows joined in memory are the bytes its file
 * holds.
 */

const COLUMNS: SnapshotColumn[] = [
  { name: 'id', type: 'bigint' },
  { name: 'label', type: 'varchar' },
  { name: 'big', type: 'hugeint' },
  { name: 'x"; DROP TABLE t; --', type: 'double' },
];

const execution = {
  id: '01JTESTEXECUTION00000000000',
  columns: COLUMNS,
  rowCount: 10,
} as Execution;
const TABLE = snapshotName(execution.id);
const FORMATS: FileFormat[] = [PAGE_FORMATS.json, PAGE_FORMATS.csv, PARQUET_FORMAT];

describe('the SELECT of a page', () => {
  type Case = [
    what: string,
    asked: Parameters<typeof planRows>[1],
    wanted: RowsWanted,
    tail: string,
    params: unknown[],
  ];
  it.each<Case>([
    ['every row', {}, { kind: 'window', offset: 0 }, `FROM ${TABLE} ORDER BY rowid`, []],
    [
      'a window',
      {},
      { kind: 'window', offset: 5, limit: 2 },
      `FROM ${TABLE} ORDER BY rowid LIMIT ? OFFSET ?`,
      [2, 5],
    ],
    [
      'filtered and sorted',
      { filters: "label = 'a' AND id > 3", sortBy: 'id desc' },
      { kind: 'window', offset: 0, limit: 2 },
      `FROM ${TABLE} WHERE ("label" = ? AND "id" > CAST(? AS BIGINT)) ORDER BY "id" DESC, rowid LIMIT ?`,
      ['a', 3, 2],
    ],
    [
      'a sample',
      { sortBy: 'label' },
      { kind: 'sample', count: 3 },
      `FROM (SELECT *, rowid AS __ordinal FROM ${TABLE} ORDER BY random() LIMIT ?) ORDER BY "label" ASC, __ordinal`,
      [3],
    ],
    [
      'a range of row ids',
      {},
      { kind: 'rowIds', from: 4, to: 8 },
      `FROM ${TABLE} WHERE rowid >= ? AND rowid < ?`,
      [4, 8],
    ],
  ])('%s: the same query after each format’s select list', (_what, asked, wanted, tail, params) => {
    for (const format of FORMATS) {
      const query = planRows(execution, asked, format).select(wanted);
      expect(query).toEqual({ select: `SELECT ${format.selectList(COLUMNS)} ${tail}`, params });
    }
  });

  it('counts the rows the filters match, with their values bound', () => {
    const plan = planRows(execution, { filters: "label = 'x'' OR 1=1 --'" }, PAGE_FORMATS.json);
    expect(plan.count()).toEqual({
      select: `SELECT count(*) AS n FROM ${TABLE} WHERE "label" = ?`,
      params: ["x' OR 1=1 --"],
    });
    expect(plan.filtered).toBe(true);
    expect(plan.sorted).toBe(false);
  });

  it('quotes every name, and lists the asked columns in their order', () => {
    const plan = planRows(execution, { columns: '"x""; DROP TABLE t; --",id' }, PARQUET_FORMAT);
    expect(plan.columns.map((c) => c.name)).toEqual(['x"; DROP TABLE t; --', 'id']);
    expect(PARQUET_FORMAT.selectList(plan.columns)).toBe('"x""; DROP TABLE t; --", "id"');
  });

  it('refuses unknown names as the client’s error (400), naming them', () => {
    for (const asked of [{ columns: 'nope' }, { filters: 'nope = 1' }, { sortBy: 'nope' }]) {
      let error: unknown;
      try {
        planRows(execution, asked, PAGE_FORMATS.csv);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).message).toContain('nope');
    }
  });

  it('keys the same rows alike, and rows in another format or order apart', () => {
    const key = (asked: Parameters<typeof planRows>[1], format: FileFormat) =>
      planRows(execution, asked, format).key;
    expect(key({ columns: 'id' }, PAGE_FORMATS.json)).toBe(key({ columns: 'id' }, PAGE_FORMATS.json));
    expect(key({ columns: 'id' }, PAGE_FORMATS.json)).not.toBe(key({ columns: 'id' }, PAGE_FORMATS.csv));
    expect(key({ columns: 'id' }, PAGE_FORMATS.json)).not.toBe(
      key({ columns: 'id', sortBy: 'id' }, PAGE_FORMATS.json),
    );
  });
});

describe('the queries on DuckDB', () => {
  let db: TestDatabase;
  const dir = tempDir('page-query-');

  beforeAll(async () => {
    db = await openDatabase();
    await db.rows('CREATE SCHEMA _results');
    // Ties on label, so the order depends on rowid breaking them; text that needs quoting and escapes.
    await db.rows(
      `CREATE TABLE ${TABLE} AS SELECT i::BIGINT AS id, CASE WHEN i % 3 = 0 THEN 'a,"b"' ELSE 'c' END AS label,
        (170141183460469231731687303715884105727 - i)::HUGEINT AS big, i / 4 AS "x""; DROP TABLE t; --"
        FROM range(10) r(i)`,
    );
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (query: PageQuery) => db.rows(query.select, query.params as SqlParam[]);

  /** The ids a query selects, read back from what the format holds. */
  async function ids(
    format: FileFormat,
    asked: Parameters<typeof planRows>[1],
    wanted: RowsWanted,
  ): Promise<number[]> {
    const query = planRows(execution, asked, format).select(wanted);
    if (format === PARQUET_FORMAT) return (await run(query)).map((row) => Number(row.id));
    const rows = (await run(query)).map((row) => String(row.r));
    return rows.map((row) =>
      Number(format === PAGE_FORMATS.json ? (JSON.parse(row) as { id: number }).id : row.split(',')[0]),
    );
  }

  it.each<[string, Parameters<typeof planRows>[1], RowsWanted]>([
    ['sorted with ties, a window', { sortBy: 'label desc' }, { kind: 'window', offset: 2, limit: 5 }],
    ['filtered', { filters: "label = 'c'" }, { kind: 'window', offset: 1 }],
    ['a range of row ids', {}, { kind: 'rowIds', from: 3, to: 7 }],
  ])('%s: the same rows in the same order in every format', async (_what, asked, wanted) => {
    const json = await ids(PAGE_FORMATS.json, asked, wanted);
    expect(json.length).toBeGreaterThan(0);
    expect(await ids(PAGE_FORMATS.csv, asked, wanted)).toEqual(json);
    expect(await ids(PARQUET_FORMAT, asked, wanted)).toEqual(json);
  });

  it.each(['json', 'csv'] as const)(
    '%s: rows joined in memory are the bytes the file holds, less its trailing bytes',
    async (name) => {
      const format: PageFormat = PAGE_FORMATS[name];
      const query = planRows(execution, {}, format).select({ kind: 'window', offset: 0 });
      const file = path.join(dir, `rows.${format.extension}`);
      await run({
        ...query,
        select: `COPY (${query.select}) TO ${quoteLiteral(file)} (${format.copyOptions})`,
      });
      const rendered = (await run(query)).map((row) => String(row.r));
      const written = fs.readFileSync(file, 'utf8');
      expect(written.slice(0, written.length - format.trailingBytes)).toBe(joinRows(rendered, format));
      expect(joinRows([], format)).toBe('');
      // What a page's rows are: the inside of a JSON array, or whole CSV lines.
      const joined = joinRows(rendered, format);
      if (name === 'json') expect(JSON.parse(`[${joined}]`)).toHaveLength(10);
      else expect(joined.split('\n')).toEqual([...rendered, '']);
    },
  );
});
