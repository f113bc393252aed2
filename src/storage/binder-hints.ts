/**
 * DuckDB's hint for an unknown column in users' SQL, kept (issue 24, "did you mean"). Beside
 * storage-error.ts, the place that reads DuckDB's wording, so that executions and the wire
 * protocol's errors (pgwire/sql-errors.ts, as the HINT) may use it. An
 * execution's failure shows only the first line of DuckDB's message (executions.ts,
 * `failureMessage`), because catalog errors go on to name other tables, private ones included.
 * The binder's errors for a column or a table alias are different: their candidates come from
 * the query's own FROM clause, which the sandbox has already resolved to tables the caller may
 * read (measured, DuckDB 1.5.6: `SELECT amout FROM alice.t` beside bob's private `amout_x`
 * lists only `"amount"`; docs/library-notes.md). So this keeps that one line and drops the rest.
 */

/** The binder's lines this keeps, after the message's first line. */
const CANDIDATES = /^Candidate (bindings|tables): *:? *(.+)$/;
const BINDER_REFERENCE =
  /^Binder Error: (Referenced column .* not found|Table ".*" does not have a column named|Referenced table ".*" not found)/;

/** For a binder reference error, its candidates from the query's own FROM clause: `"amount", "day"`. */
export function binderCandidates(message: string): string | undefined {
  const lines = message.split('\n');
  if (!BINDER_REFERENCE.test(lines[0] ?? '')) return undefined;
  return lines.map((line) => CANDIDATES.exec(line.trim())).find((match) => match !== null)?.[2];
}

/** The first line of `error`'s message, and for a binder reference error its candidates: `…; did you mean "amount"?`. */
export function failureWithColumnHint(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n')[0] ?? message;
  const candidates = binderCandidates(message);
  return candidates ? `${first} Did you mean ${candidates}?` : first;
}
