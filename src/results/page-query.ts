import { badRequest } from '../errors.js';
import type { Execution, SnapshotColumn } from '../executions/execution.js';
import { snapshotName } from '../executions/snapshot.js';
import {
  compileFilters,
  compileSortBy,
  QueryLanguageError,
  resolveColumns,
} from '../filter-language/index.js';
import type { SqlValue } from '../storage/database.js';
import type { FileFormat } from './result-format.js';
import type { ResultRequest } from './result-request.js';

/**
 * The one place results SQL is written: the SELECT of a page's rows over an execution's
 * snapshot, for every format (JSON and CSV pages, Parquet files) and every way of choosing
 * rows. The request's names and values are checked and compiled by the filter language;
 * every value is a bound parameter. Ties in any order break on the snapshot's rowid, so a
 * result's pages never overlap or skip, and a Parquet file's order is the pages' order.
 */

export interface PageQuery {
  select: string;
  params: SqlValue[];
}

/** Which rows of the result a query selects. */
export type RowsWanted =
  /** Those matching the filters, in the asked order, from `offset`, at most `limit`. */
  | { kind: 'window'; offset: number; limit?: number }
  /** `count` rows drawn uniformly, in the asked order (no filters: the request refuses them). */
  | { kind: 'sample'; count: number }
  /**
   * Row ids `[from, to)`, for an unfiltered, unsorted request. A snapshot's row ids are 0, 1, …
   * in result order, and DuckDB skips the row groups a range excludes: the first 32,000 of a
   * million rows took 47 ms this way and 1.1 s through ORDER BY rowid LIMIT, which reads and
   * sorts every row. Without ORDER BY, DuckDB writes a range in the table's order, on every
   * thread it has when the range spans row groups.
   */
  | { kind: 'rowIds'; from: number; to: number };

/** What of a request decides which rows are selected, and in what order. */
export type RowsAsked = Pick<ResultRequest, 'columns' | 'filters' | 'sortBy'>;

/** A request's rows compiled once, and the queries over them. */
export interface RowsPlan {
  /** The returned columns, in the order asked for. */
  readonly columns: SnapshotColumn[];
  readonly filtered: boolean;
  readonly sorted: boolean;
  /** The same for every request of the same rows, columns and format (for caches). */
  readonly key: string;
  select(wanted: RowsWanted): PageQuery;
  /** How many rows match the filters, as `n`. */
  count(): PageQuery;
}

/** Compiles a request's `columns`, `filters` and `sort_by`; their errors are the client's (400). */
export function planRows(execution: Execution, asked: RowsAsked, format: FileFormat): RowsPlan {
  try {
    return new CompiledRows(execution, asked, format);
  } catch (error) {
    // The query language's messages name the parameter and the position.
    if (error instanceof QueryLanguageError) throw badRequest(error.message);
    throw error;
  }
}

/**
 * The SQL text is written only when a query is asked for: a page of a small result is cut from
 * rows already in memory, and rendering the select list took a fifth of such a page's CPU
 * (a sample of 10 rows of the metrics result, 35 µs per answer, in a profile).
 */
class CompiledRows implements RowsPlan {
  readonly columns: SnapshotColumn[];
  readonly filtered: boolean;
  readonly sorted: boolean;
  readonly key: string;
  private readonly where: string;
  private readonly filterParams: SqlValue[];
  private readonly sort: string;
  private rowsFrom?: string;

  constructor(
    private readonly execution: Execution,
    asked: RowsAsked,
    private readonly format: FileFormat,
  ) {
    const all = execution.columns ?? [];
    this.columns = asked.columns ? resolveColumns(asked.columns, all) : all;
    const filter = asked.filters ? compileFilters(asked.filters, all) : undefined;
    this.sort = asked.sortBy ? compileSortBy(asked.sortBy, all) : '';
    this.where = filter ? ` WHERE ${filter.sql}` : '';
    this.filterParams = (filter?.params ?? []) as SqlValue[];
    this.filtered = filter !== undefined;
    this.sorted = Boolean(asked.sortBy);
    this.key = JSON.stringify([
      execution.id,
      format.name,
      this.columns.map((c) => c.name),
      asked.filters ?? '',
      asked.sortBy ?? '',
    ]);
  }

  select(wanted: RowsWanted): PageQuery {
    const table = snapshotName(this.execution.id);
    this.rowsFrom ??= `SELECT ${this.format.selectList(this.columns)} FROM`;
    const rows = this.rowsFrom;
    switch (wanted.kind) {
      case 'window':
        return this.window(
          `${rows} ${table}${this.where}${this.order('rowid')}`,
          wanted.offset,
          wanted.limit,
        );
      case 'sample':
        return {
          select: `${rows} (SELECT *, rowid AS __ordinal FROM ${table} ORDER BY random() LIMIT ?)${this.order('__ordinal')}`,
          params: [wanted.count],
        };
      case 'rowIds':
        return {
          select: `${rows} ${table} WHERE rowid >= ? AND rowid < ?`,
          params: [wanted.from, wanted.to],
        };
    }
  }

  count(): PageQuery {
    return {
      select: `SELECT count(*) AS n FROM ${snapshotName(this.execution.id)}${this.where}`,
      params: this.filterParams,
    };
  }

  /** ORDER BY the asked order, ties broken by `ordinal`. */
  private order(ordinal: string): string {
    return ` ORDER BY ${this.sort ? `${this.sort}, ` : ''}${ordinal}`;
  }

  private window(select: string, offset: number, limit: number | undefined): PageQuery {
    const params = [...this.filterParams];
    let sql = select;
    if (limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(limit);
    }
    if (offset > 0) {
      sql += ' OFFSET ?';
      params.push(offset);
    }
    return { select: sql, params };
  }
}
