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

/**
 * What a DuckDB error says was not found, by its first line: a column, a table the query
 * refers to (an alias of its FROM), or a function (or none with these arguments).
 */
export function notFoundIn(message: string): 'column' | 'table' | 'function' | undefined {
  const first = message.split('\n')[0] ?? message;
  if (/^Binder Error: (Referenced column ".*" not found|Table ".*" does not have a column named)/.test(first))
    return 'column';
  if (/^Binder Error: Referenced table ".*" not found/.test(first)) return 'table';
  if (
    /^Catalog Error: [A-Za-z ]*Function with name .* does not exist/.test(first) ||
    /^Binder Error: No function matches the given name and argument types/.test(first)
  )
    return 'function';
  return undefined;
}

/** For a binder reference error, its candidates from the query's own FROM clause: `"amount", "day"`. */
export function binderCandidates(message: string): string | undefined {
  const missing = notFoundIn(message);
  if (missing !== 'column' && missing !== 'table') return undefined;
  return message
    .split('\n')
    .map((line) => CANDIDATES.exec(line.trim()))
    .find((match) => match !== null)?.[2];
}

/** The first line of `error`'s message, and for a binder reference error its candidates: `…; did you mean "amount"?`. */
export function failureWithColumnHint(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n')[0] ?? message;
  const candidates = binderCandidates(message);
  return candidates ? `${first} Did you mean ${candidates}?` : first;
}
