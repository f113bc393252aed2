/**
 * The results' tuning: how much is kept in memory, where pages go to files, how DuckDB's
 * threads share the writing of a page, and what is written ahead. Each figure with what it was
 * measured on. The service passes the first group to ResultRows and Results (tests pass
 * smaller ones); the second is fixed.
 */

const MiB = 1024 * 1024;

/** Results up to this many rows are cut into pages in memory (DESIGN §5's hot path). */
export const IN_MEMORY_RESULT_ROWS = 50_000;
/** Rendered rows of small results held in memory (per columns, filters, sort). */
export const ROW_SET_CACHE_BYTES = 128 * MiB;
/** Ready answers held in memory. */
export const ANSWER_CACHE_BYTES = 64 * MiB;
/**
 * A page of a large result up to this size is kept in memory (and its answer cached); a
 * larger one is sent from the file DuckDB wrote it to, so memory does not grow with pages.
 */
export const IN_MEMORY_PAGE_BYTES = 1 * MiB;
/**
 * A long range of a result (a whole CSV, say) is written in parts of about this size, each
 * sent while DuckDB writes it, at most two on disk at a time (rows-in-parts.ts). Measured on
 * 1,000,000 rows of six columns as one CSV (100 MB; a scratch A/B in one service, load ~1):
 * parts of a row group, two written at a time and each sent once written, 306–380 ms wall and
 * 470–520 ms of DuckDB's CPU; the whole range as one part sent while written, 243–341 ms
 * and 330–370 ms (one statement writes on every thread, and sending starts at its first rows).
 */
export const RESULT_PART_BYTES = 128 * MiB;
/**
 * Large pages kept written ahead of their request, of all requests together (page-prefetch.ts):
 * at most this many at a time, each removed if nobody asks for it within the time.
 */
export const PREFETCHED_PAGES = { maxPages: 8, ttlMs: 30_000 };

/** What the service gives ResultRows, less its temporary folder. */
export const RESULT_ROWS_TUNING = {
  inMemoryMaxRows: IN_MEMORY_RESULT_ROWS,
  cacheBytes: ROW_SET_CACHE_BYTES,
  inMemoryPageBytes: IN_MEMORY_PAGE_BYTES,
  partBytes: RESULT_PART_BYTES,
  prefetch: PREFETCHED_PAGES,
};

/** What the service gives Results, less the datapoint cap and its base URL. */
export const ANSWERS_TUNING = {
  cacheBytes: ANSWER_CACHE_BYTES,
  maxCachedAnswerBytes: 2 * IN_MEMORY_PAGE_BYTES,
};

/**
 * Rows that DuckDB renders on one thread per statement: below this, a page is one statement.
 * DuckDB scans a table with one thread per row group (122,880 rows), so a page inside one
 * row group gets one thread however long it is; two statements over its halves, on two
 * connections, use both cores (41,666 rows of six columns, load average 3: 37 ms as one,
 * 31 ms as two, at best 33 and 19).
 */
export const ROWS_PER_THREAD = 16_384;
/** Statements that write one page at a time (its halves), or parts of a long range. */
export const PAGE_THREADS = 2;
/** DuckDB's row group: a table scan's unit of parallelism. */
export const ROW_GROUP_ROWS = 122_880;
/** A longer range is written in parts (rows-in-parts.ts), each sent while it is written. */
export const LONG_RANGE_ROWS = PAGE_THREADS * ROW_GROUP_ROWS;
/**
 * The pages after a large one that its request starts writing ahead for a client following
 * next_uri, each in one statement, all at once: measured on 24 pages of 41,666 rows (six
 * columns), two pages at once took 550–600 ms and 890–990 ms of CPU, each page in two halves
 * at once 670–730 ms and 1,070–1,160 ms.
 */
export const NEXT_PAGES_WRITTEN_AHEAD = 2;
/**
 * How often a reader looks again at a file being written that has not grown (rows-file.ts):
 * DuckDB writes a part in thousands of writes, each of which would be an inotify event; a
 * look that finds nothing new costs one read.
 */
export const GROWTH_POLL_MS = 2;
/**
 * Parts of a long range started beyond the one being sent: with it, at most two parts on disk
 * (each about RESULT_PART_BYTES, or ROWS_PER_THREAD rows of very wide rows). Two ahead, as
 * before, let three be on disk when the parts were written two at a time (rows over about
 * 550 bytes as JSON make parts under two row groups).
 */
export const PARTS_WRITTEN_AHEAD = 1;
