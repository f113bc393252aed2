import type { Execution } from '../executions/execution.js';
import { type FileBody, type PageBody, PartsBody } from './page-body.js';
import { PagePrefetch } from './page-prefetch.js';
import type { RowsPlan } from './page-query.js';
import type { PageFormat } from './result-format.js';
import { firstRows, type RowsWriter } from './rows-file.js';
import { RowsInParts } from './rows-in-parts.js';
import {
  LONG_RANGE_ROWS,
  NEXT_PAGES_WRITTEN_AHEAD,
  PAGE_THREADS,
  PARTS_WRITTEN_AHEAD,
  ROW_GROUP_ROWS,
  ROWS_PER_THREAD,
} from './tuning.js';

/**
 * The pages of an unfiltered, unsorted request of a large result: ranges of the snapshot's
 * row ids (page-query.ts says why), whatever their offset, written by DuckDB into files.
 * A long range goes in parts, each sent while it is written; a large page is written in two
 * halves at once, and the pages after it are written ahead for a client following next_uri.
 */

/** One request's rows: what is selected, in what format, for whom. */
export interface PageAsked {
  plan: RowsPlan;
  format: PageFormat;
  /** Whose results work this is: it is shared fairly between keys. */
  reader: string;
}

/** The rows of a page: `offset … offset + count - 1` of `total`. */
export interface PageRange {
  offset: number;
  count: number;
  total: number;
  /**
   * The page size of a client that may follow next_uri (its `limit`, when the page is within
   * the datapoint cap), whose next pages are written ahead once this one turns out large.
   */
  next?: number;
}

/** How a page's range is written: in two halves at once, or in one statement (on DuckDB's workers only). */
type Writing = 'halves' | 'one' | 'one on workers';

export interface RowIdPagesOptions {
  /** A page from DuckDB of at most this many bytes is kept in memory; a larger one is sent from its file. */
  inMemoryPageBytes: number;
  /** A long range is written in parts of about this many bytes each. */
  partBytes: number;
  /** Large pages written ahead of their request at most at a time, and how long one waits for it. */
  prefetch: { maxPages: number; ttlMs: number };
}

export class RowIdPages {
  private readonly ahead: PagePrefetch;

  constructor(
    private readonly files: RowsWriter,
    private readonly options: RowIdPagesOptions,
  ) {
    this.ahead = new PagePrefetch(options.prefetch.maxPages, options.prefetch.ttlMs);
  }

  /** Removes the pages written ahead (at shutdown). */
  close(): Promise<void> {
    return this.ahead.clear();
  }

  async rows(execution: Execution, asked: PageAsked, range: PageRange): Promise<PageBody> {
    if (range.count > LONG_RANGE_ROWS) return this.inParts(execution, asked, range.offset, range.count);
    const key = pageKey(asked, range.offset, range.count);
    const ahead = this.ahead.take(key);
    // A page written ahead was a large page's successor: so are the next ones, most likely.
    if (ahead) this.writeAhead(asked, range);
    const written = (await ahead) ?? (await this.write(asked, range.offset, range.count, 'halves'));
    if (!ahead && written.rowsBytes > this.options.inMemoryPageBytes) this.writeAhead(asked, range);
    return written.inMemoryIfAtMost(this.options.inMemoryPageBytes);
  }

  /**
   * A long range in parts. A part over two row groups is written on every thread by itself;
   * smaller ones two at a time. The first rows are awaited before any byte is sent: a failure
   * before them is still an answer of its own.
   */
  private async inParts(
    execution: Execution,
    asked: PageAsked,
    offset: number,
    count: number,
  ): Promise<PartsBody> {
    const rowsPerPart = partRows(execution, this.options.partBytes);
    const ranges = rowIdParts(offset, count, rowsPerPart);
    const atOnce = rowsPerPart >= 2 * ROW_GROUP_ROWS ? 1 : PAGE_THREADS;
    const parts = new RowsInParts(
      ranges.length,
      (part) => {
        const [from, to] = ranges[part] as [number, number];
        return this.files.start(asked.reader, asked.plan.select({ kind: 'rowIds', from, to }), asked.format);
      },
      atOnce,
      PARTS_WRITTEN_AHEAD,
    );
    try {
      await firstRows(parts.first);
    } catch (error) {
      await parts.discard();
      throw error;
    }
    return new PartsBody(parts, asked.format.separator);
  }

  /**
   * A page in one statement, or (asked for now, nothing written ahead) in two at once.
   * Of two single-task statements at once, one runs on DuckDB's worker threads only
   * (Session.runOnWorkers): the second half of a page, and every other page written ahead.
   */
  private write(asked: PageAsked, offset: number, rows: number, how: Writing): Promise<FileBody> {
    const select = ([from, to]: [number, number]) => asked.plan.select({ kind: 'rowIds', from, to });
    const queries =
      how === 'halves'
        ? rowIdRanges(offset, rows).map((range, i) => ({ query: select(range), onWorkers: i === 1 }))
        : [{ query: select([offset, offset + rows]), onWorkers: how === 'one on workers' }];
    return this.files.write(asked.reader, queries, asked.format);
  }

  /**
   * The next pages, each in one statement, at the same time: DuckDB goes on writing while
   * this page travels and the client reads it.
   */
  private writeAhead(asked: PageAsked, range: PageRange): void {
    const limit = range.next;
    if (limit === undefined) return;
    let offset = range.offset + range.count;
    for (let page = 0; page < NEXT_PAGES_WRITTEN_AHEAD && offset < range.total; page++) {
      const from = offset;
      const rows = Math.min(limit, range.total - from);
      const how = Math.floor(from / limit) % 2 === 1 ? 'one on workers' : 'one';
      this.ahead.start(pageKey(asked, from, rows), () => this.write(asked, from, rows, how));
      offset += rows;
    }
  }
}

const pageKey = (asked: PageAsked, offset: number, rows: number) =>
  `${asked.plan.key}\u0000${offset}\u0000${rows}`;

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

/** A page's row ids `offset … offset + count - 1` as the ranges `[from, to)` its statements write at once. */
export function rowIdRanges(offset: number, count: number): [number, number][] {
  return evenRanges(offset, count, Math.max(1, Math.min(PAGE_THREADS, Math.floor(count / ROWS_PER_THREAD))));
}
