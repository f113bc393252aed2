import { randomInt } from 'node:crypto';
import { badRequest } from '../errors.js';
import { type Execution, hasResult, type SnapshotColumn } from '../executions/execution.js';
import { csvRowExpression, jsonRowExpression } from '../executions/row-rendering.js';
import { snapshotName } from '../executions/snapshot.js';
import {
  compileFilters,
  compileSortBy,
  QueryLanguageError,
  resolveColumns,
} from '../filter-language/index.js';
import type { Database, Session, SqlValue } from '../storage/database.js';
import { LruCache } from './lru-cache.js';
import { PagePrefetch } from './page-prefetch.js';
import type { ResultRequest } from './result-request.js';
import { readResults } from './results-reader.js';
import {
  firstRows,
  joinRowsFiles,
  type RowsFile,
  removeRows,
  smallIntoMemory,
  startRowsFile,
  writeRowsFile,
} from './rows-file.js';
import { RowsInParts } from './rows-in-parts.js';

/**
 * The rows of a page, rendered by DuckDB as JSON objects or CSV lines. A small result
 * (most saved-query results) is read once per (columns, filters, sort) into memory, and
 * every page or sample of it is then cut in JavaScript; a large one is paged in DuckDB,
 * which writes each page into a file (rows-file.ts): a large page is sent from there and
 * never held in memory.
 */

export type ResultFormat = 'json' | 'csv';

export interface PageRows {
  /** The returned columns, in the order asked for. */
  columns: SnapshotColumn[];
  /** How many rows the page holds. */
  count: number;
  /**
   * The rows rendered and joined: JSON objects separated by `,`, or CSV lines each ending in
   * LF; in memory, or for a large page in files the caller sends and then removes (a long
   * range: in parts, written while the first ones are sent).
   */
  rows: Buffer | RowsFile | RowsInParts;
  /** Rows that match the filters (all rows without filters). */
  totalRowCount: number;
}

/** Rendered rows (JSON objects, or CSV lines without line ends) as a page's body. */
function joinRows(rows: readonly string[], format: ResultFormat): Buffer {
  return Buffer.from(format === 'json' ? rows.join(',') : rows.map((row) => `${row}\n`).join(''));
}

export interface ResultRowsOptions {
  /** Results up to this many rows are held in memory per (columns, filters, sort). */
  inMemoryMaxRows: number;
  /** Bytes of rendered rows held in memory at most. */
  cacheBytes: number;
  /** Where DuckDB writes pages of large results (DATA_DIR/tmp, a folder it may write). */
  tmpDir: string;
  /** A page from DuckDB of at most this many bytes is kept in memory; a larger one is sent from its file. */
  inMemoryPageBytes: number;
  /**
   * A long range is written in parts of about this many bytes each, at most two on disk at a
   * time (rows-in-parts.ts).
   */
  partBytes: number;
  /** Large pages written ahead of their request at most at a time, and how long one waits for it. */
  prefetch: { maxPages: number; ttlMs: number };
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

/** What of a request decides which rows are rendered, and how. */
type RowsAsked = Pick<ResultRequest, 'columns' | 'filters' | 'sortBy'>;

function plan(execution: Execution, request: RowsAsked, format: ResultFormat): Plan {
  try {
    return compilePlan(execution, request, format);
  } catch (error) {
    // The query language's errors are the client's: its messages name the parameter and position.
    if (error instanceof QueryLanguageError) throw badRequest(error.message);
    throw error;
  }
}

function compilePlan(execution: Execution, request: RowsAsked, format: ResultFormat): Plan {
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
  private readonly ahead: PagePrefetch;

  constructor(
    private readonly database: Database,
    private readonly options: ResultRowsOptions,
  ) {
    this.rowSets = new LruCache(options.cacheBytes, (rows) =>
      rows.reduce((sum, row) => sum + row.length * 2 + 32, 64),
    );
    this.ahead = new PagePrefetch(options.prefetch.maxPages, options.prefetch.ttlMs);
  }

  /**
   * Keeps the rows its run rendered (all columns, JSON, in row order: Executions.onFinished)
   * as the row set of a completed execution, so that its first page reads nothing from the
   * database. They are the execution's own rows, which never change.
   */
  remember(execution: Execution, rows: readonly string[]): void {
    if (!hasResult(execution) || rows.length > this.options.inMemoryMaxRows) return;
    this.rowSets.set(plan(execution, {}, 'json').key, rows as string[]);
  }

  /** Removes the pages written ahead (at shutdown). */
  close(): Promise<void> {
    return this.ahead.clear();
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
      const all = await this.rowSet(execution, p, readerOf(request));
      const rows = this.cut(all, request, p.selected.length, cap);
      return {
        columns: p.selected,
        count: rows.length,
        rows: joinRows(rows, format),
        totalRowCount: all.length,
      };
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

  private async rowSet(execution: Execution, p: Plan, reader: string): Promise<string[]> {
    const cached = this.rowSets.get(p.key);
    if (cached) return cached;
    let pending = this.loading.get(p.key);
    if (!pending) {
      pending = this.read(reader, (session) =>
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
    let total = execution.rowCount ?? 0;
    if (p.where) {
      const [count] = await this.read(readerOf(request), (session) =>
        session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table} ${p.where}`, p.params),
      );
      total = Number(count?.n ?? 0);
    }
    if (request.sampleCount === undefined && !p.where && !request.sortBy)
      return this.pageByRowIds(execution, request, p, total, cap);
    let count: number;
    let parts: PageQuery[];
    if (request.sampleCount !== undefined) {
      count = Math.min(request.sampleCount, total);
      checkDatapoints(count, p.selected.length, cap, request);
      parts = [
        {
          sql: `SELECT ${p.render} AS r FROM (SELECT *, rowid AS __ordinal FROM ${table} ORDER BY random() LIMIT ?) ORDER BY ${p.order('__ordinal')}`,
          params: [count],
        },
      ];
    } else {
      const available = Math.max(0, total - request.offset);
      count = Math.min(request.limit ?? available, available);
      checkDatapoints(count, p.selected.length, cap, request);
      if (count === 0) return { columns: p.selected, count, rows: Buffer.alloc(0), totalRowCount: total };
      parts = [
        {
          sql: `SELECT ${p.render} AS r FROM ${table} ${p.where} ORDER BY ${p.order('rowid')} LIMIT ? OFFSET ?`,
          params: [...p.params, count, request.offset],
        },
      ];
    }
    const rows = await this.writeParts(readerOf(request), parts, p.format);
    return {
      columns: p.selected,
      count,
      rows: await smallIntoMemory(rows, this.options.inMemoryPageBytes),
      totalRowCount: total,
    };
  }

  /**
   * An unfiltered, unsorted page: a range of the snapshot's row ids, whatever its offset. A
   * large one is sent from its files, and the page after it is written ahead.
   */
  private async pageByRowIds(
    execution: Execution,
    request: ResultRequest,
    p: Plan,
    total: number,
    cap: number,
  ): Promise<PageRows> {
    const available = Math.max(0, total - request.offset);
    const count = Math.min(request.limit ?? available, available);
    checkDatapoints(count, p.selected.length, cap, request);
    if (count === 0) return { columns: p.selected, count, rows: Buffer.alloc(0), totalRowCount: total };
    const table = snapshotName(execution.id);
    const reader = readerOf(request);
    const range = ([from, to]: [number, number]): PageQuery => ({
      sql: `SELECT ${p.render} AS r FROM ${table} WHERE rowid >= ? AND rowid < ?`,
      params: [from, to],
    });
    if (count > LONG_RANGE_ROWS) {
      const rowsPerPart = partRows(execution, this.options.partBytes);
      const ranges = rowIdParts(request.offset, count, rowsPerPart);
      // A part over two row groups is written on every thread by itself; smaller ones two at
      // a time. At most `atOnce` parts are started beyond the one being sent.
      const atOnce = rowsPerPart >= 2 * ROW_GROUP_ROWS ? 1 : PAGE_THREADS;
      const rows = new RowsInParts(
        ranges.length,
        (part) => {
          const { sql, params } = range(ranges[part] as [number, number]);
          const run = (copy: string, values: readonly SqlValue[]) =>
            this.read(reader, (session) => session.run(copy, values));
          return startRowsFile(run, sql, params, p.format, this.options.tmpDir);
        },
        atOnce,
        atOnce,
      );
      // The first rows before any byte is sent: a failure before them is still an answer of its own.
      try {
        await firstRows(rows.first);
      } catch (error) {
        await rows.discard();
        throw error;
      }
      return { columns: p.selected, count, rows, totalRowCount: total };
    }
    /**
     * A page in one statement, or (asked for now, nothing written ahead) in two at once.
     * Of two single-task statements at once, one runs on DuckDB's worker threads only
     * (Session.runOnWorkers): the second half of a page, and every other page written ahead.
     */
    const write = (offset: number, rows: number, how: 'halves' | 'one' | 'one on workers') => {
      if (how !== 'halves')
        return this.writeParts(
          reader,
          [{ ...range([offset, offset + rows]), onWorkers: how === 'one on workers' }],
          p.format,
        );
      const halves = rowIdRanges(offset, rows).map((r, i) => ({ ...range(r), onWorkers: i === 1 }));
      return this.writeParts(reader, halves, p.format);
    };
    const key = (offset: number, rows: number) => `${p.key}\u0000${offset}\u0000${rows}`;
    /**
     * The next PAGES_AHEAD pages, each in one statement, at the same time: DuckDB goes on
     * writing while this page travels and the client reads it. Pages within the datapoint cap
     * only: the ones a client follows next_uri through, whose files the cap bounds.
     */
    const writeAhead = () => {
      if (request.limit === undefined || count * p.selected.length > cap) return;
      let offset = request.offset + count;
      for (let page = 0; page < PAGES_AHEAD && offset < total; page++) {
        const from = offset;
        const rows = Math.min(request.limit, total - from);
        const how = Math.floor(from / request.limit) % 2 === 1 ? 'one on workers' : 'one';
        this.ahead.start(key(from, rows), () => write(from, rows, how));
        offset += rows;
      }
    };
    const ahead = this.ahead.take(key(request.offset, count));
    // A page written ahead was a large page's successor: so are the next ones, most likely.
    if (ahead) writeAhead();
    const written = (await ahead) ?? (await write(request.offset, count, 'halves'));
    const rows = await smallIntoMemory(written, this.options.inMemoryPageBytes);
    if (!ahead && !Buffer.isBuffer(rows)) writeAhead();
    return { columns: p.selected, count, rows, totalRowCount: total };
  }

  private read<T>(reader: string, work: (session: Session) => Promise<T>): Promise<T> {
    return readResults(this.database, reader, work);
  }

  /** Each part on a reader connection of its own, at the same time; then the files as one. */
  private async writeParts(
    reader: string,
    parts: readonly PageQuery[],
    format: ResultFormat,
  ): Promise<RowsFile> {
    const written = await Promise.allSettled(
      parts.map((part) =>
        this.read(reader, (session) =>
          writeRowsFile(session, part.sql, part.params, format, this.options.tmpDir, part.onWorkers),
        ),
      ),
    );
    const files = written.flatMap((w) => (w.status === 'fulfilled' ? [w.value] : []));
    const failed = written.find((w) => w.status === 'rejected');
    if (failed) {
      await Promise.all(files.map(removeRows));
      throw failed.reason;
    }
    return joinRowsFiles(files, format);
  }
}

/** Who asks for a page: results work is shared fairly between keys. */
const readerOf = (request: ResultRequest): string => request.reader ?? ANONYMOUS_READER;
const ANONYMOUS_READER = '';

interface PageQuery {
  /** Run on DuckDB's worker threads only (Session.runOnWorkers). */
  onWorkers?: boolean;
  sql: string;
  params: SqlValue[];
}

/**
 * Rows that DuckDB renders on one thread per statement: below this, a page is one statement.
 * DuckDB scans a table with one thread per row group (122,880 rows), so a page inside one
 * row group gets one thread however long it is; two statements over its halves, on two
 * connections, use both cores (41,666 rows of six columns, load average 3: 37 ms as one,
 * 31 ms as two, at best 33 and 19).
 */
const ROWS_PER_THREAD = 16_384;
const PAGE_THREADS = 2;
/**
 * Pages written ahead of a client following next_uri, each in one statement, all at once:
 * measured on 24 pages of 41,666 rows (six columns), two pages at once took 550–600 ms
 * and 890–990 ms of CPU, each page in two halves at once 670–730 ms and 1,070–1,160 ms.
 */
const PAGES_AHEAD = 2;
/** DuckDB's row group: a table scan's unit of parallelism. */
const ROW_GROUP_ROWS = 122_880;
/** A longer range is written in parts (rows-in-parts.ts), each sent while it is written. */
const LONG_RANGE_ROWS = PAGE_THREADS * ROW_GROUP_ROWS;
/** Rows per part for an execution's result: `partBytes` of its rows as JSON, at least ROWS_PER_THREAD. */
function partRows(execution: Execution, partBytes: number): number {
  const bytesPerRow = (execution.resultBytes ?? 0) / Math.max(1, execution.rowCount ?? 0);
  return Math.max(ROWS_PER_THREAD, Math.floor(partBytes / Math.max(1, bytesPerRow)));
}

/** A long range `offset … offset + count - 1` as parts `[from, to)` of at most `rowsPerPart` rows, of equal size. */
export function rowIdParts(offset: number, count: number, rowsPerPart: number): [number, number][] {
  return evenRanges(offset, count, Math.ceil(count / rowsPerPart));
}

/** `offset … offset + count - 1` as `parts` contiguous ranges `[from, to)` of equal size. */
function evenRanges(offset: number, count: number, parts: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (let i = 0; i < parts; i++) {
    ranges.push([offset + Math.floor((count * i) / parts), offset + Math.floor((count * (i + 1)) / parts)]);
  }
  return ranges;
}

/**
 * A page of the snapshot's rows `offset … offset + count - 1` as row-id ranges `[from, to)`.
 * A snapshot's row ids are 0, 1, … in result order, and DuckDB skips the row groups a range
 * excludes: the first 32,000 of a million rows took 47 ms this way and 1.1 s through ORDER BY
 * rowid LIMIT, which reads and sorts every row. Without ORDER BY, DuckDB writes a range in
 * the table's order, on every thread it has when the range spans row groups.
 */
export function rowIdRanges(offset: number, count: number): [number, number][] {
  return evenRanges(offset, count, Math.max(1, Math.min(PAGE_THREADS, Math.floor(count / ROWS_PER_THREAD))));
}
