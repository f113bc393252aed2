import { randomInt } from 'node:crypto';
import { badRequest } from '../errors.js';
import { type Execution, hasResult } from '../executions/execution.js';
import type { Database } from '../storage/database.js';
import type { PageShape } from './envelope.js';
import { LruCache } from './lru-cache.js';
import { BytesBody, NO_ROWS, type PageBody } from './page-body.js';
import { planRows, type RowsPlan, type RowsWanted } from './page-query.js';
import { joinRows, PAGE_FORMATS, type ResultFormat } from './result-format.js';
import type { ResultRequest } from './result-request.js';
import { type PageAsked, type PageRange, RowIdPages } from './row-id-pages.js';
import { RowsWriter } from './rows-file.js';

/**
 * The rows of a page, rendered by DuckDB as JSON objects or CSV lines. A small result
 * (most saved-query results) is read once per (columns, filters, sort) into memory, and
 * every page or sample of it is then cut in JavaScript; a large one is paged in DuckDB,
 * which writes each page into a file (rows-file.ts): a large page is sent from there and
 * never held in memory.
 */

export interface PageRows extends PageShape {
  /**
   * The rows rendered and joined: JSON objects separated by `,`, or CSV lines each ending in
   * LF; in memory, or for a large page in files the caller sends and then removes (a long
   * range: in parts, written while the first ones are sent).
   */
  rows: PageBody;
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
  /** A long range is written in parts of about this many bytes each (rows-in-parts.ts). */
  partBytes: number;
  /** Large pages written ahead of their request at most at a time, and how long one waits for it. */
  prefetch: { maxPages: number; ttlMs: number };
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

/** How many rows the page holds, of `total` that match. */
function pageRowCount(request: ResultRequest, total: number): number {
  if (request.sampleCount !== undefined) return Math.min(request.sampleCount, total);
  const available = Math.max(0, total - request.offset);
  return Math.min(request.limit ?? available, available);
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

/** Who asks for a page: results work is shared fairly between keys. */
const readerOf = (request: ResultRequest): string => request.reader ?? ANONYMOUS_READER;
const ANONYMOUS_READER = '';

export class ResultRows {
  private readonly rowSets: LruCache<string[]>;
  private readonly loading = new Map<string, Promise<string[]>>();
  private readonly files: RowsWriter;
  private readonly ranges: RowIdPages;

  constructor(
    database: Database,
    private readonly options: ResultRowsOptions,
    /** Settles once the execution's table is written (Executions.resultStored): before any SQL on it. */
    private readonly stored: (executionId: string) => Promise<void> = async () => undefined,
  ) {
    this.rowSets = new LruCache(options.cacheBytes, (rows) =>
      rows.reduce((sum, row) => sum + row.length * 2 + 32, 64),
    );
    this.files = new RowsWriter(database, options.tmpDir);
    this.ranges = new RowIdPages(this.files, options);
  }

  /**
   * Keeps the rows its run rendered (all columns, JSON, in row order: Executions.onFinished)
   * as the row set of a completed execution, so that its first page reads nothing from the
   * database. They are the execution's own rows, which never change.
   */
  remember(execution: Execution, rows: readonly string[]): void {
    if (!hasResult(execution) || rows.length > this.options.inMemoryMaxRows) return;
    this.rowSets.set(planRows(execution, {}, PAGE_FORMATS.json).key, rows as string[]);
  }

  /** Removes the pages written ahead (at shutdown). */
  close(): Promise<void> {
    return this.ranges.close();
  }

  /** What the row-set cache holds now and may hold at most, by its own size estimate. */
  get cache(): { bytes: number; maxBytes: number } {
    return { bytes: this.rowSets.bytes, maxBytes: this.rowSets.maxBytes };
  }

  async page(
    execution: Execution,
    request: ResultRequest,
    formatName: ResultFormat,
    cap: number,
  ): Promise<PageRows> {
    const format = PAGE_FORMATS[formatName];
    const plan = planRows(execution, request, format);
    const inMemory = (execution.rowCount ?? 0) <= this.options.inMemoryMaxRows;
    const all = inMemory ? await this.rowSet(execution, plan, readerOf(request)) : undefined;
    // A large result is read by SQL from here on: its table must be there.
    if (!all) await this.stored(execution.id);
    const total = all?.length ?? (await this.matching(execution, plan, request));
    const count = pageRowCount(request, total);
    checkDatapoints(count, plan.columns.length, cap, request);
    if (all) {
      const rows = new BytesBody(Buffer.from(joinRows(cut(all, request, count), format)));
      return { columns: plan.columns, count, totalRowCount: total, rows };
    }
    if (count === 0) return { columns: plan.columns, count, totalRowCount: total, rows: NO_ROWS };
    // A client paging within the cap follows next_uri: its next pages may be written ahead.
    const next =
      request.limit !== undefined && count * plan.columns.length <= cap ? request.limit : undefined;
    const asked: PageAsked = { plan, format, reader: readerOf(request) };
    const range: PageRange = { offset: request.offset, count, total, next };
    const rows = await this.fromDatabase(execution, asked, request, range);
    return { columns: plan.columns, count, totalRowCount: total, rows };
  }

  /** How many rows match the filters. */
  private async matching(execution: Execution, plan: RowsPlan, request: ResultRequest): Promise<number> {
    if (!plan.filtered) return execution.rowCount ?? 0;
    const { select, params } = plan.count();
    const [count] = await this.files.read(readerOf(request), (session) =>
      session.all<{ n: bigint }>(select, params),
    );
    return Number(count?.n ?? 0);
  }

  /** A small result's rows rendered, read once per (columns, filters, sort) and kept. */
  private async rowSet(execution: Execution, plan: RowsPlan, reader: string): Promise<string[]> {
    const cached = this.rowSets.get(plan.key);
    if (cached) return cached;
    let pending = this.loading.get(plan.key);
    if (!pending) {
      const { select, params } = plan.select({ kind: 'window', offset: 0 });
      pending = this.stored(execution.id)
        .then(() => this.files.read(reader, (session) => session.query(select, params)))
        .then((result) => result.rows.map((row) => row[0] as string))
        .finally(() => this.loading.delete(plan.key));
      this.loading.set(plan.key, pending);
      const rows = await pending;
      this.rowSets.set(plan.key, rows);
      return rows;
    }
    return pending;
  }

  /**
   * A large result's page, written by DuckDB: an unfiltered, unsorted one as a range of row
   * ids (row-id-pages.ts), any other in one statement.
   */
  private async fromDatabase(
    execution: Execution,
    asked: PageAsked,
    request: ResultRequest,
    range: PageRange,
  ): Promise<PageBody> {
    const sampled = request.sampleCount !== undefined;
    if (!sampled && !asked.plan.filtered && !asked.plan.sorted)
      return this.ranges.rows(execution, asked, range);
    const wanted: RowsWanted = sampled
      ? { kind: 'sample', count: range.count }
      : { kind: 'window', offset: range.offset, limit: range.count };
    const written = await this.files.write(
      asked.reader,
      [{ query: asked.plan.select(wanted) }],
      asked.format,
    );
    return written.inMemoryIfAtMost(this.options.inMemoryPageBytes);
  }
}

/** A page or a sample of a small result's rows. */
function cut(all: readonly string[], request: ResultRequest, count: number): readonly string[] {
  if (request.sampleCount !== undefined) return sampleIndices(all.length, count).map((i) => all[i] as string);
  return all.slice(request.offset, request.offset + count);
}
