import { randomInt } from 'node:crypto';
import { badRequest } from '../errors.js';
import type { Execution, SnapshotColumn } from '../executions/execution.js';
import { csvRowExpression, jsonRowExpression } from '../executions/row-rendering.js';
import { snapshotName } from '../executions/snapshot.js';
import {
  compileFilters,
  compileSortBy,
  QueryLanguageError,
  resolveColumns,
} from '../filter-language/index.js';
import type { Database, SqlValue } from '../storage/database.js';
import { LruCache } from './lru-cache.js';
import type { ResultRequest } from './result-request.js';

/**
 * The rows of a page, rendered by DuckDB as JSON objects or CSV lines. A small result
 * (most saved-query results) is read once per (columns, filters, sort) into memory, and
 * every page or sample of it is then cut in JavaScript; a large one is paged in DuckDB.
 */

export type ResultFormat = 'json' | 'csv';

export interface PageRows {
  /** The returned columns, in the order asked for. */
  columns: SnapshotColumn[];
  /** How many rows the page holds. */
  count: number;
  /** The rows rendered and joined: JSON objects separated by `,`, or CSV lines each ending in LF. */
  body: string;
  /** Rows that match the filters (all rows without filters). */
  totalRowCount: number;
}

/** Rendered rows (JSON objects, or CSV lines without line ends) as a page's body. */
function joinRows(rows: readonly string[], format: ResultFormat): string {
  return format === 'json' ? rows.join(',') : rows.map((row) => `${row}\n`).join('');
}

function pageOf(
  columns: SnapshotColumn[],
  rows: readonly string[],
  format: ResultFormat,
  total: number,
): PageRows {
  return { columns, count: rows.length, body: joinRows(rows, format), totalRowCount: total };
}

export interface ResultRowsOptions {
  /** Results up to this many rows are held in memory per (columns, filters, sort). */
  inMemoryMaxRows: number;
  /** Bytes of rendered rows held in memory at most. */
  cacheBytes: number;
}

interface Plan {
  selected: SnapshotColumn[];
  where: string;
  params: SqlValue[];
  /** ORDER BY text using `ordinal` as the final tie-breaker. */
  order: (ordinal: string) => string;
  render: string;
  format: ResultFormat;
  key: string;
}

function plan(execution: Execution, request: ResultRequest, format: ResultFormat): Plan {
  try {
    return compilePlan(execution, request, format);
  } catch (error) {
    // The query language's errors are the client's: its messages name the parameter and position.
    if (error instanceof QueryLanguageError) throw badRequest(error.message);
    throw error;
  }
}

function compilePlan(execution: Execution, request: ResultRequest, format: ResultFormat): Plan {
  const all = execution.columns ?? [];
  const selected = request.columns ? resolveColumns(request.columns, all) : all;
  const filter = request.filters ? compileFilters(request.filters, all) : undefined;
  const sort = request.sortBy ? compileSortBy(request.sortBy, all) : '';
  const names = selected.map((c) => c.name);
  return {
    selected,
    where: filter ? `WHERE ${filter.sql}` : '',
    params: (filter?.params ?? []) as SqlValue[],
    order: (ordinal) => (sort ? `${sort}, ${ordinal}` : ordinal),
    render: format === 'json' ? jsonRowExpression(selected) : csvRowExpression(selected),
    format,
    key: JSON.stringify([execution.id, format, names, request.filters ?? '', request.sortBy ?? '']),
  };
}

/** Refuses a page over the datapoint cap, saying how to get the rows another way. */
function checkDatapoints(rows: number, columns: number, cap: number, request: ResultRequest): void {
  if (request.ignoreMaxDatapoints || rows * columns <= cap) return;
  const maxRows = Math.max(1, Math.floor(cap / Math.max(columns, 1)));
  throw badRequest(
    `this page would hold ${rows * columns} datapoints (${rows} rows × ${columns} columns), over the limit of ${cap} per request: ` +
      `page with limit=${maxRows} or less and follow next_uri, ask for fewer columns with "columns", ` +
      'or add ignore_max_datapoints_per_request=true',
  );
}

/** `count` distinct indices out of `total`, uniformly, in increasing order (Floyd's algorithm). */
export function sampleIndices(total: number, count: number): number[] {
  const chosen = new Set<number>();
  for (let j = total - count; j < total; j++) {
    const t = randomInt(0, j + 1);
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen].sort((a, b) => a - b);
}

export class ResultRows {
  private readonly rowSets: LruCache<string[]>;
  private readonly loading = new Map<string, Promise<string[]>>();

  constructor(
    private readonly database: Database,
    private readonly options: ResultRowsOptions,
  ) {
    this.rowSets = new LruCache(options.cacheBytes, (rows) =>
      rows.reduce((sum, row) => sum + row.length * 2 + 32, 64),
    );
  }

  /** What the row-set cache holds now and may hold at most, by its own size estimate. */
  get cache(): { bytes: number; maxBytes: number } {
    return { bytes: this.rowSets.bytes, maxBytes: this.rowSets.maxBytes };
  }

  async page(
    execution: Execution,
    request: ResultRequest,
    format: ResultFormat,
    cap: number,
  ): Promise<PageRows> {
    const p = plan(execution, request, format);
    if ((execution.rowCount ?? 0) <= this.options.inMemoryMaxRows) {
      const all = await this.rowSet(execution, p);
      return pageOf(p.selected, this.cut(all, request, p.selected.length, cap), format, all.length);
    }
    return this.pageFromDatabase(execution, request, p, cap);
  }

  private cut(all: string[], request: ResultRequest, columns: number, cap: number): string[] {
    if (request.sampleCount !== undefined) {
      const count = Math.min(request.sampleCount, all.length);
      checkDatapoints(count, columns, cap, request);
      return sampleIndices(all.length, count).map((i) => all[i] as string);
    }
    const available = Math.max(0, all.length - request.offset);
    const count = Math.min(request.limit ?? available, available);
    checkDatapoints(count, columns, cap, request);
    return all.slice(request.offset, request.offset + count);
  }

  private async rowSet(execution: Execution, p: Plan): Promise<string[]> {
    const cached = this.rowSets.get(p.key);
    if (cached) return cached;
    let pending = this.loading.get(p.key);
    if (!pending) {
      pending = this.database
        .read((session) =>
          session.query(
            `SELECT ${p.render} AS r FROM ${snapshotName(execution.id)} ${p.where} ORDER BY ${p.order('rowid')}`,
            p.params,
          ),
        )
        .then((result) => result.rows.map((row) => row[0] as string))
        .finally(() => this.loading.delete(p.key));
      this.loading.set(p.key, pending);
      const rows = await pending;
      this.rowSets.set(p.key, rows);
      return rows;
    }
    return pending;
  }

  private async pageFromDatabase(
    execution: Execution,
    request: ResultRequest,
    p: Plan,
    cap: number,
  ): Promise<PageRows> {
    const table = snapshotName(execution.id);
    return this.database.read(async (session) => {
      let total = execution.rowCount ?? 0;
      if (p.where) {
        const [count] = await session.all<{ n: bigint }>(
          `SELECT count(*) AS n FROM ${table} ${p.where}`,
          p.params,
        );
        total = Number(count?.n ?? 0);
      }
      let sql: string;
      let params: SqlValue[];
      if (request.sampleCount !== undefined) {
        const count = Math.min(request.sampleCount, total);
        checkDatapoints(count, p.selected.length, cap, request);
        sql = `SELECT ${p.render} AS r FROM (SELECT *, rowid AS __ordinal FROM ${table} ORDER BY random() LIMIT ?) ORDER BY ${p.order('__ordinal')}`;
        params = [count];
      } else {
        const available = Math.max(0, total - request.offset);
        const count = Math.min(request.limit ?? available, available);
        checkDatapoints(count, p.selected.length, cap, request);
        if (count === 0) return pageOf(p.selected, [], p.format, total);
        if (!p.where && !request.sortBy) {
          // A snapshot's row ids are 0, 1, … in result order, and DuckDB skips the row groups
          // a range of them excludes: the first 32,000 of a million rows took 47 ms this way
          // and 1.1 s through ORDER BY rowid LIMIT, which reads and sorts every row. DuckDB
          // joins the rows too: one string costs 52 ms of CPU where 32,000 cost 90.
          const [page] = await session.all<{ body: string }>(
            `SELECT coalesce(string_agg(${p.format === 'json' ? `${p.render}, ','` : `${p.render} || chr(10), ''`} ORDER BY rowid), '') AS body
               FROM ${table} WHERE rowid >= ? AND rowid < ?`,
            [request.offset, request.offset + count],
          );
          return { columns: p.selected, count, body: page?.body ?? '', totalRowCount: total };
        } else {
          sql = `SELECT ${p.render} AS r FROM ${table} ${p.where} ORDER BY ${p.order('rowid')} LIMIT ? OFFSET ?`;
          params = [...p.params, count, request.offset];
        }
      }
      const result = await session.query(sql, params);
      return pageOf(
        p.selected,
        result.rows.map((row) => row[0] as string),
        p.format,
        total,
      );
    });
  }
}
