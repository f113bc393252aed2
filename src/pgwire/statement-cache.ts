import type { SandboxedSql } from '../queries/sandbox/sandbox-sql.js';

/**
 * What the wire keeps between statements for SQL that reads no table. Such SQL means the same
 * for every caller and at every moment (no table is resolved, so no privacy or catalog change
 * can alter the sandbox's answer): its sandboxed form is kept, and when every function it
 * calls is deterministic (DuckDB's `CONSISTENT`: not `now()`, not `random()`), the answer's
 * bytes too. A pool's `SELECT 1` then costs what PostgreSQL's does, not the sandbox and
 * DuckDB's round trips: measured with `npm run bench -- pgwire` (BENCHMARKS.md). Only answers
 * that succeeded are kept, so a refusal is decided again each time.
 *
 * For any SQL it also keeps whether its last result was small (at most SMALL_RESULT_VALUES
 * values): the next run then skips the wrap that makes DuckDB write the columns' text
 * (run-statement.ts, renderingPlan), one prepare saved, and JavaScript writes the few values'
 * text instead. The same text with other parameters is the common case: an application's
 * lookups, a dashboard's refresh. Both ways write the same bytes; a result that turns out
 * large is written the slower way once, and the next run is wrapped again.
 */

/** Texts kept, for each kind. */
const MAX_ENTRIES = 2048;
/** An answer larger than this is not kept. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Bytes of answers kept at most. */
const MAX_ANSWERS_BYTES = 8 * 1024 * 1024;
/** Longer SQL is not looked at for keeping. */
export const MAX_CACHED_SQL = 4096;
/**
 * A result this small is written faster without the text-rendering wrap. Measured through
 * the service with npm `pg` in another process (scratch script, 2026-11-29): the wrap's prepare
 * cost 450–770 µs a statement, and JavaScript writes a double's or a timestamp's text in
 * 0.3–0.8 µs (row-encoding.ts). Skipping it, round trips went from 3.35 to 2.53 ms for
 * `SELECT $1::INTEGER` and from 2.55 to 1.88 ms for one row of a table (medians of 5
 * alternating runs of 1,500).
 */
const SMALL_RESULT_VALUES = 512;

/** A Map used as a least-recently-used cache. */
class Recent<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  set(key: string, value: V): V | undefined {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size <= this.max) return undefined;
    const [oldest, dropped] = this.map.entries().next().value as [string, V];
    this.map.delete(oldest);
    return dropped;
  }
}

export interface SqlShape {
  /** Names no table and reads no table function. */
  tableFree: boolean;
  /** Table-free, and every function it calls gives the same result for the same arguments. */
  constant: boolean;
}

export class StatementCache {
  readonly shapes = new Recent<SqlShape>(MAX_ENTRIES);
  private readonly sandboxed = new Recent<SandboxedSql>(MAX_ENTRIES);
  private readonly answers = new Recent<Buffer>(MAX_ENTRIES);
  private answerBytes = 0;
  private readonly smallResults = new Recent<true>(MAX_ENTRIES);

  /** Whether this SQL's last result, read to its end, was small. */
  resultWasSmall(sql: string): boolean {
    return sql.length <= MAX_CACHED_SQL && this.smallResults.get(sql) === true;
  }

  /** Notes the size of a result read to its end. */
  keepResultSize(sql: string, values: number): void {
    if (sql.length > MAX_CACHED_SQL) return;
    if (values <= SMALL_RESULT_VALUES) this.smallResults.set(sql, true);
    else this.smallResults.delete(sql);
  }

  sandboxedSql(key: string): SandboxedSql | undefined {
    return this.sandboxed.get(key);
  }

  keepSandboxed(key: string, sql: SandboxedSql): void {
    this.sandboxed.set(key, sql);
  }

  answer(sql: string): Buffer | undefined {
    return this.answers.get(sql);
  }

  keepAnswer(sql: string, bytes: Buffer): void {
    if (bytes.length > MAX_ANSWER_BYTES || this.answerBytes + bytes.length > MAX_ANSWERS_BYTES) return;
    if (this.answers.get(sql)) return;
    const copy = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(copy);
    this.answerBytes += copy.length;
    const dropped = this.answers.set(sql, copy);
    if (dropped) this.answerBytes -= dropped.length;
  }
}
