import type { FileBody } from './page-body.js';

/**
 * Large pages written ahead. A client reading a whole result follows `next_uri` page after
 * page, each asked for only once the previous one has arrived (and been parsed): DuckDB would
 * sit idle while a page travels and the client reads it, and the client while DuckDB writes
 * the next. So once a large page is written, the next ones (same execution, columns, format
 * and size, the offsets after it) are written too (row-id-pages.ts decides which), and the
 * request for one takes its files.
 *
 * Bounded: at most `maxPages` pages are ahead at a time (a new one removes the oldest), and a
 * page nobody asks for within `ttlMs` is removed. A page written ahead in vain costs one page's
 * rendering. Refusing new pages while full, as before, let clients that read a page or two
 * and left (six such pages per round of bench/whole-results.ts, its pages at three offsets)
 * stop every later walk's pages for `ttlMs`.
 */

interface Ahead {
  /** Undefined when writing it failed: the request then writes the page itself. */
  rows: Promise<FileBody | undefined>;
  timer: NodeJS.Timeout;
}

export class PagePrefetch {
  private readonly pages = new Map<string, Ahead>();

  constructor(
    private readonly maxPages: number,
    private readonly ttlMs: number,
  ) {}

  /** The page written ahead under `key`, if there is one: from now on it is the caller's. */
  take(key: string): Promise<FileBody | undefined> | undefined {
    const ahead = this.pages.get(key);
    if (!ahead) return undefined;
    this.pages.delete(key);
    clearTimeout(ahead.timer);
    return ahead.rows;
  }

  /** Starts writing a page ahead, unless it is already or too many are. */
  start(key: string, write: () => Promise<FileBody>): void {
    if (this.pages.has(key)) return;
    // Full: the oldest page goes. The newest request is the likeliest to be followed; a page
    // still unasked for was most often left by a client that stopped reading.
    if (this.pages.size >= this.maxPages) void this.drop(this.pages.keys().next().value as string);
    const rows = write().catch(() => undefined);
    const timer = setTimeout(() => this.drop(key), this.ttlMs);
    timer.unref();
    this.pages.set(key, { rows, timer });
  }

  /** How many pages are ahead now. */
  get size(): number {
    return this.pages.size;
  }

  /** Removes every page ahead (at shutdown), once its writing has ended. */
  async clear(): Promise<void> {
    await Promise.all([...this.pages.keys()].map((key) => this.drop(key)));
  }

  private async drop(key: string): Promise<void> {
    const ahead = this.take(key);
    const rows = await ahead;
    await rows?.discard();
  }
}
