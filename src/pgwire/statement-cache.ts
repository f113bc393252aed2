import type { SandboxedSql } from '../queries/sandbox/sandbox-sql.js';

/**
 * What the wire keeps between statements for SQL that reads no table. Such SQL means the same
 * for every caller and at every moment (no table is resolved, so no privacy or catalog change
 * can alter the sandbox's answer): its sandboxed form is kept, and when every function it
 * calls is deterministic (DuckDB's `CONSISTENT`: not `now()`, not `random()`), the answer's
 * bytes too. A pool's `SELECT 1` then costs what PostgreSQL's does, not the sandbox and
 * DuckDB's round trips: measured with `npm run bench -- pgwire` (BENCHMARKS.md). Only answers
 * that succeeded are kept, so a refusal is decided again each time.
 */

/** Texts kept, for each kind. */
const MAX_ENTRIES = 2048;
/** An answer larger than this is not kept. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Bytes of answers kept at most. */
const MAX_ANSWERS_BYTES = 8 * 1024 * 1024;
/** Longer SQL is not looked at for keeping. */
export const MAX_CACHED_SQL = 4096;

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
