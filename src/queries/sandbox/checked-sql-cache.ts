import type { NamedTable } from './table-names.js';
import type { CheckOptions } from './tree-checker.js';

/**
 * Checks already made, for SQL that comes again (issue 27): a saved query run on a schedule or
 * by a dashboard, an analyst re-running a query, a pipeline's nodes. A check's answer follows
 * from its text, its options and what each table it names was resolved to, nothing else: the
 * worker's DuckDB parses and rewrites the same tree the same way every time. So the answer is
 * kept with the tables the check named and what they were resolved to; the same text checked
 * again resolves its tables again (visibility and tables change) and takes the kept answer only
 * when every table resolves as before. Refusals are not kept.
 *
 * Measured (bench/analytics.ts, 2026-11-27): the check of a three-table join took 4–6 ms of its
 * execute call (the worker's parse, walk, rewrite and second parse, and two messages); a kept
 * answer costs the resolution alone. Bounded by entries and by the bytes of text held.
 */

/** A check's answer and what it depended on. */
interface Kept {
  tables: NamedTable[];
  /** What each table resolved to, as compared (JSON). */
  resolved: string;
  checked: string;
  bytes: number;
}

export interface CheckedSqlCacheOptions {
  maxEntries: number;
  maxBytes: number;
}

/** At most 1,000 texts and 16 MB of them (64 KB at most each: MAX_SQL_BYTES). */
const DEFAULTS: CheckedSqlCacheOptions = { maxEntries: 1_000, maxBytes: 16 * 1024 * 1024 };

export class CheckedSqlCache {
  /** In order of last use: the first is the next dropped. */
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;

  constructor(private readonly options: CheckedSqlCacheOptions = DEFAULTS) {}

  /** The key of a text checked with these options. */
  static key(sql: string, options: CheckOptions): string {
    return `${options.parameters ? 'p' : '-'}${sql}`;
  }

  /** The kept check of this key, if any (then most recently used). */
  get(
    key: string,
  ): { tables: NamedTable[]; answerFor: (resolved: unknown) => string | undefined } | undefined {
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    this.kept.delete(key);
    this.kept.set(key, kept);
    return {
      tables: kept.tables,
      answerFor: (resolved) => (JSON.stringify(resolved) === kept.resolved ? kept.checked : undefined),
    };
  }

  /** Keeps a check's answer, dropping the least recently used past the bounds. */
  set(key: string, tables: NamedTable[], resolved: unknown, checked: string): void {
    this.delete(key);
    const bytes = 2 * (key.length + checked.length) + 256 * (tables.length + 1);
    if (bytes > this.options.maxBytes) return;
    this.kept.set(key, { tables, resolved: JSON.stringify(resolved), checked, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.kept) {
      if (this.kept.size <= this.options.maxEntries && this.bytes <= this.options.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  get size(): number {
    return this.kept.size;
  }

  private delete(key: string): void {
    const kept = this.kept.get(key);
    if (!kept) return;
    this.kept.delete(key);
    this.bytes -= kept.bytes;
  }
}
